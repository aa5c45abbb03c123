package report

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
)

// outlierRun is 14 pairs over a 100 ms round trip, h3's handshakes one
// round trip shorter in 13 and 4 ms longer in the one where its handshake
// lost a packet; h3's round trips in flight 200 ms fewer in every pair.
func outlierRun() []results.Trial {
	var out []results.Trial
	for rep := 1; rep <= 14; rep++ {
		r := float64(rep)
		h3Handshake := 100.0
		if rep == 7 {
			h3Handshake = 204
		}
		h2 := partsTrial(factor.H2, rep, [6]float64{100 + r, 50, 200, 600 + 5*r, 0, 40}, results.F(0))
		h3 := partsTrial(factor.H3, rep, [6]float64{100 + r, 50, h3Handshake, 400 + 5*r, 0, 40}, nil)
		h2.RTTMs, h3.RTTMs = 100, 100
		out = append(out, h2, h3)
	}
	return out
}

// TestWhyNamesAPartDespiteOneOutlyingPair: the handshakes part is named
// though one pair's handshake went the other way.
func TestWhyNamesAPartDespiteOneOutlyingPair(t *testing.T) {
	a, err := analysis.Analyze(outlierRun(), analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := shortWhy(a.Comparisons[0])
	want := "Why: h3 spent 2.0 fewer round trips in flight (-200 ms) and one round trip less in handshakes (-100 ms)."
	if got != want {
		t.Errorf("why:\n got %q\nwant %q", got, want)
	}
}

func TestShortAnswerIsShortAndNamesItsParts(t *testing.T) {
	a, err := analysis.Analyze(outlierRun(), analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lines := ShortAnswer(a, []string{"a wire warning that is long enough to need a second line when it is put after the word Warning and an indent"}, "the tables: --details")
	text := strings.Join(lines, "\n")
	if len(lines) > 8 {
		t.Errorf("%d lines, want at most 8:\n%s", len(lines), text)
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > ShortWidth {
			t.Errorf("line of %d columns (> %d): %q", n, ShortWidth, l)
		}
	}
	for _, want := range []string{"Answer for synthetic:1x1KB over n:", "h3 was 29 % faster than h2 (99 % CI 25–30 %)", "over 14 rounds.", "in handshakes", "  Warning: a wire warning", "  the tables: --details"} {
		if !strings.Contains(text, want) {
			t.Errorf("answer lacks %q:\n%s", want, text)
		}
	}
}

func TestWrapKeepsWordsAndIndents(t *testing.T) {
	got := wrap("  Warning: "+strings.Repeat("word ", 30), 40)
	for i, l := range got {
		if utf8.RuneCountInString(l) > 40 {
			t.Errorf("line %d over 40 columns: %q", i, l)
		}
		if i > 0 && !strings.HasPrefix(l, "    word") {
			t.Errorf("line %d not indented under the first: %q", i, l)
		}
	}
	if strings.Join(strings.Fields(strings.Join(got, " ")), " ") != strings.TrimSpace("Warning: "+strings.Repeat("word ", 30)) {
		t.Errorf("wrapping lost or added words: %q", got)
	}
}

// TestShortAnswerWarns: a network that failed its check, failed loads
// and CPU-bound loads each add a warning line, and the answer stays under
// ShortWidth columns.
func TestShortAnswerWarns(t *testing.T) {
	trials := outlierRun()
	trials[0].Status, trials[0].Error = results.StatusFailed, "navigation: net::ERR_TIMED_OUT"
	a, err := analysis.Analyze(trials, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a.Calibration = []analysis.Calibration{{Network: "n", Lines: []analysis.CheckLine{
		{Check: "RTT, idle", Configured: "100.221 ms", Measured: "median 100.304 ms, p99 121.387 ms, 92.9% within ±1 ms", Result: "FAIL"},
		{Check: "loss down", Result: "PASS"}}}}
	lines := ShortAnswer(a, nil, "")
	text := strings.Join(strings.Fields(strings.Join(lines, " ")), " ")
	for _, want := range []string{"Warning: the network failed its check twice (RTT, idle): the answer is of the network as measured (--details).",
		"Warning: 1 of 28 loads failed or were not verified; the numbers are of the others."} {
		if !strings.Contains(text, want) {
			t.Errorf("answer lacks %q:\n%s", want, strings.Join(lines, "\n"))
		}
	}
	for _, l := range lines {
		if utf8.RuneCountInString(l) > ShortWidth {
			t.Errorf("line over %d columns: %q", ShortWidth, l)
		}
	}
}
