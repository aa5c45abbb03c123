package safefs

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// TestWorkDirs: a work directory is private to its process, and once the
// process is gone RemoveStaleWorkDirs removes it, leaving a live
// process's, a link and another user's directory alone.
func TestWorkDirs(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	mine, err := NewWorkDir()
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(mine)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("work directory %s: %v, %v; want a 0700 directory", mine, fi.Mode(), err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	tmp := os.TempDir()
	stale := filepath.Join(tmp, workPrefix+strconv.Itoa(dead.Process.Pid)+"-1")
	link := filepath.Join(tmp, workPrefix+strconv.Itoa(dead.Process.Pid)+"-2")
	for _, d := range []string{stale, filepath.Join(stale, "profile-1")} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	victim := t.TempDir()
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	others := ""
	if os.Geteuid() == 0 {
		others = filepath.Join(tmp, workPrefix+strconv.Itoa(dead.Process.Pid)+"-3")
		if err := os.Mkdir(others, 0o700); err != nil {
			t.Fatal(err)
		}
		os.Chown(others, 4242, 4242)
	}
	removed := RemoveStaleWorkDirs()
	if !slices.Equal(removed, []string{stale}) {
		t.Errorf("removed %v, want only %s", removed, stale)
	}
	for _, kept := range []string{mine, link, victim, others} {
		if _, err := os.Lstat(kept); kept != "" && err != nil {
			t.Errorf("%s was removed: %v", kept, err)
		}
	}
}
