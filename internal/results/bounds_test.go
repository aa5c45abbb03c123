package results

import (
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestValuesBeyondTheirBoundsAreRefused: a database edited to hold a PLT or
// a sample's time near the largest float (round four: the report panicked
// or drew for minutes), or a rate beyond any link, is refused when read,
// naming the column; values within bounds read as they were.
func TestValuesBeyondTheirBoundsAreRefused(t *testing.T) {
	for _, tc := range []struct {
		table, column string
		value         float64
	}{
		{"trials", "plt_ms", 1e308},
		{"trials", "plt_ms", -2e9},
		{"samples", "at_ms", 1e308},
		{"resources", "response_end_ms", 1e10},
		{"trials", "loss_up_pct", 1e300},
	} {
		path := filepath.Join(t.TempDir(), FileName)
		s, err := Create(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		res := []Resource{{URL: "https://a/1.png", Protocol: "h3", StartMs: 1, ResponseEndMs: 2, Status: 200}}
		if err := s.AddTrial(trial("c1-r1", 1, true), res, nil, Sample{AtMs: 50, QuicbenchCPUMs: 1}); err != nil {
			t.Fatal(err)
		}
		if err := s.EachTrial(func(Trial) error { return nil }); err != nil {
			t.Fatalf("a sound database: %v", err)
		}
		s.Close()
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`UPDATE `+tc.table+` SET `+tc.column+` = ?`, tc.value); err != nil {
			t.Fatal(err)
		}
		db.Close()
		s, err = OpenReadOnly(path)
		if err != nil {
			t.Fatal(err)
		}
		read := map[string]func() error{
			"trials":    func() error { return s.EachTrial(func(Trial) error { return nil }) },
			"samples":   func() error { _, err := s.SamplesOf("c1-r1"); return err },
			"resources": func() error { _, err := s.ResourcesOf("c1-r1"); return err },
		}[tc.table]
		err = read()
		var bounds *OutOfBoundsError
		if !errors.As(err, &bounds) || bounds.Column != tc.column || !strings.Contains(err.Error(), "edited or damaged") {
			t.Errorf("%s.%s = %g: %v, want it refused naming the column", tc.table, tc.column, tc.value, err)
		}
		s.Close()
	}
}
