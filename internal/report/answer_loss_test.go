package report

import (
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/factor"
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
