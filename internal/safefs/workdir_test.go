package safefs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
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

// TestRemoveInRemovesTheLinkNotItsTarget: RemoveIn of a link removes the
// link; of a directory or a path, nothing.
func TestRemoveInRemovesTheLinkNotItsTarget(t *testing.T) {
	v := victim(t)
	base := t.TempDir()
	if err := os.Symlink(v, filepath.Join(base, "figure.svg")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(base, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := RemoveIn(base, "figure.svg"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(base, "figure.svg")); err == nil {
		t.Error("the link is still there")
	}
	assertUntouched(t, v)
	if err := RemoveIn(base, "sub"); err == nil {
		t.Error("RemoveIn removed a directory")
	}
	if err := RemoveIn(base, "../x"); err == nil {
		t.Error("RemoveIn took a path out of its directory")
	}
	if err := RemoveIn(base, "absent"); err != nil {
		t.Errorf("a missing name: %v", err)
	}
}

// TestAStaleDirectoryIsRemovedWhileAFileAppearsInIt: a directory that a
// dying browser still writes into for a while (files appearing as it is
// removed) is removed once the writing stops, within the tries given.
func TestAStaleDirectoryIsRemovedWhileAFileAppearsInIt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "profile")
	if err := os.MkdirAll(filepath.Join(dir, "GPUCache"), 0o700); err != nil {
		t.Fatal(err)
	}
	stop := time.Now().Add(300 * time.Millisecond)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; time.Now().Before(stop); i++ {
			os.Mkdir(filepath.Join(dir, "GPUCache"), 0o700) // never dir itself
			os.WriteFile(filepath.Join(dir, "GPUCache", fmt.Sprintf("data_%d", i)), []byte("x"), 0o600)
		}
	}()
	err := removeAllSettled(dir, 50, 20*time.Millisecond)
	<-done
	if err != nil {
		t.Fatalf("not removed: %v", err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is still there (%v)", dir, err)
	}
}
