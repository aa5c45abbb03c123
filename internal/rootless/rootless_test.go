package rootless

import (
	"os"
	"testing"

	"github.com/quicbench/quicbench/internal/trust"
)

// TestTheVariableAloneIsNotInside: a process in the initial user namespace
// with the marker in its environment (root's shell, a child of a rootless
// run) is not inside, and the marker is not passed on (issue 44, item 6).
func TestTheVariableAloneIsNotInside(t *testing.T) {
	if !trust.InitialUserNamespace() {
		t.Skip("runs in the initial user namespace only")
	}
	t.Setenv(envInside, "1")
	if Inside() {
		t.Error("Inside() believed the variable in the initial user namespace")
	}
	if v, ok := os.LookupEnv(envInside); ok {
		t.Errorf("%s=%s is still in the environment, for children to inherit", envInside, v)
	}
}
