package results

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/quicbench/quicbench/internal/testenv"
)

// olderDatabase is a database as a quicbench before the visual metrics
// made it: one trial, without the columns and the table (samples) added
// since.
func olderDatabase(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Create(path, map[string]string{"spec_sha256": "abc"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddTrial(trial("c1-r1", 1, true), nil, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, col := range []string{"visual", "fcp_ms", "lcp_ms", "fvc_ms", "speed_index", "frames", "viewport_width"} {
		if _, err := db.Exec("ALTER TABLE trials DROP COLUMN " + col); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec("DROP TABLE samples"); err != nil {
		t.Fatal(err)
	}
	return path
}

func trialsOf(t *testing.T, s *Store) []Trial {
	t.Helper()
	var out []Trial
	if err := s.EachTrial(func(tr Trial) error { out = append(out, tr); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOlderDatabaseReadsWithoutChange: read-only, the new columns read as
// NULL or zero and the file keeps its schema.
func TestOlderDatabaseReadsWithoutChange(t *testing.T) {
	path := olderDatabase(t)
	s, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	got := trialsOf(t, s)
	s.Close()
	if len(got) != 1 || got[0].PLT == nil || *got[0].PLT != 812.5 || got[0].Visual || got[0].FCP != nil || got[0].SpeedIndex != nil || got[0].Frames != 0 {
		t.Fatalf("read %+v", got)
	}
	db, _ := sql.Open("sqlite", path)
	defer db.Close()
	if have, err := columnNames(db, "trials"); err != nil || have["fcp_ms"] {
		t.Errorf("a read-only open changed the schema (fcp_ms present: %v, %v)", have["fcp_ms"], err)
	}
	if have, err := columnNames(db, "samples"); err != nil || len(have) != 0 {
		t.Errorf("a read-only open made the samples table (%v, %v)", have, err)
	}
}

// TestOlderDatabaseReadsAndExportsWithoutSamples: read-only, a run made
// before samples were kept has none, and exports an empty samples file.
func TestOlderDatabaseReadsAndExportsWithoutSamples(t *testing.T) {
	s, err := OpenReadOnly(olderDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.SamplesOf("c1-r1"); err != nil || len(got) != 0 {
		t.Errorf("samples of an older run: %v, %v", got, err)
	}
	if err := s.CheckTypes(context.Background()); err != nil {
		t.Errorf("check types of an older run: %v", err)
	}
	if got, err := s.LossesOf("c1-r1"); err != nil || len(got) != 0 {
		t.Errorf("losses of an older run: %v, %v", got, err)
	}
	files, err := s.Export(context.Background(), t.TempDir(), CSV)
	if err != nil || len(files) != 5 {
		t.Fatalf("export of an older run: %v, %v", files, err)
	}
	for _, f := range files[3:] {
		if rows := testenv.ReadCSV(t, f); len(rows) != 1 || rows[0][0] != "trial_id" {
			t.Errorf("%s of an older run exported as %v, want the header alone", f, rows)
		}
	}
}

// TestOlderDatabaseIsUpgradedToContinue: opened to write (a resumed run),
// the columns are added and new trials carry them.
func TestOlderDatabaseIsUpgradedToContinue(t *testing.T) {
	s, err := Open(olderDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	next := trial("c2-r1", 2, true)
	next.Visual, next.SpeedIndex, next.Frames, next.ViewportWidth = true, F(950), 12, 1366
	if err := s.AddTrial(next, nil, nil, Sample{AtMs: 50, QuicbenchCPUMs: 2, DownBytes: 1500}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.SamplesOf("c2-r1"); err != nil || len(got) != 1 || got[0].DownBytes != 1500 {
		t.Errorf("a continued older run's samples: %v, %v", got, err)
	}
	got := trialsOf(t, s)
	if len(got) != 2 || got[0].Visual || got[0].SpeedIndex != nil || !got[1].Visual || *got[1].SpeedIndex != 950 || got[1].Frames != 12 {
		t.Fatalf("read %+v", got)
	}
}
