package analysis

import (
	"math/rand/v2"
	"testing"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/stats"
)

// twoProtocols are n loads each of h2 and h3 in one setting, h3's times
// scaled by ratio, with lognormal noise of sd spread; paired marks the
// loads as started from their repetition's link seeds.
func twoProtocols(rng *rand.Rand, n int, ratio, spread float64, paired bool) []results.Trial {
	var out []results.Trial
	for rep := 1; rep <= n; rep++ {
		base := 1000 * (1 + spread*rng.NormFloat64())
		for _, p := range []struct {
			proto factor.Protocol
			scale float64
		}{{factor.H2, 1}, {factor.H3, ratio}} {
			v := base * p.scale * (1 + 0.3*spread*rng.NormFloat64())
			tr := results.Trial{ID: string(p.proto), Rep: int64(rep),
				Levels:  results.Levels{Network: "n", Page: "synthetic:1x1KB", Origins: 1, Protocol: p.proto, Visit: "first"},
				Outcome: results.Outcome{Status: results.StatusOK}, Metrics: results.Metrics{PLT: results.F(v)}}
			tr.Paired = paired
			out = append(out, tr)
		}
	}
	return out
}

// TestTheVerdictAndItsIntervalAgree: over random runs, paired and not, of
// 3 to 20 loads a protocol and ratios from 0.8 to 1.1, an interval that
// excludes 1 always stands beside faster or slower on its side, and one
// that holds 1 beside no difference or too few loads.
func TestTheVerdictAndItsIntervalAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	decided := 0
	for trial := range 300 {
		paired := trial%2 == 0
		trials := twoProtocols(rng, 3+rng.IntN(18), 0.8+0.1*float64(trial%4), 0.1, paired)
		a, err := Analyze(trials, Options{})
		if err != nil {
			t.Fatal(err)
		}
		c := a.Comparisons[0]
		excludes := c.IntervalOK && (c.RatioHi < 1 || c.RatioLo > 1)
		switch {
		case c.Level != 0.99:
			t.Fatalf("level %v, want 0.99 beside α = 0.01", c.Level)
		case (c.Verdict == stats.Faster) != (excludes && c.RatioHi < 1), (c.Verdict == stats.Slower) != (excludes && c.RatioLo > 1):
			t.Fatalf("paired %v, %d loads: verdict %s beside %.3f [%.3f, %.3f] (interval %v), p %.4g", paired, len(trials)/2, c.Verdict, c.Estimate, c.RatioLo, c.RatioHi, c.IntervalOK, c.Test.P)
		case paired != (c.Paired != nil), paired && c.Test.Name != "wilcoxon-signed-rank":
			t.Fatalf("paired %v: the verdict read %s", paired, c.Test.Name)
		}
		if excludes {
			decided++
		}
	}
	if decided < 60 {
		t.Errorf("only %d of 300 runs decided: the ratios are too close to 1 to test agreement", decided)
	}
}

// TestTooFewPairsSayHowManyTheyNeed: with 5 paired rounds the Wilcoxon
// test cannot reach p < 0.01 (its least p is 1/16), so the verdict is too
// few loads, with the 8 rounds it needs; 5 unpaired loads each can
// (Mann–Whitney's least p is 2/252).
func TestTooFewPairsSayHowManyTheyNeed(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	a, err := Analyze(twoProtocols(rng, 5, 0.7, 0.02, true), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := a.Comparisons[0]; c.Verdict != stats.TooFewSamples || c.NeedLoads != 8 || c.IntervalOK {
		t.Errorf("5 pairs: verdict %s, needs %d, interval %v; want too few, 8, none", c.Verdict, c.NeedLoads, c.IntervalOK)
	}
	if a, err = Analyze(twoProtocols(rng, 5, 0.7, 0.02, false), Options{}); err != nil {
		t.Fatal(err)
	}
	if c := a.Comparisons[0]; c.Verdict != stats.Faster || c.NeedLoads != 0 {
		t.Errorf("5 loads each, unpaired, h3 30 %% faster: verdict %s, needs %d; want faster", c.Verdict, c.NeedLoads)
	}
}
