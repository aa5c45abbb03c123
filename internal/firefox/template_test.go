package firefox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestTemplateHoldsNoNetworkState: none of what a browser keeps of the
// network (cache, cookies, HSTS, Alt-Svc, certificate overrides, sessions,
// site storage) or of its preferences goes from the template into a
// profile.
func TestTemplateHoldsNoNetworkState(t *testing.T) {
	for _, name := range []string{"cache2", "cookies.sqlite", "SiteSecurityServiceState.bin", "SiteSecurityServiceState.txt",
		"AlternateServices.bin", "AlternateServices.txt", "cert_override.txt", "sessionstore.jsonlz4", "storage", "prefs.js", "user.js", "hosts"} {
		if slices.Contains(templateEntries(), name) {
			t.Errorf("a profile takes %s from the template", name)
		}
	}
}

// TestCopyEntriesFollowsNoLink copies files and directories of files,
// skips what is missing, and refuses a link at the top or inside a
// directory, or one where a file is to go.
func TestCopyEntriesFollowsNoLink(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(src, "a.db"), []byte("a"), 0o600)
	os.Mkdir(filepath.Join(src, "cache"), 0o700)
	os.WriteFile(filepath.Join(src, "cache", "x.bin"), []byte("x"), 0o600)
	if err := copyEntries(src, dst, []string{"a.db", "cache", "missing"}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "cache", "x.bin")); err != nil || string(b) != "x" {
		t.Errorf("cache/x.bin: %q, %v", b, err)
	}
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("s"), 0o600)
	os.Symlink(secret, filepath.Join(src, "link.db"))
	if err := copyEntries(src, t.TempDir(), []string{"link.db"}); err == nil {
		t.Error("a link was copied")
	}
	os.Symlink(secret, filepath.Join(src, "cache", "y.bin"))
	if err := copyEntries(src, t.TempDir(), []string{"cache"}); err == nil {
		t.Error("a link inside a directory was copied")
	}
	os.Symlink(secret, filepath.Join(dst, "b.db"))
	os.WriteFile(filepath.Join(src, "b.db"), []byte("b"), 0o600)
	if err := copyEntries(src, dst, []string{"b.db"}); err == nil {
		t.Error("a link in the destination was replaced")
	}
	if b, _ := os.ReadFile(secret); string(b) != "s" {
		t.Error("copying onto a link wrote through it")
	}
}
