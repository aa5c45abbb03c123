package safefs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOwnCacheDirRefusesWhatOthersCanWriteOrALink: the cache directory
// below the user's is made private; one that others can write, or a
// link at any level, is refused.
func TestOwnCacheDirRefusesWhatOthersCanWriteOrALink(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	dir, err := OwnCacheDir("quicbench/templates")
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 || dir != filepath.Join(cache, "quicbench/templates") {
		t.Fatalf("made %s: %v, %v; want a directory of mode 0700 below the cache", dir, info, err)
	}
	if err := os.Chmod(filepath.Join(cache, "quicbench"), 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := OwnCacheDir("quicbench/templates"); err == nil || !strings.Contains(err.Error(), "can be written by others") {
		t.Errorf("a level others can write: %v, want refused", err)
	}
	os.RemoveAll(filepath.Join(cache, "quicbench"))
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(cache, "quicbench")); err != nil {
		t.Fatal(err)
	}
	if _, err := OwnCacheDir("quicbench/templates"); err == nil {
		t.Error("a link in the cache was followed")
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) > 0 {
		t.Errorf("made %v through the link", entries)
	}
}
