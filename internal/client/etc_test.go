package client

import (
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBindEtcShowsTheFilesToTheCommandAlone: a command wrapped by BindEtc
// reads the bound files at their /etc paths; the files outside keep
// theirs. It needs root (a mount namespace).
func TestBindEtcShowsTheFilesToTheCommandAlone(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a mount namespace")
	}
	dir := t.TempDir()
	binds, err := ResolverFiles(dir, netip.MustParseAddr("198.19.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/cat", "/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf")
	if err := BindEtc(cmd, binds); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if want := "nameserver 198.19.0.1\n127.0.0.1\tlocalhost\n::1\tlocalhost\nhosts: files dns\n"; string(out) != want {
		t.Errorf("the command read %q, want %q", out, want)
	}
	if own, _ := os.ReadFile("/etc/resolv.conf"); strings.Contains(string(own), "198.19.0.1") {
		t.Error("the machine's own resolv.conf changed")
	}
	if err := BindEtc(exec.Command("/bin/true"), map[string]string{"/tmp/x": filepath.Join(dir, "hosts")}); err == nil {
		t.Error("a bind outside /etc was accepted")
	}
}
