// Package testenv lets tests of real namespaces, devices and browsers state
// their prerequisites. A test skips, with the reason, only when a
// prerequisite is truly absent; under CI (CI=true) a missing prerequisite is
// a failure, because CI installs them all. It also compares golden files.
package testenv

import (
	"os"
	"os/exec"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// RequireRoot skips or fails t unless it runs as root with /dev/net/tun.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		missing(t, "needs root (namespaces and TUN devices)")
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		missing(t, "needs /dev/net/tun (modprobe tun)")
	}
	RequireCommand(t, "ip")
}

// RequireCommand skips or fails t unless name is on PATH.
func RequireCommand(t testing.TB, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		missing(t, "needs the command "+name+" (make test installs it)")
	}
}

// RequireFile skips or fails t unless path exists.
func RequireFile(t testing.TB, path, hint string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		missing(t, "needs "+path+" ("+hint+")")
	}
}

func missing(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("prerequisite missing under CI: %s", reason)
	}
	t.Skip(reason)
}

// Golden compares got with the golden file at path, or rewrites the file
// when update is set (the -update flag of the package's tests).
func Golden(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to write it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("output differs from %s (-want +got):\n%s", path, diff)
	}
}
