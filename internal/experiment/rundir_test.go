package experiment

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/spec"
)

const tinySpec = `name: rundir
repetitions: 1
netcheck: false
client: loader
factors:
  networks: [{rtt: 10ms}]
  pages: [synthetic:1x1KB]
  protocols: [h2]
`

// startedRun makes dir look like a started run of text: its results
// database with the spec's hash and no trials.
func startedRun(t *testing.T, text string) (*spec.Spec, string) {
	t.Helper()
	s, err := spec.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	store, err := results.Create(filepath.Join(dir, results.FileName), map[string]string{"spec_sha256": s.SHA256})
	if err != nil {
		t.Fatal(err)
	}
	store.Close()
	return s, dir
}

// TestNewRunRefusesADirectoryWithFiles: a link planted in the run
// directory (the CA key's name pointing elsewhere) makes a new run refuse
// the directory, and the link's target is untouched.
func TestNewRunRefusesADirectoryWithFiles(t *testing.T) {
	s, err := spec.Parse([]byte(tinySpec))
	if err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("precious"), 0o644)
	dir := t.TempDir()
	os.Symlink(victim, filepath.Join(dir, "ca-key.pem"))
	_, err = Run(context.Background(), RunConfig{Spec: s, Dir: dir})
	var input *InputError
	if !errors.As(err, &input) {
		t.Fatalf("Run into a directory with a planted link: %v, want an InputError", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Fatalf("the link's target changed: %q", b)
	}
}

// TestResumeRefusesALinkedSubdirectory: a resumed run whose testbed/
// directory was replaced by a link writes nothing through it.
func TestResumeRefusesALinkedSubdirectory(t *testing.T) {
	s, dir := startedRun(t, tinySpec)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "testbed")); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), RunConfig{Spec: s, Dir: dir, Resume: true})
	var link *safefs.LinkError
	if !errors.As(err, &link) {
		t.Fatalf("resume with testbed/ a link: %v, want a LinkError", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("written through the link: %v", entries)
	}
}

// TestResumeRefusesALinkedDatabaseJournal: SQLite opens its journals by
// name, so a link in their place is refused before SQLite sees it.
func TestResumeRefusesALinkedDatabaseJournal(t *testing.T) {
	s, dir := startedRun(t, tinySpec)
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("precious"), 0o644)
	os.Remove(filepath.Join(dir, results.FileName+"-wal"))
	if err := os.Symlink(victim, filepath.Join(dir, results.FileName+"-wal")); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), RunConfig{Spec: s, Dir: dir, Resume: true})
	var link *safefs.LinkError
	if !errors.As(err, &link) {
		t.Fatalf("resume with a linked WAL: %v, want a LinkError", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Fatalf("the link's target changed: %q", b)
	}
}

// TestTwoRunsIntoOneDirectory: while one run holds a directory, another
// (here a resume) is refused with the holder's PID, before it opens the
// database.
func TestTwoRunsIntoOneDirectory(t *testing.T) {
	s, dir := startedRun(t, tinySpec)
	unlock, err := safefs.Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	_, err = Run(context.Background(), RunConfig{Spec: s, Dir: dir, Resume: true})
	var held *safefs.HeldError
	var input *InputError
	if !errors.As(err, &held) || held.PID != os.Getpid() || !errors.As(err, &input) {
		t.Fatalf("a second run: %v, want an InputError naming pid %d", err, os.Getpid())
	}
}

// TestAResumedRunNotesTheFactsThatChanged: a run resumed by another build
// keeps the facts it started with and notes each changed one once, at the
// resume's time; a later resume notes only what changed since the last
// note, and one that changes nothing adds nothing.
func TestAResumedRunNotesTheFactsThatChanged(t *testing.T) {
	dir := t.TempDir()
	started := map[string]string{"quicbench_version": "aaa", "chromium_version": "142", "kernel": "Linux 6.1"}
	store, err := results.Create(filepath.Join(dir, results.FileName), started)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	day := time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)
	resumes := []struct {
		facts map[string]string
		want  map[string]string // the notes this resume adds
	}{
		{map[string]string{"quicbench_version": "bbb", "chromium_version": "142", "kernel": "Linux 6.1"},
			map[string]string{"resumed 2026-11-30T17:00:00Z: quicbench_version": "bbb"}},
		{map[string]string{"quicbench_version": "bbb", "chromium_version": "143", "kernel": "Linux 6.1"},
			map[string]string{"resumed 2026-12-01T17:00:00Z: chromium_version": "143"}},
		{map[string]string{"quicbench_version": "bbb", "chromium_version": "143", "kernel": "Linux 6.1"}, nil},
		{map[string]string{"quicbench_version": "aaa", "chromium_version": "143", "kernel": "Linux 6.1", "firefox_version": "140"},
			map[string]string{"resumed 2026-12-03T17:00:00Z: quicbench_version": "aaa", "resumed 2026-12-03T17:00:00Z: firefox_version": "140"}},
	}
	for i, r := range resumes {
		before, err := store.Facts()
		if err != nil {
			t.Fatal(err)
		}
		if err := noteChangedFacts(r.facts, store, day.AddDate(0, 0, i)); err != nil {
			t.Fatal(err)
		}
		after, err := store.Facts()
		if err != nil {
			t.Fatal(err)
		}
		added := map[string]string{}
		for k, v := range after {
			if _, ok := before[k]; !ok {
				added[k] = v
			}
		}
		if len(added) != len(r.want) {
			t.Fatalf("resume %d added %v, want %v", i, added, r.want)
		}
		for k, v := range r.want {
			if added[k] != v {
				t.Errorf("resume %d: %q = %q, want %q", i, k, added[k], v)
			}
		}
		for k, v := range started {
			if after[k] != v {
				t.Errorf("resume %d changed the started fact %s to %q", i, k, after[k])
			}
		}
	}
}
