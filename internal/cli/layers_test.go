package cli

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestCLIOnlyConfiguresAndPrints: the command line turns flags into
// configurations and prints; it drives no browser, namespace, emulator or
// testbed itself (experiment, recording, shell and netcheck do), checked
// on its direct imports.
func TestCLIOnlyConfiguresAndPrints(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	imports := strings.Fields(string(out))
	for _, forbidden := range []string{"chromium", "firefox", "netns", "emulator", "testbed"} {
		if slices.Contains(imports, "github.com/quicbench/quicbench/internal/"+forbidden) {
			t.Errorf("cli imports %s", forbidden)
		}
	}
	if !slices.Contains(imports, "github.com/quicbench/quicbench/internal/experiment") {
		t.Errorf("the guard reads no imports: %v", imports) // the check itself works
	}
}
