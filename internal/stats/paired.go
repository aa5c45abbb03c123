package stats

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// This file holds the analysis of paired samples (trials that differ only
// in protocol and share their link's random numbers) and the intervals of
// a ratio of medians.

// maxExactSignedRank is the largest number of non-zero differences for
// which WilcoxonSignedRank and HodgesLehmann use the exact distribution.
const maxExactSignedRank = 200

// WilcoxonSignedRank is the Wilcoxon signed-rank test of the paired
// differences d against a median of zero, two-sided. Zero differences are
// dropped (Wilcoxon's rule). The statistic is W+, the sum of the ranks of
// the positive differences. Without ties and with at most 200 differences
// P is exact; otherwise it is the normal approximation with the tie
// correction and a continuity correction.
func WilcoxonSignedRank(d []float64) Test {
	const name = "wilcoxon-signed-rank"
	wPlus, tieTerm, ties, n := signedRanks(d)
	if n < 1 {
		return notRun(name, "needs at least 1 non-zero difference")
	}
	minP := math.Min(1, 2*math.Pow(2, -float64(n)))
	if !ties && n <= maxExactSignedRank {
		dist := signedRankCounts(n)
		return Test{Name: name, Statistic: wPlus, P: signedRankP(dist, int(wPlus), n), MinP: minP, OK: true}
	}
	z, ok := signedRankZ(wPlus, tieTerm, n)
	if !ok {
		return notRun(name, "every difference is the same")
	}
	p := math.Min(1, 2*distuv.UnitNormal.Survival(math.Max(z, 0)))
	return Test{Name: name, Statistic: wPlus, P: p, MinP: minP, OK: true}
}

// signedRanks is W+ of the non-zero differences of d (mid-ranks of |d|
// for ties), Σ (t³ − t) over the groups of ties, and their number.
func signedRanks(d []float64) (wPlus, tieTerm float64, ties bool, n int) {
	nonzero := make([]float64, 0, len(d))
	for _, v := range d {
		if v != 0 && !math.IsNaN(v) {
			nonzero = append(nonzero, v)
		}
	}
	n = len(nonzero)
	slices.SortFunc(nonzero, func(a, b float64) int { return cmp.Compare(math.Abs(a), math.Abs(b)) })
	for i := 0; i < n; {
		j := i
		for j < n && math.Abs(nonzero[j]) == math.Abs(nonzero[i]) {
			j++
		}
		rank := float64(i+j+1) / 2
		for k := i; k < j; k++ {
			if nonzero[k] > 0 {
				wPlus += rank
			}
		}
		if t := float64(j - i); t > 1 {
			tieTerm += t*t*t - t
			ties = true
		}
		i = j
	}
	return wPlus, tieTerm, ties, n
}

// signedRankZ is |W+ − n(n+1)/4| standardised with the tie correction and
// a continuity correction; ok is false when it has no spread.
func signedRankZ(wPlus, tieTerm float64, n int) (float64, bool) {
	fn := float64(n)
	sigma := math.Sqrt(fn*(fn+1)*(2*fn+1)/24 - tieTerm/48)
	if sigma == 0 || n == 0 {
		return 0, false
	}
	return (math.Abs(wPlus-fn*(fn+1)/4) - 0.5) / sigma, true
}

// signedRankCounts is the null distribution of W+ for n differences, as
// probabilities of W+ = 0 … n(n+1)/2 (each of the 2ⁿ sign patterns equally
// likely).
func signedRankCounts(n int) []float64 {
	maxW := n * (n + 1) / 2
	p := make([]float64, maxW+1)
	p[0] = 1
	top := 0
	for k := 1; k <= n; k++ {
		top += k
		for w := top; w >= k; w-- {
			p[w] = (p[w] + p[w-k]) / 2
		}
		for w := k - 1; w >= 0; w-- {
			p[w] /= 2
		}
	}
	return p
}

// signedRankP is the exact two-sided p-value of W+ = w: twice the smaller
// tail, at most 1.
func signedRankP(dist []float64, w, n int) float64 {
	maxW := n * (n + 1) / 2
	lower, upper := 0.0, 0.0
	for v := 0; v <= w; v++ {
		lower += dist[v]
	}
	for v := w; v <= maxW; v++ {
		upper += dist[v]
	}
	return math.Min(1, 2*math.Min(lower, upper))
}

// HodgesLehmann is the Hodges–Lehmann estimate of the median of paired
// differences d (the median of the Walsh averages (dᵢ + dⱼ)/2, i ≤ j) and
// its confidence interval at level, from the signed-rank distribution
// (exact up to 200 differences, normal beyond). With too few differences
// for the level the interval is the whole range of the averages and ok is
// false.
func HodgesLehmann(d []float64, level float64) (est, lo, hi float64, ok bool) {
	n := len(d)
	if n == 0 {
		return math.NaN(), math.NaN(), math.NaN(), false
	}
	walsh := walshAverages(d)
	return hodgesLehmannAt(walsh, signedRankCritical(n, (1-level)/2)) // W+ ≤ k−1 has probability ≤ α/2
}

// walshAverages are the averages (d[i]+d[j])/2 of every i ≤ j.
func walshAverages(d []float64) []float64 {
	n := len(d)
	walsh := make([]float64, 0, n*(n+1)/2)
	for i := range d {
		for j := i; j < n; j++ {
			walsh = append(walsh, (d[i]+d[j])/2)
		}
	}
	return walsh
}

// hodgesLehmannAt is the median of the averages or differences a with the
// interval from their k-th smallest to their k-th largest (the whole
// range and false for k < 1); it reorders a.
func hodgesLehmannAt(a []float64, k int) (est, lo, hi float64, ok bool) {
	est, lo, hi = medianAndTails(a, max(k, 1))
	return est, lo, hi, k >= 1
}

// signedRankCritical is the largest k with P(W+ ≤ k−1) ≤ tail for n
// differences: the interval from the k-th smallest to the k-th largest
// Walsh average covers the median with probability ≥ 1 − 2·tail.
func signedRankCritical(n int, tail float64) int {
	if n <= maxExactSignedRank {
		dist := signedRankCounts(n)
		cum, k := 0.0, 0
		for w := 0; w < len(dist); w++ {
			cum += dist[w]
			if cum > tail {
				break
			}
			k = w + 1
		}
		return k
	}
	fn := float64(n)
	z := zUpper(tail)
	return int(math.Floor(fn*(fn+1)/4 - z*math.Sqrt(fn*(fn+1)*(2*fn+1)/24)))
}

// PairedRatio is the paired analysis of pairs (q[i], t[i]) of positive
// times: the ratio q/t as the exponential of the Hodges–Lehmann estimate
// of the median log ratio, with its confidence interval at level, and the
// Wilcoxon signed-rank test of the log ratios.
type PairedRatio struct {
	Pairs         int
	Ratio, Lo, Hi float64
	// CIOK is false when there are too few pairs for an interval at level.
	CIOK bool
	Test Test
}

// PairRatios analyses pairs (q[i], t[i]), which must be of equal length.
func PairRatios(q, t []float64, level float64) PairedRatio {
	d := make([]float64, len(q))
	for i := range q {
		d[i] = math.Log(q[i] / t[i])
	}
	est, lo, hi, ok := HodgesLehmann(d, level)
	return PairedRatio{Pairs: len(q), Ratio: math.Exp(est), Lo: math.Exp(lo), Hi: math.Exp(hi), CIOK: ok, Test: WilcoxonSignedRank(d)}
}

// BootstrapRatioCI is the percentile bootstrap confidence interval of
// median(q)/median(t) at level, resampling each sample on its own (reps
// resamples from seed). NaN for an empty sample.
func BootstrapRatioCI(q, t []float64, level float64, reps int, seed uint64) (lo, hi float64) {
	return bootstrapMediansCI(q, t, level, reps, rand.NewPCG(seed, 0x7a71), func(mq, mt float64) float64 { return mq / mt })
}

// BootstrapDiffCI is the percentile bootstrap confidence interval of
// median(q) − median(t) at level, resampling each sample on its own (reps
// resamples from seed). NaN for an empty sample.
func BootstrapDiffCI(q, t []float64, level float64, reps int, seed uint64) (lo, hi float64) {
	return bootstrapMediansCI(q, t, level, reps, rand.NewPCG(seed, 0xd1ff), func(mq, mt float64) float64 { return mq - mt })
}

// bootstrapMediansCI is the percentile bootstrap confidence interval at
// level of of(median(q), median(t)), resampling each sample on its own
// (reps resamples drawn from src). NaN for an empty sample.
func bootstrapMediansCI(q, t []float64, level float64, reps int, src rand.Source, of func(mq, mt float64) float64) (lo, hi float64) {
	if len(q) == 0 || len(t) == 0 || reps < 1 {
		return math.NaN(), math.NaN()
	}
	rng := rand.New(src)
	values := make([]float64, reps)
	sq, st := make([]float64, 0, len(q)), make([]float64, 0, len(t))
	for r := range values {
		sq, st = Resample(rng, q, sq[:0]), Resample(rng, t, st[:0])
		values[r] = of(medianInPlace(sq), medianInPlace(st))
	}
	slices.Sort(values)
	return PercentileInterval(values, level)
}

// MedianSignCI is the median of d with its distribution-free interval at
// level from the sign test: from the k-th smallest to the k-th largest
// value, k the largest with P(B ≤ k−1) ≤ (1−level)/2 for B binomial(n, ½).
// One outlying value moves neither end by more than one order statistic,
// which is what explaining a verdict needs of a part's difference. With
// too few values for the level (fewer than 6 at 95 %) the interval is the
// whole range and ok is false.
func MedianSignCI(d []float64, level float64) (med, lo, hi float64, ok bool) {
	n := len(d)
	if n == 0 {
		return math.NaN(), math.NaN(), math.NaN(), false
	}
	tail := (1 - level) / 2
	k, cum := 0, 0.0
	for j := 0; j < n; j++ {
		cum += math.Exp(lchoose(n, j) - float64(n)*math.Ln2)
		if cum > tail {
			break
		}
		k = j + 1
	}
	return hodgesLehmannAt(append([]float64(nil), d...), k)
}
