package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestWilcoxonSignedRankExact: a sample worked by hand (W+ = 31 of 36;
// 10 of the 256 sign patterns have W− ≤ 5, so p = 2·10/256).
func TestWilcoxonSignedRankExact(t *testing.T) {
	d := []float64{1.5, -0.3, 2.2, 0.8, -1.1, 3.0, 0.4, 2.7}
	got := WilcoxonSignedRank(d)
	if !got.OK || got.Statistic != 31 || math.Abs(got.P-20.0/256) > 1e-12 || math.Abs(got.MinP-2.0/256) > 1e-12 {
		t.Errorf("got %+v, want W+ 31, p %v, min p %v", got, 20.0/256, 2.0/256)
	}
	// Zeros are dropped; all zero cannot be tested.
	if z := WilcoxonSignedRank([]float64{0, 0}); z.OK {
		t.Errorf("all-zero differences tested: %+v", z)
	}
}

// TestWilcoxonSignedRankNormal: with ties the normal approximation is used
// and agrees with the exact p-value of the same sample without ties.
func TestWilcoxonSignedRankNormal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	d := make([]float64, 60)
	for i := range d {
		d[i] = rng.NormFloat64() + 0.3
	}
	exact := WilcoxonSignedRank(d)
	d = append(d, 0.25, -0.25) // a tie in |d|
	approx := WilcoxonSignedRank(d)
	if !exact.OK || !approx.OK || math.Abs(math.Log(exact.P/approx.P)) > 0.5 {
		t.Errorf("exact p %v, approximate p %v: too far apart", exact.P, approx.P)
	}
}

// TestHodgesLehmannCritical: the interval of 8 differences at 95 % runs
// from the 4th smallest to the 4th largest Walsh average (the signed-rank
// table's critical value 3 for n = 8).
func TestHodgesLehmannCritical(t *testing.T) {
	if k := signedRankCritical(8, 0.025); k != 4 {
		t.Errorf("k = %d for n = 8, want 4", k)
	}
	if k := signedRankCritical(5, 0.025); k != 0 {
		t.Errorf("k = %d for n = 5, want 0 (too few pairs for 95 %%)", k)
	}
	if _, _, _, ok := HodgesLehmann([]float64{1, 2, 3, 4, 5}, 0.95); ok {
		t.Error("5 differences gave a 95 % interval")
	}
}

// TestPairedIntervalsCover: over 4000 simulated studies of 30 pairs whose
// log ratio has median log(0.9), the paired interval covers 0.9 in
// 95 % ± 1 % of them, and Wilcoxon rejects a true null at α = 0.01 in
// 1 % ± 0.5 %.
func TestPairedIntervalsCover(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const studies = 4000
	covered, rejected := 0, 0
	q, tt, same := make([]float64, 30), make([]float64, 30), make([]float64, 30)
	for range studies {
		for i := range q {
			base := 1000 * math.Exp(0.3*rng.NormFloat64()) // a shared link state
			tt[i] = base * math.Exp(0.1*rng.NormFloat64())
			q[i] = 0.9 * base * math.Exp(0.1*rng.NormFloat64())
			same[i] = base * math.Exp(0.1*rng.NormFloat64())
		}
		if r := PairRatios(q, tt, 0.95); r.Lo <= 0.9 && 0.9 <= r.Hi {
			covered++
		}
		if r := PairRatios(same, tt, 0.95); r.Test.P < Alpha {
			rejected++
		}
	}
	if c := float64(covered) / studies; math.Abs(c-0.95) > 0.01 {
		t.Errorf("coverage %.3f, want 0.95 ± 0.01", c)
	}
	if r := float64(rejected) / studies; math.Abs(r-Alpha) > 0.005 {
		t.Errorf("false positives %.4f, want %.2f ± 0.005", r, Alpha)
	}
}

// TestBootstrapRatioCI: the interval holds the ratio of the medians.
func TestBootstrapRatioCI(t *testing.T) {
	q := []float64{90, 95, 100, 105, 110, 92, 98}
	tt := []float64{100, 105, 110, 115, 120, 102, 108}
	lo, hi := BootstrapRatioCI(q, tt, 0.95, 2000, 1)
	r := RatioOfMedians(q, tt)
	if !(lo < r && r < hi) || lo < 0.7 || hi > 1.1 {
		t.Errorf("ratio %v, interval [%v, %v]", r, lo, hi)
	}
}

// TestBootstrapDiffCI: the interval holds the difference of the medians,
// excludes 0 for samples 30 apart and holds it for samples alike.
func TestBootstrapDiffCI(t *testing.T) {
	q := []float64{90, 95, 100, 105, 110, 92, 98}
	tt := []float64{120, 125, 130, 135, 140, 122, 128}
	lo, hi := BootstrapDiffCI(q, tt, 0.95, 2000, 1)
	if d := Median(q) - Median(tt); !(lo <= d && d <= hi) || hi >= 0 || lo < -50 {
		t.Errorf("difference %v, interval [%v, %v]", d, lo, hi)
	}
	if lo, hi := BootstrapDiffCI(q, q, 0.95, 2000, 1); !(lo <= 0 && 0 <= hi) {
		t.Errorf("alike samples: interval [%v, %v] without 0", lo, hi)
	}
	if lo, hi := BootstrapDiffCI(nil, q, 0.95, 2000, 1); !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Errorf("an empty sample: [%v, %v], want NaN", lo, hi)
	}
}

// TestHodgesLehmannShiftInvertsMannWhitney: over random samples of 3 to
// 12 values, the shift's 99 % interval excludes 0 exactly when Mann–Whitney
// rejects at α = 0.01, and holds the estimate.
func TestHodgesLehmannShiftInvertsMannWhitney(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	rejected := 0
	for trial := range 400 {
		x, y := make([]float64, 3+rng.IntN(10)), make([]float64, 3+rng.IntN(10))
		shift := float64(trial%4) * 0.8
		for i := range x {
			x[i] = rng.NormFloat64() + shift
		}
		for i := range y {
			y[i] = rng.NormFloat64()
		}
		est, lo, hi, ok := HodgesLehmannShift(x, y, 0.99)
		test := MannWhitney(x, y)
		excludes := ok && (lo > 0 || hi < 0)
		if excludes != (test.P < 0.01) || est < lo || est > hi {
			t.Fatalf("n %d, %d: interval [%.3f, %.3f] (ok %v) around %.3f, Mann–Whitney p %.4f", len(x), len(y), lo, hi, ok, est, test.P)
		}
		if excludes {
			rejected++
		}
	}
	if rejected < 50 {
		t.Errorf("only %d of 400 rejected: the shifts are too small to test the inversion", rejected)
	}
	if _, _, _, ok := HodgesLehmannShift([]float64{1, 2}, []float64{3, 4}, 0.99); ok {
		t.Error("2 against 2 values gave a 99 % interval: Mann–Whitney cannot reach p < 0.01 with them")
	}
}

func TestLoadsAndPairsToReach(t *testing.T) {
	if n := LoadsToReach(0.01); n != 5 {
		t.Errorf("Mann–Whitney at 0.01 needs %d loads a protocol, want 5 (2/252 = 0.0079; 4 give 2/70)", n)
	}
	if n := PairsToReach(0.01); n != 8 {
		t.Errorf("Wilcoxon at 0.01 needs %d pairs, want 8 (2/256; 7 give 2/128)", n)
	}
	if n := PairsToReach(0.05); n != 6 {
		t.Errorf("Wilcoxon at 0.05 needs %d pairs, want 6", n)
	}
	r, lo, hi, ok := HodgesLehmannRatio([]float64{80, 82, 84, 86, 88}, []float64{100, 102, 104, 106, 108}, 0.99)
	if !ok || hi >= 1 || r < lo || r > hi || math.Abs(r-0.82) > 0.02 {
		t.Errorf("ratio %.3f [%.3f, %.3f] (ok %v), want about 0.82 with an interval below 1", r, lo, hi, ok)
	}
}

func TestMedianSignCIIgnoresOneOutlier(t *testing.T) {
	// Thirteen pairs one round trip apart and one whose handshake lost a
	// packet: the sign test's interval stays at the round trip.
	d := []float64{3}
	for range 13 {
		d = append(d, -101)
	}
	med, lo, hi, ok := MedianSignCI(d, 0.95)
	if !ok || med != -101 || lo != -101 || hi != -101 {
		t.Errorf("MedianSignCI = %v [%v, %v] ok %v, want -101 [-101, -101] true", med, lo, hi, ok)
	}
	// The ranks for 14 values at 95 %: P(B ≤ 2) = 0.0065, P(B ≤ 3) = 0.0287.
	seq := make([]float64, 14)
	for i := range seq {
		seq[i] = float64(14 - i)
	}
	_, lo, hi, ok = MedianSignCI(seq, 0.95)
	if !ok || lo != 3 || hi != 12 {
		t.Errorf("14 values: [%v, %v] ok %v, want [3, 12] true", lo, hi, ok)
	}
	if _, _, _, ok := MedianSignCI([]float64{1, 2, 3, 4, 5}, 0.95); ok {
		t.Error("5 values gave a 95 % interval; the sign test needs 6")
	}
	if _, _, _, ok := MedianSignCI([]float64{1, 2, 3, 4, 5, 6}, 0.95); !ok {
		t.Error("6 values gave no 95 % interval")
	}
}
