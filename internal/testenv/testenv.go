// Package testenv lets tests of real namespaces, devices and browsers state
// their prerequisites. A test skips, with the reason, only when a
// prerequisite is truly absent; under CI (CI=true) a missing prerequisite is
// a failure, because CI installs them all. It also compares golden files.
package testenv

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
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

// SharedRecordings returns the directory of the real recordings made by
// others that replay tests read (they are not part of the project): the
// one QUICBENCH_RECORDINGS names, else shared/recordings beside the
// checkout (../shared/recordings from the module's root). It skips t when
// there is none, under CI too: a clone elsewhere has no such directory.
func SharedRecordings(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("QUICBENCH_RECORDINGS")
	if dir == "" {
		root, err := moduleRoot()
		if err != nil {
			t.Skipf("shared recordings: %v", err)
		}
		dir = filepath.Join(root, "..", "shared", "recordings")
	}
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		t.Skipf("no shared recordings at %s: set QUICBENCH_RECORDINGS to the directory of real recordings", dir)
	}
	return dir
}

// moduleRoot is the nearest directory above the working directory that
// holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
