package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
)

// TestTheAnswerSaysHowLossWaitsDiffer: h2's loads waited 40–49 ms for
// lost data and held bytes for 30–39 ms behind missing segments, h3's
// 10–19 ms: the answer names both medians and the head-of-line wait;
// when the waits cannot be told apart, or some load lacks one, it says
// nothing of them.
func TestTheAnswerSaysHowLossWaitsDiffer(t *testing.T) {
	ramp := func(from float64) []float64 {
		out := make([]float64, 10)
		for i := range out {
			out[i] = from + float64(i)
		}
		return out
	}
	c := analysis.Comparison{
		Baseline: analysis.Sample{Protocol: factor.H2, Values: ramp(500), LossWaits: ramp(40), Held: ramp(30)},
		Compare:  analysis.Sample{Protocol: factor.H3, Values: ramp(450), LossWaits: ramp(10)},
	}
	got := lossShare(c)
	for _, want := range []string{"14.5 ms for h3 against 44.5 ms for h2", "-30.0 ms", "behind a missing TCP segment for 34.5 ms"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	c.Compare.LossWaits = ramp(40)
	if got := lossShare(c); got != "" {
		t.Errorf("equal waits: %q, want nothing", got)
	}
	c.Compare.LossWaits = ramp(10)[:9]
	if got := lossShare(c); got != "" {
		t.Errorf("a load without its wait: %q, want nothing", got)
	}
}

// TestStallsTable: loads that recorded their waits for lost data get the
// table that sets the protocols' waits side by side, with h2's bytes held
// behind missing segments and "-" for h3, which holds none.
func TestStallsTable(t *testing.T) {
	var trials []results.Trial
	for rep := 1; rep <= 5; rep++ {
		for _, p := range []struct {
			proto factor.Protocol
			plt   float64
			st    results.Stalls
		}{{"h2", 900, results.Stalls{LossWaitMs: results.F(120), HeldMs: results.F(80)}}, {"h3", 700, results.Stalls{LossWaitMs: results.F(30)}}} {
			trials = append(trials, results.Trial{ID: "t", Rep: int64(rep),
				Levels:  results.Levels{Network: "n", Page: "synthetic:1x1KB", Origins: 1, Protocol: p.proto, Visit: "first"},
				Outcome: results.Outcome{Status: results.StatusOK}, Metrics: results.Metrics{PLT: results.F(p.plt + float64(rep))}, Stalls: p.st})
		}
	}
	a, err := analysis.Analyze(trials, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	WriteText(&out, Page{Name: "run"}, a)
	for _, want := range []string{"Waits for lost data (from", "120.0 30.0 -90.0 80.0 -"} {
		if !strings.Contains(strings.Join(strings.Fields(out.String()), " "), want) {
			t.Errorf("text lacks %q:\n%s", want, out.String())
		}
	}
}
