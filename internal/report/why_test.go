package report

import (
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
)

// partsTrial is a paired load of repetition rep whose parts are link,
// loss, handshakes, round trips, servers and client, ms, its PLT their
// sum; held is its time behind missing TCP segments (nil over h3).
func partsTrial(proto factor.Protocol, rep int, parts [6]float64, held *float64) results.Trial {
	plt := 0.0
	for _, v := range parts {
		plt += v
	}
	tr := results.Trial{ID: string(proto) + "-" + string(rune('a'+rep)), Rep: int64(rep),
		Levels:  results.Levels{Network: "n", Page: "synthetic:1x1KB", Origins: 1, Protocol: proto, Visit: "first"},
		Outcome: results.Outcome{Status: results.StatusOK}, Metrics: results.Metrics{PLT: results.F(plt)},
		Stalls: results.Stalls{LossWaitMs: results.F(parts[1]), HeldMs: held},
		Parts: results.Parts{PartLinkMs: results.F(parts[0]), PartLossMs: results.F(parts[1]), PartHandshakeMs: results.F(parts[2]),
			PartRoundTripsMs: results.F(parts[3]), PartServerMs: results.F(parts[4]), PartClientMs: results.F(parts[5])}}
	tr.Paired = true
	return tr
}

// partsRun is pairs of h2 and h3 loads: h3's handshakes 100 ms shorter
// and its loss recovery about 50 ms shorter, h2's bytes held behind
// missing segments 60 ms; link, round trips and the rest alike in a pair.
func partsRun(pairs int) []results.Trial {
	var out []results.Trial
	for rep := 1; rep <= pairs; rep++ {
		r := float64(rep)
		rt := 300 + 3*r
		out = append(out, partsTrial(factor.H2, rep, [6]float64{100, 80 + r, 200, rt, 0, 10}, results.F(60+r)),
			partsTrial(factor.H3, rep, [6]float64{100, 30, 100, rt, 0, 10}, nil))
	}
	return out
}

func TestTheAnswerSaysWhy(t *testing.T) {
	a, err := analysis.Analyze(partsRun(8), analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := whyWords(a.Comparisons[0])
	for _, want := range []string{"over 8 pairs, the parts' 95 % sign-test intervals): of -154.5 ms,", "loss recovery -54.5 ms", "handshakes -100.0 ms [-100.0, -100.0]",
		"head-of-line blocking: bytes held behind a missing TCP segment -64.5 ms", "the rest, 0.0 ms"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "round trips") || strings.Contains(got, "the link") {
		t.Errorf("%q names parts that did not differ", got)
	}
}

func TestTooFewPairsGiveEstimatesOnly(t *testing.T) {
	a, err := analysis.Analyze(partsRun(5), analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := whyWords(a.Comparisons[0])
	for _, want := range []string{"over 5 pairs, too few for 95 % intervals, so no part is called measurable", "handshakes -100.0 ms", "round trips 0.0 ms"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	answer := Answer(a)[0]
	for _, want := range []string{"too few loads to tell apart at α = 0.01: the paired test needs 8 rounds, this run has 5", "too few loads for a 99 % interval", "Wilcoxon signed-rank over 5 pairs p = 0.062"} {
		if !strings.Contains(answer, want) {
			t.Errorf("answer %q lacks %q", answer, want)
		}
	}
}

// TestNoWhyWithoutEveryLoadsParts: a load without parts, or a metric
// other than the PLT they take apart, leaves the answer without a why.
func TestNoWhyWithoutEveryLoadsParts(t *testing.T) {
	trials := partsRun(8)
	trials[3].Parts = results.Parts{}
	a, err := analysis.Analyze(trials, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := whyWords(a.Comparisons[0]); got != "" {
		t.Errorf("a load without parts: %q", got)
	}
	trials = partsRun(8)
	for i := range trials {
		trials[i].DCL = results.F(50)
	}
	if a, err = analysis.Analyze(trials, analysis.Options{Metric: "dcl"}); err != nil {
		t.Fatal(err)
	}
	if got := whyWords(a.Comparisons[0]); got != "" {
		t.Errorf("DCL: %q", got)
	}
}
