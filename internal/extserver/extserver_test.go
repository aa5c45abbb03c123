package extserver

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestALogTailHandsOverEachCompleteLineOnce: lines written between reads
// come once each, in order; a line without its line break waits for the
// read after it is finished; a log not there yet has none.
func TestALogTailHandsOverEachCompleteLineOnce(t *testing.T) {
	dir := t.TempDir()
	tail := LogTail{Dir: dir, Name: "access.log"}
	var got []string
	read := func() { tail.Read(func(line string) { got = append(got, line) }) }
	read()
	if len(got) != 0 {
		t.Fatalf("a missing log gave lines %q", got)
	}
	f, err := os.OpenFile(filepath.Join(dir, "access.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString("one\ntwo\nthr")
	read()
	f.WriteString("ee\n")
	read()
	read()
	if want := []string{"one\n", "two\n", "three\n"}; !slices.Equal(got, want) {
		t.Errorf("lines %q, want %q", got, want)
	}
}

// TestALogTailSkipsWhatAnEarlierProcessWrote: a tail that skips what is
// written hands over only the lines that come after; skipping a missing
// log skips nothing.
func TestALogTailSkipsWhatAnEarlierProcessWrote(t *testing.T) {
	dir := t.TempDir()
	missing := LogTail{Dir: dir, Name: "access.log"}
	missing.SkipWritten()
	if err := os.WriteFile(filepath.Join(dir, "access.log"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tail := LogTail{Dir: dir, Name: "access.log"}
	tail.SkipWritten()
	f, err := os.OpenFile(filepath.Join(dir, "access.log"), os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString("new\n")
	for name, lt := range map[string]*LogTail{"skipped": &tail, "skipped while missing": &missing} {
		var got []string
		lt.Read(func(line string) { got = append(got, line) })
		want := []string{"new\n"}
		if name == "skipped while missing" {
			want = []string{"old\n", "new\n"}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: lines %q, want %q", name, got, want)
		}
	}
}

// TestAMissingProgramSaysHowToInstallIt: a program that is not there is
// named with its path and the command that installs it.
func TestAMissingProgramSaysHowToInstallIt(t *testing.T) {
	_, err := CheckInstalled("nginx", filepath.Join(t.TempDir(), "nginx"), "'make nginx'")
	if err == nil || !strings.HasPrefix(err.Error(), "nginx not found at ") || !strings.HasSuffix(err.Error(), "install it with 'make nginx'") {
		t.Errorf("error %v, want nginx not found … install it with 'make nginx'", err)
	}
}
