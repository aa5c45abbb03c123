// Package stats computes descriptive statistics of samples. It is pure: no
// I/O, no rounding, inputs are never modified.
package stats

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Summary describes a sample. For an empty sample N is 0 and every other
// field is NaN.
type Summary struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
	P25    float64 `json:"p25"`
	P75    float64 `json:"p75"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// StdDev is the sample standard deviation (n − 1 denominator); NaN for
	// fewer than two values.
	StdDev float64 `json:"stddev"`
}

// Summarize returns the summary of xs.
func Summarize(xs []float64) Summary {
	if len(xs) == 0 {
		nan := math.NaN()
		return Summary{Mean: nan, Median: nan, P25: nan, P75: nan, Min: nan, Max: nan, StdDev: nan}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return Summary{
		N:      len(s),
		Mean:   Mean(s),
		Median: quantileSorted(s, 0.5),
		P25:    quantileSorted(s, 0.25),
		P75:    quantileSorted(s, 0.75),
		Min:    s[0],
		Max:    s[len(s)-1],
		StdDev: StdDev(s),
	}
}

// Mean is the arithmetic mean of xs; NaN if xs is empty.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// StdDev is the sample standard deviation of xs; NaN for fewer than two.
func StdDev(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	m := Mean(xs)
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// Median is the 0.5 quantile of xs; NaN if xs is empty.
func Median(xs []float64) float64 { return Quantile(xs, 0.5) }

// Quantile returns the q quantile (0 ≤ q ≤ 1) of xs by linear interpolation
// between order statistics: Hyndman and Fan's type 7, the default of R and
// NumPy. NaN if xs is empty or q is outside [0, 1].
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 || q < 0 || q > 1 || math.IsNaN(q) {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return quantileSorted(s, q)
}

// PercentileInterval is the two-sided level (such as 0.95) percentile
// interval of a bootstrap's draws, which must be sorted.
func PercentileInterval(sorted []float64, level float64) (lo, hi float64) {
	tail := (1 - level) / 2
	return quantileSorted(sorted, tail), quantileSorted(sorted, 1-tail)
}

// Resample appends to buf len(xs) values drawn from xs with replacement,
// and returns it: one bootstrap resample.
func Resample(rng *rand.Rand, xs, buf []float64) []float64 {
	for range xs {
		buf = append(buf, xs[rng.IntN(len(xs))])
	}
	return buf
}

func quantileSorted(s []float64, q float64) float64 {
	h := q * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}

// MarshalJSON writes the summary with NaN fields (empty or single samples)
// as null, which encoding/json cannot do by itself.
func (s Summary) MarshalJSON() ([]byte, error) {
	num := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	return json.Marshal(struct {
		N      int      `json:"n"`
		Mean   *float64 `json:"mean"`
		Median *float64 `json:"median"`
		P25    *float64 `json:"p25"`
		P75    *float64 `json:"p75"`
		Min    *float64 `json:"min"`
		Max    *float64 `json:"max"`
		StdDev *float64 `json:"stddev"`
	}{s.N, num(s.Mean), num(s.Median), num(s.P25), num(s.P75), num(s.Min), num(s.Max), num(s.StdDev)})
}

// ClopperPearson returns the exact (Clopper–Pearson) interval of a
// binomial proportion with k successes in n trials at the two-sided level
// confidence (0.99 for 99 %): its coverage is at least the level for every
// proportion, where Wilson's falls short when n·p is a few (1.2 expected
// losses in 5,000 probes: a 99.9 % Wilson interval misses the true rate
// about 0.8 % of the time). For n = 0 it returns 0 and 1.
func ClopperPearson(k, n int, confidence float64) (lo, hi float64) {
	if n == 0 {
		return 0, 1
	}
	tail := (1 - confidence) / 2
	lo, hi = 0, 1
	if k > 0 {
		lo = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(tail)
	}
	if k < n {
		hi = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - tail)
	}
	return lo, hi
}

// ClopperPearsonEffective is Clopper–Pearson's interval for a proportion
// p estimated from clustered cases, at an effective number of cases nEff
// (Korn and Graubard 1998): the exact interval's beta quantiles with
// p·nEff successes of nEff, which need not be whole. With nEff the cases
// themselves it is ClopperPearson's interval.
func ClopperPearsonEffective(p, nEff, confidence float64) (lo, hi float64) {
	if nEff <= 0 || math.IsNaN(p) {
		return 0, 1
	}
	tail := (1 - confidence) / 2
	k := p * nEff
	lo, hi = 0, 1
	if k > 0 {
		lo = distuv.Beta{Alpha: k, Beta: nEff - k + 1}.Quantile(tail)
	}
	if k < nEff {
		hi = distuv.Beta{Alpha: k + 1, Beta: nEff - k}.Quantile(1 - tail)
	}
	return lo, hi
}

// EffectiveCases is how many independent cases a share of cases won
// counts when they come in clusters (the same page in several networks):
// the binomial variance at the pooled share over the ratio estimator's
// variance between clusters (Kish's design effect), kept between the
// number of clusters and the number of cases. wins and cases are per
// cluster. A share of 0 or 1 has no variance to read a design effect
// from: it counts every case, as Korn and Graubard's interval does.
func EffectiveCases(wins, cases []float64) float64 {
	clusters := float64(len(cases))
	var won, total float64
	for i := range cases {
		won, total = won+wins[i], total+cases[i]
	}
	if total == 0 {
		return 0
	}
	p := won / total
	if p <= 0 || p >= 1 {
		return total
	}
	if clusters < 2 {
		return clusters
	}
	var sum float64
	for i := range cases {
		d := wins[i] - p*cases[i]
		sum += d * d
	}
	variance := clusters / (clusters - 1) * sum / (total * total)
	if variance <= 0 {
		return total
	}
	return min(max(p*(1-p)/variance, clusters), total)
}

// Two-sided quantiles of the standard normal distribution.
const (
	Z95  = 1.959963984540054
	Z99  = 2.5758293035489004
	Z999 = 3.2905267314919255
)

// zUpper is the standard normal quantile with tail above it: 2.576 for
// 0.005. Any tail, where ZForConfidence knows three levels.
func zUpper(tail float64) float64 {
	return distuv.UnitNormal.Quantile(1 - tail)
}

// ZForConfidence returns the two-sided normal quantile of a confidence level
// of 0.95, 0.99 or 0.999, and false for any other level.
func ZForConfidence(level float64) (float64, bool) {
	switch level {
	case 0.95:
		return Z95, true
	case 0.99:
		return Z99, true
	case 0.999:
		return Z999, true
	}
	return 0, false
}

// orderStats is what sorting a would put at positions at (each from 0 to
// len(a)−1), found by selection in O(len(a)) per position instead of a
// sort; it reorders a.
func orderStats(a []float64, at ...int) map[int]float64 {
	order := slices.Clone(at)
	slices.Sort(order)
	out := make(map[int]float64, len(order))
	from := 0
	for _, i := range order {
		selectKth(a[from:], i-from)
		out[i], from = a[i], i
	}
	return out
}

// medianInPlace is quantileSorted(a sorted, 0.5), with a reordered rather
// than sorted: a selection, for the medians of thousands of bootstrap
// resamples.
func medianInPlace(a []float64) float64 {
	k := (len(a) - 1) / 2
	selectKth(a, k)
	if k+1 >= len(a) {
		return a[k]
	}
	h := 0.5 * float64(len(a)-1)
	return a[k] + (h-float64(k))*(slices.Min(a[k+1:])-a[k])
}

// selectKth reorders a so that a[k] is what sorting would put there, with
// nothing larger before it and nothing smaller after (Hoare's selection,
// median-of-three pivots).
func selectKth(a []float64, k int) {
	lo, hi := 0, len(a)-1
	for hi > lo {
		mid := lo + (hi-lo)/2
		if a[mid] < a[lo] {
			a[mid], a[lo] = a[lo], a[mid]
		}
		if a[hi] < a[lo] {
			a[hi], a[lo] = a[lo], a[hi]
		}
		if a[hi] < a[mid] {
			a[hi], a[mid] = a[mid], a[hi]
		}
		pivot, i, j := a[mid], lo, hi
		for i <= j {
			for a[i] < pivot {
				i++
			}
			for pivot < a[j] {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i, j = i+1, j-1
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return
		}
	}
}

// medianAndTails is the median of a (interpolated as quantileSorted) and
// its k-th smallest and k-th largest values (k from 1; none for k < 1),
// by selection; it reorders a.
func medianAndTails(a []float64, k int) (median, low, high float64) {
	n := len(a)
	h := 0.5 * float64(n-1)
	m := int(math.Floor(h))
	at := []int{m}
	if m+1 < n {
		at = append(at, m+1)
	}
	if k >= 1 {
		at = append(at, k-1, n-k)
	}
	v := orderStats(a, at...)
	median = v[m]
	if m+1 < n {
		median += (h - float64(m)) * (v[m+1] - v[m])
	}
	if k >= 1 {
		low, high = v[k-1], v[n-k]
	}
	return median, low, high
}
