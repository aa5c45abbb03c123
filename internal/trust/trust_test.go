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
	if got, err := Executable(good); err != nil || got != good {
		t.Errorf("root's program: %q, %v", got, err)
	}
	wantUntrusted(t, executableErr(program(t, filepath.Join(base, "owned"), 0o755, stranger)), "belongs to uid 4242")
	wantUntrusted(t, executableErr(program(t, filepath.Join(base, "writable"), 0o777, 0)), "can be written by other users")
	wantUntrusted(t, executableErr(program(t, filepath.Join(base, "plain"), 0o644, 0)), "not executable")
	theirs := mkdir(t, filepath.Join(base, "theirs"), 0o755, stranger)
	wantUntrusted(t, executableErr(program(t, filepath.Join(theirs, "tool"), 0o755, 0)), theirs)
}

// executableErr is Executable's error alone.
func executableErr(path string) error {
	_, err := Executable(path)
	return err
}

// dirOrParentErr is DirOrParent's error alone.
func dirOrParentErr(path string) error {
	_, err := DirOrParent(path)
	return err
}

// TestDotDotAfterALinkIsTheKernels is the round-four attack: a stranger's
// link L in a directory everyone can write, and a path "L/../../usr/bin/env"
// whose text, cleaned, names root's program while the kernel, following L
// first, runs the stranger's. The check must walk L as the kernel does.
func TestDotDotAfterALinkIsTheKernels(t *testing.T) {
	base := rootTree(t)
	sticky := mkdir(t, filepath.Join(base, "sticky"), os.ModeSticky|0o777, 0)
	// root's program where the cleaned text points: base/usr/bin/env.
	mkdir(t, filepath.Join(base, "usr"), 0o755, 0)
	mkdir(t, filepath.Join(base, "usr", "bin"), 0o755, 0)
	program(t, filepath.Join(base, "usr", "bin", "env"), 0o755, 0)
	// the stranger's tree: home/evil/a, and home/usr/bin/env of theirs.
	home := mkdir(t, filepath.Join(base, "home"), 0o755, stranger)
	mkdir(t, filepath.Join(home, "evil"), 0o755, stranger)
	mkdir(t, filepath.Join(home, "evil", "a"), 0o755, stranger)
	mkdir(t, filepath.Join(home, "usr"), 0o755, stranger)
	mkdir(t, filepath.Join(home, "usr", "bin"), 0o755, stranger)
	program(t, filepath.Join(home, "usr", "bin", "env"), 0o755, stranger)
	link := filepath.Join(sticky, "L")
	if err := os.Symlink(filepath.Join(home, "evil", "a"), link); err != nil {
		t.Fatal(err)
	}
	give(t, link, 0o777, stranger)
	t.Chdir(sticky)
	for _, path := range []string{"L/../../usr/bin/env", link + "/../../usr/bin/env"} {
		got, err := Executable(path)
		if err == nil {
			t.Errorf("Executable(%q) = %q: the kernel runs %s/usr/bin/env, the stranger's", path, got, home)
			continue
		}
		wantUntrusted(t, err, link)
		if _, err := LookPath(path); err == nil {
			t.Errorf("LookPath(%q) passed", path)
		}
	}
	// The same trick for a directory root would make: compare --out L/../runx.
	for _, path := range []string{"L/../runx", link + "/../runx/deeper"} {
		if err := dirOrParentErr(path); err == nil {
			t.Errorf("DirOrParent(%q) passed: root would make it in %s", path, home)
		} else {
			wantUntrusted(t, err, link)
		}
	}
}

// TestResolvedIsWhatTheKernelOpens: a link of root's followed by ".." is
// resolved physically, and the path handed back is the one checked.
func TestResolvedIsWhatTheKernelOpens(t *testing.T) {
	base := rootTree(t)
	deep := mkdir(t, filepath.Join(base, "deep"), 0o755, 0)
	mkdir(t, filepath.Join(deep, "a"), 0o755, 0)
	want := program(t, filepath.Join(deep, "tool"), 0o755, 0)
	program(t, filepath.Join(base, "tool"), 0o755, stranger) // where the cleaned text points
	if err := os.Symlink(filepath.Join(deep, "a"), filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	got, err := Executable(filepath.Join(base, "link") + "/../tool")
	if err != nil || got != want {
		t.Fatalf("Executable(link/../tool) = %q, %v; want %s", got, err, want)
	}
	dir, err := DirOrParent(filepath.Join(base, "link") + "/../new/run")
	if err != nil || dir != filepath.Join(deep, "new", "run") {
		t.Fatalf("DirOrParent(link/../new/run) = %q, %v; want %s", dir, err, filepath.Join(deep, "new", "run"))
	}
	if err := dirOrParentErr(base + "/absent/../x"); err == nil {
		t.Error("DirOrParent of absent/../x passed: the kernel resolves no '..' below a missing directory")
	}
}

func TestMapsOneOrdinaryUID(t *testing.T) {
	for text, want := range map[string]bool{
		"         0       1000          1\n": true,
		"0 0 1\n":                            false, // root's own unshare -r
		"         0          0          1\n": false,
		"0 0 4294967295\n":                   false,
		"0 100000 65536\n":                   false,
		"0 1000 1\n1 100000 65536\n":         false,
		"":                                   false,
	} {
		if got := mapsOneOrdinaryUID(text); got != want {
			t.Errorf("mapsOneOrdinaryUID(%q) = %v, want %v", text, got, want)
		}
	}
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
		if err := dirOrParentErr(path); err != nil {
			t.Errorf("%s, to be made: %v", path, err)
		}
	}
	wantUntrusted(t, dirOrParentErr(filepath.Join(open, "new")), "has no sticky bit")
	wantUntrusted(t, dirOrParentErr(filepath.Join(theirs, "new")), "uid 4242")
	wantUntrusted(t, dirOrParentErr(theirs), "uid 4242")
	wantUntrusted(t, dirOrParentErr(sticky), "can be written by other users")
}
