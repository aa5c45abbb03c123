package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The expected values below were computed independently with SciPy 1.17.1
// (scipy.stats.ttest_ind(equal_var=False), mannwhitneyu, f_oneway); the
// samples are textbook examples (Welch: Wikipedia's "Welch's t-test"
// examples; ANOVA: Wikipedia's "One-way analysis of variance" example).

func relNear(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

func TestWelch(t *testing.T) {
	for _, c := range []struct {
		x, y     []float64
		t, df, p float64
	}{
		{[]float64{27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4},
			[]float64{27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4},
			-2.455356398286006, 24.988529290231416, 0.021378001462866992},
		{[]float64{17.2, 20.9, 22.6, 18.1, 21.7, 21.4, 23.5, 24.2, 14.7, 21.8},
			[]float64{21.5, 22.8, 21.0, 23.0, 21.6, 23.6, 22.5, 20.7, 23.4, 21.8, 20.7, 21.7, 21.5, 22.5, 23.6, 21.5, 22.5, 23.5, 21.5, 21.8},
			-1.5654335235985037, 9.904741248650831, 0.14884169660532817},
	} {
		got := Welch(c.x, c.y)
		if !got.OK || !relNear(got.Statistic, c.t, 1e-9) || !relNear(got.DF, c.df, 1e-9) || !relNear(got.P, c.p, 1e-7) {
			t.Errorf("Welch = %+v, want t %v, df %v, p %v", got, c.t, c.df, c.p)
		}
	}
	if got := Welch([]float64{1}, []float64{1, 2}); got.OK || !math.IsNaN(got.P) {
		t.Errorf("one value: %+v", got)
	}
}

func TestMannWhitney(t *testing.T) {
	x := []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30}
	y := []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}
	// y has ties (1.06, 1.29): the normal approximation.
	if got := MannWhitney(x, y); !got.OK || got.Statistic != 58 || !relNear(got.P, 0.13291945818531892, 1e-9) {
		t.Errorf("with ties: %+v, want U 58, p 0.13291945818531892", got)
	}
	// Without ties: exact.
	y2 := []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.07, 3.14, 1.28}
	if got := MannWhitney(x, y2); !got.OK || got.Statistic != 58 || !relNear(got.P, 0.13591114767585355, 1e-12) {
		t.Errorf("exact: %+v, want U 58, p 0.13591114767585355", got)
	}
	t1 := []float64{3, 5, 5, 7, 8, 8, 9, 10, 12, 12}
	t2 := []float64{1, 2, 4, 5, 5, 6, 7, 7, 8, 9, 11}
	if got := MannWhitney(t1, t2); got.Statistic != 75.5 || !relNear(got.P, 0.1563096802074224, 1e-9) {
		t.Errorf("many ties: %+v, want U 75.5, p 0.1563096802074224", got)
	}
}

// TestExactMannWhitneySmall checks the exact distribution by hand: with
// n1 = n2 = 2 the 6 arrangements give U = 0, 1, 2, 2, 3, 4.
func TestExactMannWhitneySmall(t *testing.T) {
	for u, want := range map[float64]float64{0: 2.0 / 6, 1: 4.0 / 6, 2: 1, 4: 2.0 / 6} {
		if got := exactMannWhitneyP(u, 2, 2); !relNear(got, want, 1e-12) {
			t.Errorf("U = %v: p %v, want %v", u, got, want)
		}
	}
}

func TestANOVA(t *testing.T) {
	got := ANOVA([]float64{6, 8, 4, 5, 3, 4}, []float64{8, 12, 9, 11, 6, 8}, []float64{13, 9, 11, 8, 7, 12})
	if !got.OK || !relNear(got.Statistic, 9.264705882352942, 1e-12) || got.DF != 2 || got.DF2 != 15 || !relNear(got.P, 0.0023987773293929083, 1e-9) {
		t.Errorf("ANOVA = %+v, want F 9.2647, df 2 and 15, p 0.0023988", got)
	}
	if got := ANOVA([]float64{1, 2}); got.OK {
		t.Errorf("one group: %+v", got)
	}
}

func TestComparisonMeasures(t *testing.T) {
	q, tcp := []float64{800, 900, 1000}, []float64{1000, 1100, 1500}
	if d := DiffOfMeans(q, tcp); d != -300 {
		t.Errorf("Diff = %v, want 900 − 1200 = −300", d)
	}
	if r := RatioOfMedians(q, tcp); r != 900.0/1100 {
		t.Errorf("ratio = %v, want 900/1100", r)
	}
	if g := Gain(q, tcp); g != -0.25 {
		t.Errorf("gain = %v, want −300/1200", g)
	}
}

// TestBootstrapCoverage: over many normal samples, the 95% interval of
// the median covers the true median about 95% of the time.
func TestBootstrapCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	covered := 0
	const trials = 300
	for i := range trials {
		xs := make([]float64, 60)
		for j := range xs {
			xs[j] = 100 + 10*rng.NormFloat64()
		}
		lo, hi := BootstrapMedianCI(xs, 0.95, 1000, uint64(i))
		if lo > hi {
			t.Fatalf("lo %v > hi %v", lo, hi)
		}
		if lo <= 100 && 100 <= hi {
			covered++
		}
	}
	if rate := float64(covered) / trials; rate < 0.90 || rate > 0.99 {
		t.Errorf("coverage %.3f, want about 0.95", rate)
	}
	if lo, hi := BootstrapMedianCI([]float64{5, 5, 5}, 0.95, 100, 1); lo != 5 || hi != 5 {
		t.Errorf("constant sample: [%v, %v]", lo, hi)
	}
}

func TestDecide(t *testing.T) {
	fast, slow := []float64{1, 2, 3}, []float64{10, 11, 12}
	if v := Decide(Test{OK: true, P: 0.001}, fast, slow); v != Faster {
		t.Errorf("%v", v)
	}
	if v := Decide(Test{OK: true, P: 0.001}, slow, fast); v != Slower {
		t.Errorf("%v", v)
	}
	if v := Decide(Test{OK: true, P: 0.02}, fast, slow); v != NoDifference {
		t.Errorf("%v", v)
	}
	if v := Decide(Test{}, fast, slow); v != TooFewSamples {
		t.Errorf("%v", v)
	}
	// 3 against 3: the exact test's smallest p is 2/C(6,3) = 0.1 > α.
	if mw := MannWhitney(fast, slow); !relNear(mw.MinP, 0.1, 1e-12) || mw.P != 0.1 || Decide(mw, fast, slow) != TooFewSamples {
		t.Errorf("3 vs 3: %+v, verdict %v", mw, Decide(mw, fast, slow))
	}
	// 6 against 6: 2/C(12,6) = 0.0022 < α, and the samples do not overlap.
	f6, s6 := []float64{1, 2, 3, 4, 5, 6}, []float64{11, 12, 13, 14, 15, 16}
	if mw := MannWhitney(f6, s6); Decide(mw, f6, s6) != Faster || !relNear(mw.P, 2.0/924, 1e-12) {
		t.Errorf("6 vs 6: %+v, verdict %v", mw, Decide(mw, f6, s6))
	}
}
