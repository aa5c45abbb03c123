package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRepetitionsForReachesItsPower simulates studies of the size
// RepetitionsFor gives — lognormal loads whose medians differ by the ratio —
// and checks that Mann–Whitney U at α = 0.01 finds the difference in about
// the asked-for share of them (80 %), not far more or less.
func TestRepetitionsForReachesItsPower(t *testing.T) {
	for _, c := range []struct{ sdLog, ratio float64 }{{0.10, 1.05}, {0.25, 1.20}, {0.05, 1.03}} {
		n := RepetitionsFor(c.sdLog, c.ratio, Alpha, 0.8)
		rng := rand.New(rand.NewPCG(uint64(n), 7))
		const studies = 1000
		found := 0
		for range studies {
			x, y := make([]float64, n), make([]float64, n)
			for i := range n {
				x[i] = 1000 * math.Exp(c.sdLog*rng.NormFloat64())
				y[i] = 1000 * c.ratio * math.Exp(c.sdLog*rng.NormFloat64())
			}
			if MannWhitney(y, x).P < Alpha {
				found++
			}
		}
		power := float64(found) / studies
		t.Logf("σ %.2f, ratio %.2f: n %d per protocol, simulated power %.3f", c.sdLog, c.ratio, n, power)
		if power < 0.75 || power > 0.90 {
			t.Errorf("σ %.2f, ratio %.2f: n %d gives power %.3f, want about 0.8", c.sdLog, c.ratio, n, power)
		}
	}
}

func TestRepetitionsForEdges(t *testing.T) {
	if n := RepetitionsFor(0.1, 1, Alpha, 0.8); n != 0 {
		t.Errorf("no effect: %d", n)
	}
	if n := RepetitionsFor(0.001, 2, Alpha, 0.8); n != MinRepetitionsForAlpha {
		t.Errorf("a huge effect: %d, want the minimum %d", n, MinRepetitionsForAlpha)
	}
	if n, m := RepetitionsFor(0.1, 1.05, Alpha, 0.8), RepetitionsFor(0.1, 1/1.05, Alpha, 0.8); n != m {
		t.Errorf("faster and slower by the same ratio need %d and %d", n, m)
	}
	if sd := PooledLogSD([]float64{1, math.E}, []float64{1, math.E}); math.Abs(sd-math.Sqrt(0.5)) > 1e-12 {
		t.Errorf("pooled log SD %v", sd)
	}
	if !math.IsNaN(PooledLogSD([]float64{1}, []float64{1, 2})) || !math.IsNaN(PooledLogSD([]float64{0, 1}, []float64{1, 2})) {
		t.Error("a pooled SD from one value or a zero")
	}
}

// TestPairsFor: the paired plan against the normal formula, its floor at
// the pairs the signed-rank test needs for α, and a wider spread or a
// smaller effect needing more pairs; pairs sharing a large link effect
// need far fewer rounds than unpaired loads of the same spread.
func TestPairsFor(t *testing.T) {
	// σ 0.2, ratio 0.9: ⌈(0.2·(2.576+0.842)/0.1054)² / 0.955⌉ + 1 = ⌈44.07⌉ + 1 = 46.
	if n := PairsFor(0.2, 0.9, 0.01, 0.8); n != 46 {
		t.Errorf("PairsFor(0.2, 0.9) = %d, want 46", n)
	}
	if n := PairsFor(0.01, 0.5, 0.01, 0.8); n != PairsToReach(0.01) {
		t.Errorf("a huge effect needs %d pairs, want the floor %d", n, PairsToReach(0.01))
	}
	if PairsFor(0.3, 0.9, 0.01, 0.8) <= PairsFor(0.2, 0.9, 0.01, 0.8) || PairsFor(0.2, 0.95, 0.01, 0.8) <= PairsFor(0.2, 0.9, 0.01, 0.8) {
		t.Error("more spread or less effect did not need more pairs")
	}
	if PairsFor(0.2, 1, 0.01, 0.8) != 0 || PairsFor(0, 0.9, 0.01, 0.8) != 0 {
		t.Error("no effect or no spread should give 0")
	}
	if sd := LogRatioSD([]float64{2, 4}, []float64{1, 1}); math.Abs(sd-math.Log(2)/math.Sqrt2) > 1e-12 {
		t.Errorf("LogRatioSD = %g, want ln 2/√2", sd)
	}
	if !math.IsNaN(LogRatioSD([]float64{1}, []float64{1})) {
		t.Error("one pair has no spread")
	}
}
