package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/quicbench/quicbench/internal/experiment"
	"github.com/quicbench/quicbench/internal/report"
	"github.com/quicbench/quicbench/internal/results"
)

// The run in testdata/demo is a `make demo` of 2026-11-29 (commit
// 23f606d, this machine): 11 rounds of h1, h2 and h3 at 100 ms, 1 % loss,
// 10/5 Mbit/s, decided by the until rule; h3's handshakes took one round
// trip less than h2's in every pair.

// TestDemoAnswerIsShortAndNamesHandshakes: the answer compare prints for
// the demo's loads is at most 8 lines under 100 columns, and names the
// handshakes among the parts that carry h3's lead.
func TestDemoAnswerIsShortAndNamesHandshakes(t *testing.T) {
	dir := copyTestRun(t, filepath.Join("testdata", "demo"))
	store, err := results.OpenReadOnly(filepath.Join(dir, results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	rec, err := store.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	r, err := compareOf("runs/compare-20261129-135524", &experiment.RunResult{Recorded: rec, Elapsed: 110 * time.Second}, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(r.Short, "\n")
	t.Logf("the demo's answer:\n%s", text)
	if len(r.Short) > 8 {
		t.Errorf("%d lines, want at most 8", len(r.Short))
	}
	for _, l := range r.Short {
		if n := utf8.RuneCountInString(l); n >= 100 {
			t.Errorf("a line of %d columns: %q", n, l)
		}
	}
	for _, want := range []string{"h3 was 28 % faster than h2 (99 % CI 14–52 %), decided after 11 rounds.", "h3 was 33 % faster than h1",
		"one round trip less in handshakes (-101 ms)", "runs/compare-20261129-135524"} {
		if !strings.Contains(strings.Join(strings.Fields(text), " "), want) {
			t.Errorf("the answer lacks %q", want)
		}
	}
	if report.ShortWidth >= 100 {
		t.Errorf("ShortWidth %d: the answer's lines must stay under 100 columns", report.ShortWidth)
	}
}
