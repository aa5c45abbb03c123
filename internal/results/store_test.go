package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func trial(id string, seq int, ok bool) Trial {
	t := Trial{ID: id, Seq: seq, Rep: 1, Network: "n", Page: "synthetic:1x1KB", Origins: 1, Stack: "tcp", Server: "go",
		Protocol: "h3", Visit: "first", Client: "chromium", Status: StatusOK, Attempts: 1,
		StartedAt: time.Unix(1_800_000_000, 0), FinishedAt: time.Unix(1_800_000_001, 5)}
	if ok {
		t.PLT, t.DCL, t.TTFB, t.OnLoad = F(812.5), F(300), F(210), F(811)
	} else {
		t.Status, t.Attempts, t.Error = StatusFailed, 3, "timed out"
	}
	return t
}

func TestTrialsRoundTripAndResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Create(path, map[string]string{"spec_sha256": "abc"})
	if err != nil {
		t.Fatal(err)
	}
	res := []Resource{{URL: "https://a/1.png", Protocol: "h3", StartMs: 1, ResponseEndMs: 2, TransferBytes: 1100, Status: 200}}
	if err := s.AddTrial(trial("c1-r1", 1, true), res); err != nil {
		t.Fatal(err)
	}
	if err := s.AddTrial(trial("c2-r1", 2, false), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.AddTrial(trial("c1-r1", 3, true), nil); err == nil {
		t.Error("a trial was recorded twice")
	}
	if err := s.AddAttempt(Attempt{TrialID: "c2-r1", Attempt: 1, Error: "timed out", StartedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	if _, err := Create(path, nil); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Errorf("Create over an existing database: %v", err)
	}
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, _ := s.Meta("spec_sha256"); v != "abc" {
		t.Errorf("meta %q", v)
	}
	done, err := s.Done()
	if err != nil || len(done) != 2 || !done["c1-r1"] || !done["c2-r1"] {
		t.Errorf("done %v, %v", done, err)
	}
	if total, failed, err := s.Counts(); total != 2 || failed != 1 || err != nil {
		t.Errorf("counts %d, %d, %v", total, failed, err)
	}
	var got []Trial
	s.EachTrial(func(t Trial) error { got = append(got, t); return nil })
	if len(got) != 2 || got[0].PLT != F(812.5) || got[1].PLT.Valid || got[1].Error != "timed out" || !got[0].FinishedAt.Equal(time.Unix(1_800_000_001, 5)) {
		t.Errorf("read back %+v", got)
	}
	var resources []Resource
	s.EachResource(func(r Resource) error { resources = append(resources, r); return nil })
	if len(resources) != 1 || resources[0].TrialID != "c1-r1" || resources[0].TransferBytes != 1100 {
		t.Errorf("resources %+v", resources)
	}
}

func TestLockedAndBadFiles(t *testing.T) {
	busyTimeoutMs = 100
	defer func() { busyTimeoutMs = 5000 }()
	path := filepath.Join(t.TempDir(), FileName)
	a, err := Create(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tx, err := a.db.Begin() // holds the write lock
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`INSERT INTO meta (key, value) VALUES ('x', 'y')`); err != nil {
		t.Fatal(err)
	}
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.AddTrial(trial("c1-r1", 1, true), nil); err == nil || !strings.Contains(err.Error(), "locked by another process") {
		t.Errorf("write while another process writes: %v", err)
	}

	junk := filepath.Join(t.TempDir(), "junk.db")
	os.WriteFile(junk, []byte(strings.Repeat("not sqlite ", 100)), 0o644)
	if s, err := Open(junk); err == nil || !strings.Contains(err.Error(), "is not a results database") {
		if s != nil {
			s.Close()
		}
		t.Errorf("open junk: %v", err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "none.db")); err == nil || !strings.Contains(err.Error(), "no results database") {
		t.Errorf("open missing: %v", err)
	}
}
