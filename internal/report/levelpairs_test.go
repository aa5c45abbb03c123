package report

import (
	"math"
	"testing"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/stats"
)

// TestLevelPairsCompareStacks: the fake run's tcp+ makes h2 10 % faster
// and leaves h3 alone; each network, page and protocol gets one pair,
// tcp+ against tcp, and the verdicts say so.
func TestLevelPairsCompareStacks(t *testing.T) {
	a, err := analysis.Analyze(fakeTrials(), analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.LevelPairs) != 8 {
		t.Fatalf("%d level pairs, want 8 (2 networks × 2 pages × 2 protocols)", len(a.LevelPairs))
	}
	for _, p := range a.LevelPairs {
		if p.Factor != factor.IDStack || p.Earlier != "tcp" || p.Later != "tcp+" || p.Setting.Of(factor.IDStack) != "" {
			t.Errorf("pair %s %s/%s in %v", p.FactorName(), p.Later, p.Earlier, p.Setting)
		}
		proto := p.Baseline.Protocol
		switch {
		case proto == factor.H2 && (p.Verdict != stats.Faster || math.Abs(p.Ratio-0.9) > 0.03):
			t.Errorf("h2 on %s %s: ratio %.3f, %s; want about 0.9, faster", p.Setting.Network(), p.Setting.Page(), p.Ratio, p.Verdict)
		case proto == factor.H3 && p.Verdict == stats.Faster:
			t.Errorf("h3 on %s %s: tcp+ faster (ratio %.3f) where it changes nothing", p.Setting.Network(), p.Setting.Page(), p.Ratio)
		}
	}
}
