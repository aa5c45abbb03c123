package trust

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// helperEnv names the program the helper process checks, inside a user
// namespace the test made.
const helperEnv = "QUICBENCH_TRUST_HELPER_PATH"

// TestHelperCheckInNamespace is not a test of its own: run by
// TestContainerNamespaceJudgesOwners inside a user namespace, it prints
// what Executable says of the program named in its environment.
func TestHelperCheckInNamespace(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("a helper run inside a user namespace by TestContainerNamespaceJudgesOwners")
	}
	_, err := Executable(path)
	if err == nil {
		os.Stdout.WriteString("VERDICT trusted\n")
		return
	}
	os.Stdout.WriteString("VERDICT " + err.Error() + "\n")
}

// TestContainerNamespaceJudgesOwners: in a user namespace that maps many
// users (a container's), another user's program is still refused, and so
// it is in one that maps root's uid alone (root's own `unshare -r`, where
// the stranger's program shows as the overflow uid), while in one that maps
// an ordinary user's uid alone (a rootless run) ownership is not judged.
func TestContainerNamespaceJudgesOwners(t *testing.T) {
	base := rootTree(t)
	theirs := program(t, filepath.Join(base, "chromium"), 0o755, stranger)
	mine := program(t, filepath.Join(base, "mine"), 0o755, 0)
	many := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 65536}}
	rootsOne := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}}
	one := []syscall.SysProcIDMap{{ContainerID: 0, HostID: stranger + 1, Size: 1}}
	if got := checkInNamespace(t, theirs, many); !strings.Contains(got, "belongs to uid 4242") {
		t.Errorf("a stranger's program in a namespace mapping 65536 users: %q, want it refused as uid 4242's", got)
	}
	if got := checkInNamespace(t, mine, many); got != "trusted" {
		t.Errorf("root's program in a namespace mapping 65536 users: %q", got)
	}
	if got := checkInNamespace(t, theirs, rootsOne); !strings.Contains(got, "belongs to uid 65534") {
		t.Errorf("root's unshare -r (uid 0 mapped alone): %q, want the stranger's program refused as the overflow uid's", got)
	}
	if got := checkInNamespace(t, theirs, one); got != "trusted" {
		t.Errorf("a one-uid namespace (rootless): %q, want ownership not judged", got)
	}
}

// checkInNamespace runs this test binary's helper in a new user namespace
// with uid and gid maps idMap and returns its verdict on path.
func checkInNamespace(t *testing.T, path string, idMap []syscall.SysProcIDMap) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperCheckInNamespace$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER, UidMappings: idMap, GidMappings: idMap}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper in a user namespace: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "VERDICT "); ok {
			return v
		}
	}
	t.Fatalf("helper said no verdict:\n%s", out)
	return ""
}
