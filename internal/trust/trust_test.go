package trust

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/testenv"
)

// stranger is a uid no test runs as: another user of a shared machine.
const stranger = 4242

// rootTree is a directory of root's, 0755, for the cases below.
func rootTree(t *testing.T) string {
	t.Helper()
	testenv.RequireRoot(t)
	if !InitialUserNamespace() {
		t.Skip("ownership is judged only in the initial user namespace")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// mkdir makes the directory path with mode, owned by uid.
func mkdir(t *testing.T, path string, mode os.FileMode, uid int) string {
	t.Helper()
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	return give(t, path, mode, uid)
}

// program writes a shell script at path with mode, owned by uid.
func program(t *testing.T, path string, mode os.FileMode, uid int) string {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\nid\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return give(t, path, mode, uid)
}

// give sets path's mode and owner.
func give(t *testing.T, path string, mode os.FileMode, uid int) string {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(path, uid, uid); err != nil {
		t.Fatal(err)
	}
	return path
}

func wantUntrusted(t *testing.T, err error, mention string) {
	t.Helper()
	if !IsUntrusted(err) {
		t.Fatalf("got %v, want it refused as untrusted", err)
	}
	if !strings.Contains(err.Error(), mention) {
		t.Fatalf("%q does not name %q", err, mention)
	}
}

func TestDirs(t *testing.T) {
	base := rootTree(t)
	own := mkdir(t, filepath.Join(base, "own"), 0o755, 0)
	theirs := mkdir(t, filepath.Join(base, "theirs"), 0o755, stranger)
	open := mkdir(t, filepath.Join(base, "open"), 0o777, 0)
	sticky := mkdir(t, filepath.Join(base, "sticky"), os.ModeSticky|0o777, 0)
	mine := mkdir(t, filepath.Join(sticky, "mine"), 0o700, 0)
	planted := mkdir(t, filepath.Join(sticky, "planted"), 0o755, stranger)
	below := mkdir(t, filepath.Join(open, "below"), 0o755, 0)
	if err := Dir(own); err != nil {
		t.Errorf("root's own directory: %v", err)
	}
	if err := Dir(mine); err != nil {
		t.Errorf("root's directory in a sticky one: %v", err)
	}
	wantUntrusted(t, Dir(theirs), "uid 4242")
	wantUntrusted(t, Dir(filepath.Join(theirs)), theirs)
	wantUntrusted(t, Dir(open), "can be written by other users")
	wantUntrusted(t, Dir(sticky), "can be written by other users")
	wantUntrusted(t, Dir(below), open+" can be written by other users and has no sticky bit")
	wantUntrusted(t, Dir(planted), "uid 4242")
}

func TestLinks(t *testing.T) {
	base := rootTree(t)
	theirs := mkdir(t, filepath.Join(base, "theirs"), 0o755, stranger)
	sticky := mkdir(t, filepath.Join(base, "sticky"), os.ModeSticky|0o777, 0)
	own := mkdir(t, filepath.Join(base, "own"), 0o755, 0)
	// root's link into another user's directory: the target is judged.
	if err := os.Symlink(theirs, filepath.Join(base, "to-theirs")); err != nil {
		t.Fatal(err)
	}
	wantUntrusted(t, Dir(filepath.Join(base, "to-theirs")), theirs)
	// a stranger's link in a sticky directory to root's: they could swap it.
	link := filepath.Join(sticky, "to-own")
	if err := os.Symlink(own, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, stranger, stranger); err != nil {
		t.Fatal(err)
	}
	wantUntrusted(t, Dir(link), link)
	// root's relative link to root's directory: fine.
	if err := os.Symlink("../own", filepath.Join(base, "sticky", "rel")); err != nil {
		t.Fatal(err)
	}
	if err := Dir(filepath.Join(sticky, "rel")); err != nil {
		t.Errorf("root's relative link to root's directory: %v", err)
	}
	if err := os.Symlink("loop", filepath.Join(own, "loop")); err != nil {
		t.Fatal(err)
	}
	if err := Dir(filepath.Join(own, "loop")); err == nil || !strings.Contains(err.Error(), "too many levels") {
		t.Errorf("a link to itself: %v, want a loop", err)
	}
}

func TestExecutables(t *testing.T) {
	base := rootTree(t)
	good := program(t, filepath.Join(base, "good"), 0o755, 0)
	if err := Executable(good); err != nil {
		t.Errorf("root's program: %v", err)
	}
	wantUntrusted(t, Executable(program(t, filepath.Join(base, "owned"), 0o755, stranger)), "belongs to uid 4242")
	wantUntrusted(t, Executable(program(t, filepath.Join(base, "writable"), 0o777, 0)), "can be written by other users")
	wantUntrusted(t, Executable(program(t, filepath.Join(base, "plain"), 0o644, 0)), "not executable")
	theirs := mkdir(t, filepath.Join(base, "theirs"), 0o755, stranger)
	wantUntrusted(t, Executable(program(t, filepath.Join(theirs, "tool"), 0o755, 0)), theirs)
}

func TestLookPathPassesOverOthersDirectories(t *testing.T) {
	base := rootTree(t)
	open := mkdir(t, filepath.Join(base, "open"), 0o777, 0)
	theirs := mkdir(t, filepath.Join(base, "theirs"), 0o755, stranger)
	good := mkdir(t, filepath.Join(base, "good"), 0o755, 0)
	program(t, filepath.Join(open, "tool"), 0o755, 0)
	program(t, filepath.Join(theirs, "tool"), 0o755, stranger)
	want := program(t, filepath.Join(good, "tool"), 0o755, 0)
	t.Setenv("PATH", strings.Join([]string{"", ".", open, theirs, good}, ":"))
	t.Chdir(theirs)
	got, err := LookPath("tool")
	if err != nil || got != want {
		t.Fatalf("LookPath: %q, %v; want %s", got, err, want)
	}
	t.Setenv("PATH", strings.Join([]string{open, theirs}, ":"))
	if _, err := LookPath("tool"); err == nil || !strings.Contains(err.Error(), "only where another user can change it") {
		t.Fatalf("LookPath with only others' directories: %v", err)
	}
	t.Setenv("PATH", good)
	if _, err := LookPath("absent"); err == nil || !strings.Contains(err.Error(), "executable file not found") {
		t.Fatalf("LookPath of a missing name: %v", err)
	}
}

func TestDirOrParent(t *testing.T) {
	base := rootTree(t)
	sticky := mkdir(t, filepath.Join(base, "sticky"), os.ModeSticky|0o777, 0)
	open := mkdir(t, filepath.Join(base, "open"), 0o777, 0)
	theirs := mkdir(t, filepath.Join(base, "theirs"), 0o755, stranger)
	for _, path := range []string{filepath.Join(sticky, "new", "run"), filepath.Join(base, "new")} {
		if err := DirOrParent(path); err != nil {
			t.Errorf("%s, to be made: %v", path, err)
		}
	}
	wantUntrusted(t, DirOrParent(filepath.Join(open, "new")), "has no sticky bit")
	wantUntrusted(t, DirOrParent(filepath.Join(theirs, "new")), "uid 4242")
	wantUntrusted(t, DirOrParent(theirs), "uid 4242")
	wantUntrusted(t, DirOrParent(sticky), "can be written by other users")
}
