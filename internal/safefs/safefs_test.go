package safefs

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/quicbench/quicbench/internal/testenv"
)

// victim is a file outside the base directory that links point at.
func victim(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(path, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func assertUntouched(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "precious" {
		t.Fatalf("victim %s changed: %q, %v", path, b, err)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o644 {
		t.Fatalf("victim's mode changed to %v", fi.Mode().Perm())
	}
}

func TestLinkAtFileIsRefused(t *testing.T) {
	v := victim(t)
	base := t.TempDir()
	if err := os.Symlink(v, filepath.Join(base, "ca-key.pem")); err != nil {
		t.Fatal(err)
	}
	err := WriteFile(base, "ca-key.pem", []byte("key"), 0o600)
	var le *LinkError
	if !errors.As(err, &le) {
		t.Fatalf("WriteFile through a link: %v, want a LinkError", err)
	}
	assertUntouched(t, v)
	err = WriteAtomic(base, "ca-key.pem", 0o600, func(w io.Writer) error { _, err := w.Write([]byte("key")); return err })
	if !errors.As(err, &le) {
		t.Fatalf("WriteAtomic through a link: %v, want a LinkError", err)
	}
	assertUntouched(t, v)
}

func TestLinkedDirectoryIsRefused(t *testing.T) {
	outside := t.TempDir()
	base := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(base, "testbed")); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"WriteFile":   WriteFile(base, "testbed/nginx/nginx.conf", []byte("x"), 0o644),
		"MkdirAll":    MkdirAll(base, "testbed/nginx", 0o755),
		"CheckNoLink": CheckNoLinks(base, "testbed/results.db"),
	} {
		var le *LinkError
		if !errors.As(err, &le) || le.Path != filepath.Join(base, "testbed") {
			t.Errorf("%s below a linked directory: %v, want a LinkError naming it", name, err)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("something was written through the link: %v", entries)
	}
}

func TestHardLinkedFileIsReplacedNotWritten(t *testing.T) {
	v := victim(t)
	base := t.TempDir()
	name := filepath.Join(base, "spec.yaml")
	if err := os.Link(v, name); err != nil {
		t.Skipf("hard link across temporary directories: %v", err)
	}
	if err := WriteFile(base, "spec.yaml", []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	assertUntouched(t, v)
	if b, _ := os.ReadFile(name); string(b) != "new" {
		t.Fatalf("spec.yaml = %q, want the new content", b)
	}
}

func TestModeHoldsWhateverTheUmask(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	base := t.TempDir()
	if err := WriteFile(base, "a/key.pem", []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(base, "b.csv", 0o644, func(io.Writer) error { return nil }); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]os.FileMode{"a/key.pem": 0o600, "b.csv": 0o644} {
		fi, err := os.Stat(filepath.Join(base, name))
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %v", name, fi.Mode().Perm(), err, want)
		}
	}
}

func TestWriteAtomicLeavesNothingOnFailure(t *testing.T) {
	base := t.TempDir()
	boom := errors.New("boom")
	err := WriteAtomic(base, "trials.csv", 0o644, func(w io.Writer) error {
		w.Write([]byte("half"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the writer's", err)
	}
	if entries, _ := os.ReadDir(base); len(entries) != 0 {
		t.Fatalf("a failed write left %v", entries)
	}
}

func TestFIFOIsRefusedNotOpened(t *testing.T) {
	base := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(base, "loads.pcap"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Create(base, "loads.pcap", 0o644)
	var ne *NotRegularError
	if !errors.As(err, &ne) {
		t.Fatalf("Create over a FIFO: %v, want a NotRegularError", err)
	}
}

func TestPathsOutsideTheBaseAreRefused(t *testing.T) {
	for _, rel := range []string{"../x", "/etc/passwd", ".", "a/../../x"} {
		if err := WriteFile(t.TempDir(), rel, nil, 0o644); err == nil {
			t.Errorf("WriteFile(%q) succeeded", rel)
		}
	}
}

func TestLockIsExclusiveAndNamesTheHolder(t *testing.T) {
	dir := t.TempDir()
	unlock, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Lock(dir) // another open file description: flock conflicts
	var held *HeldError
	if !errors.As(err, &held) || held.PID != os.Getpid() {
		t.Fatalf("second Lock: %v, want a HeldError naming pid %d", err, os.Getpid())
	}
	unlock()
	unlock2, err := Lock(dir)
	if err != nil {
		t.Fatalf("Lock after unlock: %v", err)
	}
	unlock2()
}

func TestLockRefusesALinkedLockFile(t *testing.T) {
	v := victim(t)
	dir := t.TempDir()
	if err := os.Symlink(v, filepath.Join(dir, LockFile)); err != nil {
		t.Fatal(err)
	}
	_, err := Lock(dir)
	var le *LinkError
	if !errors.As(err, &le) {
		t.Fatalf("Lock through a link: %v, want a LinkError", err)
	}
	assertUntouched(t, v)
}

func TestReadRegularRefusesFIFOsDirectoriesAndLargeFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	os.WriteFile(big, make([]byte, 100), 0o644)
	for path, want := range map[string]string{fifo: "is not a regular file (a FIFO)", dir: "(a directory)", big: "larger than 99 bytes", "/dev/zero": "(a device)"} {
		if _, err := ReadRegular(path, 99); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadRegular(%s): %v, want %q", path, err, want)
		}
	}
	if b, err := ReadRegular(big, 100); err != nil || len(b) != 100 {
		t.Errorf("a file at the limit: %d bytes, %v", len(b), err)
	}
}

// TestReadInFollowsNoLink: a file and a directory below the base that are
// links are refused; a regular file is read.
func TestReadInFollowsNoLink(t *testing.T) {
	base, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o600)
	os.MkdirAll(filepath.Join(base, "d"), 0o755)
	os.WriteFile(filepath.Join(base, "d", "ok"), []byte("frame"), 0o644)
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(base, "d", "link"))
	os.Symlink(outside, filepath.Join(base, "linked"))
	if data, err := ReadIn(base, "d/ok", 100); err != nil || string(data) != "frame" {
		t.Errorf("regular file: %q, %v", data, err)
	}
	var le *LinkError
	for _, rel := range []string{"d/link", "linked/secret"} {
		if data, err := ReadIn(base, rel, 100); !errors.As(err, &le) || data != nil {
			t.Errorf("%s: read %q, error %v; want a LinkError", rel, data, err)
		}
	}
	if _, err := ListIn(base, "linked"); !errors.As(err, &le) {
		t.Errorf("listing a linked directory: %v", err)
	}
	if names, err := ListIn(base, "d"); err != nil || len(names) != 2 {
		t.Errorf("listing: %v, %v", names, err)
	}
	if _, err := ReadIn(base, "d/ok", 2); err == nil {
		t.Error("a file above the limit was read")
	}
}

// TestPruneInFollowsNoLink: a directory to prune that was swapped for a
// link to a victim's directory is refused, and the victim's files stay;
// in a real directory only the chosen files go.
func TestPruneInFollowsNoLink(t *testing.T) {
	base, victim := t.TempDir(), t.TempDir()
	for _, name := range []string{"a", "b"} {
		if err := os.WriteFile(filepath.Join(victim, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(victim, filepath.Join(base, "bodies")); err != nil {
		t.Fatal(err)
	}
	err := PruneIn(base, "bodies", func(string) bool { return true })
	var link *LinkError
	if !errors.As(err, &link) {
		t.Errorf("PruneIn of a linked directory: %v, want a LinkError", err)
	}
	if entries, _ := os.ReadDir(victim); len(entries) != 2 {
		t.Fatalf("the victim's directory holds %d files, want its 2", len(entries))
	}
	os.Remove(filepath.Join(base, "bodies"))
	if err := os.CopyFS(filepath.Join(base, "bodies"), os.DirFS(victim)); err != nil {
		t.Fatal(err)
	}
	if err := PruneIn(base, "bodies", func(name string) bool { return name == "a" }); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(testenv.DirNames(t, filepath.Join(base, "bodies")), " "); got != "b" {
		t.Errorf("after pruning a: %q, want b", got)
	}
	if err := PruneIn(base, "absent", func(string) bool { return true }); err != nil {
		t.Errorf("a missing directory: %v", err)
	}
}

// TestReadRegularFollowsTheOwnershipRule: as root, a file the user named
// that another user owns, or that sits in a directory another user owns,
// is refused before it is read (spec, trace, CA and HAR readers all go
// through ReadRegular or OpenRegular); root's own file is read.
func TestReadRegularFollowsTheOwnershipRule(t *testing.T) {
	testenv.RequireRoot(t)
	dir := t.TempDir()
	theirs := filepath.Join(dir, "theirs")
	os.Mkdir(theirs, 0o755)
	for _, p := range []string{filepath.Join(dir, "their.yaml"), filepath.Join(theirs, "root.yaml"), filepath.Join(dir, "mine.yaml")} {
		if err := os.WriteFile(p, []byte("name: x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Chown(filepath.Join(dir, "their.yaml"), 4242, 4242)
	os.Chown(theirs, 4242, 4242)
	for _, p := range []string{filepath.Join(dir, "their.yaml"), filepath.Join(theirs, "root.yaml")} {
		if _, err := ReadRegular(p, 100); err == nil || !strings.Contains(err.Error(), "uid 4242") {
			t.Errorf("ReadRegular(%s): %v, want it refused as uid 4242's", filepath.Base(p), err)
		}
	}
	if data, err := ReadRegular(filepath.Join(dir, "mine.yaml"), 100); err != nil || string(data) != "name: x\n" {
		t.Errorf("root's own file: %q, %v", data, err)
	}
}
