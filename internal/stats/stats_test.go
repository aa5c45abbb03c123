package stats

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// Reference values are R's quantile(x, type = 7) and closed forms of the mean and sd.
func TestSummarizeMatchesR(t *testing.T) {
	// x <- c(10, 2, 38, 23, 38, 23, 21)
	x := []float64{10, 2, 38, 23, 38, 23, 21}
	s := Summarize(x)
	want := Summary{N: 7, Mean: 155.0 / 7, Median: 23, P25: 15.5, P75: 30.5, Min: 2, Max: 38, StdDev: math.Sqrt(7412.0 / 42)} // Σx²=4491, SS=4491−155²/7=7412/7
	if s.N != want.N || !near(s.Mean, want.Mean) || s.Median != want.Median || !near(s.P25, want.P25) ||
		!near(s.P75, want.P75) || s.Min != want.Min || s.Max != want.Max || math.Abs(s.StdDev-want.StdDev) > 1e-6 {
		t.Errorf("Summarize = %+v, want %+v", s, want)
	}
	if x[0] != 10 {
		t.Error("Summarize modified its input")
	}
}

func TestQuantileType7(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for q, want := range map[float64]float64{0: 1, 0.25: 3.25, 0.5: 5.5, 0.75: 7.75, 0.9: 9.1, 1: 10} {
		if got := Quantile(x, q); !near(got, want) {
			t.Errorf("Quantile(1..10, %v) = %v, want %v", q, got, want)
		}
	}
	if got := Median([]float64{4}); got != 4 {
		t.Errorf("median of one value = %v", got)
	}
	for _, q := range []float64{-0.1, 1.1, math.NaN()} {
		if !math.IsNaN(Quantile(x, q)) {
			t.Errorf("Quantile(q=%v) is not NaN", q)
		}
	}
}

func TestEmptyAndSingle(t *testing.T) {
	if s := Summarize(nil); s.N != 0 || !math.IsNaN(s.Median) || !math.IsNaN(s.Mean) {
		t.Errorf("empty summary %+v", s)
	}
	if s := Summarize([]float64{3}); s.N != 1 || s.Median != 3 || s.P25 != 3 || !math.IsNaN(s.StdDev) {
		t.Errorf("single summary %+v", s)
	}
}

func TestSummaryJSONWritesNaNAsNull(t *testing.T) {
	b, err := json.Marshal(Summarize(nil))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"n":0,"mean":null,"median":null,"p25":null,"p75":null,"min":null,"max":null,"stddev":null}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	b, _ = json.Marshal(Summarize([]float64{1, 3}))
	if want := `{"n":2,"mean":2,"median":2,"p25":1.5,"p75":2.5,"min":1,"max":3,"stddev":1.4142135623730951}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}

// TestClopperPearson: k = 0 gives [0, 1 − (α/2)^(1/n)], by hand.
func TestClopperPearson(t *testing.T) {
	// Reference values from the beta quantiles (R: binom.test(10, 100)).
	lo, hi := ClopperPearson(10, 100, 0.95)
	if math.Abs(lo-0.0490) > 5e-4 || math.Abs(hi-0.1762) > 5e-4 {
		t.Errorf("ClopperPearson(10, 100, 95%%) = [%.4f, %.4f], want [0.0490, 0.1762]", lo, hi)
	}
	// 5 losses in 5000 at 0.024 %: Wilson's 99.9 % interval starts at
	// 0.026 % and excludes the true rate; the exact one includes it.
	if lo, _ := ClopperPearson(5, 5000, 0.999); lo >= 0.00024 {
		t.Errorf("exact lower bound %.5f%%, want below 0.024%%", 100*lo)
	}
	if lo, hi := ClopperPearson(0, 50, 0.99); lo != 0 || math.Abs(hi-(1-math.Pow(0.005, 1.0/50))) > 1e-9 {
		t.Errorf("ClopperPearson(0, 50, 99%%) = [%v, %v]", lo, hi)
	}
	if lo, hi := ClopperPearson(0, 0, 0.99); lo != 0 || hi != 1 {
		t.Errorf("ClopperPearson(0, 0) = [%v, %v]", lo, hi)
	}
}

// Each constant z satisfies erf(z/√2) = level, the definition of a
// two-sided normal quantile.
func TestNormalQuantiles(t *testing.T) {
	for _, level := range []float64{0.95, 0.99, 0.999} {
		z, ok := ZForConfidence(level)
		if !ok || math.Abs(math.Erf(z/math.Sqrt2)-level) > 1e-12 {
			t.Errorf("z for %v = %v: erf(z/√2) = %v", level, z, math.Erf(z/math.Sqrt2))
		}
	}
	if _, ok := ZForConfidence(0.9); ok {
		t.Error("accepted an unsupported level")
	}
}

// TestOrderStatsAgreeWithSorting: selection finds at every asked position
// what sorting puts there, on random arrays with many ties, and the
// median and tails equal quantileSorted's and the sorted ends.
func TestOrderStatsAgreeWithSorting(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 300 {
		n := 1 + rng.IntN(60)
		a := make([]float64, n)
		for i := range a {
			a[i] = float64(rng.IntN(1 + trial%20)) // trial%20 == 0: all equal
		}
		sorted := slices.Clone(a)
		slices.Sort(sorted)
		at := []int{rng.IntN(n), rng.IntN(n), n - 1, 0}
		for i, v := range orderStats(slices.Clone(a), at...) {
			if v != sorted[i] {
				t.Fatalf("%v at %d: selected %g, sorted %g", a, i, v, sorted[i])
			}
		}
		k := 1 + rng.IntN((n+1)/2)
		med, lo, hi := medianAndTails(slices.Clone(a), k)
		if med != quantileSorted(sorted, 0.5) || lo != sorted[k-1] || hi != sorted[n-k] {
			t.Fatalf("%v, k %d: median %g lo %g hi %g, sorted gives %g %g %g", a, k, med, lo, hi, quantileSorted(sorted, 0.5), sorted[k-1], sorted[n-k])
		}
	}
}

// TestClopperPearsonEffectiveAtWholeCasesIsClopperPearson: 10 of 100 at
// 100 effective cases is the exact interval; fewer cases widen it.
func TestClopperPearsonEffectiveAtWholeCasesIsClopperPearson(t *testing.T) {
	wantLo, wantHi := ClopperPearson(10, 100, 0.95)
	lo, hi := ClopperPearsonEffective(0.1, 100, 0.95)
	if math.Abs(lo-wantLo) > 1e-9 || math.Abs(hi-wantHi) > 1e-9 {
		t.Errorf("ClopperPearsonEffective(0.1, 100) = [%.4f, %.4f], want [%.4f, %.4f]", lo, hi, wantLo, wantHi)
	}
	if lo25, hi25 := ClopperPearsonEffective(0.1, 25.5, 0.95); lo25 >= lo || hi25 <= hi {
		t.Errorf("at 25.5 cases [%.4f, %.4f], want wider than [%.4f, %.4f]", lo25, hi25, lo, hi)
	}
	if lo, hi := ClopperPearsonEffective(1, 12, 0.95); hi != 1 || math.Abs(lo-math.Pow(0.025, 1.0/12)) > 1e-9 {
		t.Errorf("12 of 12: [%.4f, %.4f], want [(α/2)^(1/12), 1]", lo, hi)
	}
}

// TestEffectiveCases: clusters whose cases all win or all lose count as
// the clusters; clusters that split their cases as a coin would count
// nearly every case; a unanimous share counts every case (Korn and
// Graubard: it has no spread to read a design effect from).
func TestEffectiveCases(t *testing.T) {
	same := EffectiveCases([]float64{3, 3, 0, 0, 3, 0, 0, 0, 3, 0}, []float64{3, 3, 3, 3, 3, 3, 3, 3, 3, 3})
	if same != 10 {
		t.Errorf("10 pages each won or lost in all 3 networks: %.1f cases, want 10", same)
	}
	// 40 pages of 4 networks, wins spread as independent coins at 1/2
	// would spread them (binomial counts 0–4 in their proportions 1:4:6:4:1).
	var wins, cases []float64
	for _, w := range []float64{0, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 4} {
		for range 2 {
			wins, cases = append(wins, w), append(cases, 4)
		}
	}
	if n := EffectiveCases(wins, cases); n < 0.9*128 || n > 128 {
		t.Errorf("32 pages of 4 independent networks: %.1f cases, want near 128", n)
	}
	if n := EffectiveCases([]float64{2, 2, 2}, []float64{2, 2, 2}); n != 6 {
		t.Errorf("every case won in 3 pages of 2: %.1f, want every case, 6", n)
	}
}

// TestMedianInPlaceIsTheSortedMedian: the bootstraps' selection gives
// exactly the median sorting gives, for odd and even sizes, ties and one
// value.
func TestMedianInPlaceIsTheSortedMedian(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 1; n <= 41; n++ {
		for range 50 {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = math.Round(10 * rng.ExpFloat64()) // ties
			}
			sorted := slices.Sorted(slices.Values(xs))
			want := quantileSorted(sorted, 0.5)
			if got := medianInPlace(slices.Clone(xs)); got != want {
				t.Fatalf("n %d %v: median %g in place, %g sorted", n, xs, got, want)
			}
		}
	}
}
