package stats

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// This file holds what the papers compare samples with: differences,
// ratios and gains, significance tests, bootstrap intervals, verdicts.

// DiffOfMeans is mean(q) − mean(t) (Nepomuceno et al. 2018, Eq. 1: Diff = X̄_QUIC −
// X̄_TCP). Negative: q is faster.
func DiffOfMeans(q, t []float64) float64 { return Mean(q) - Mean(t) }

// RatioOfMedians is median(q) / median(t) (Biswal and Gnawali 2016: PLT(QUIC)/PLT(HTTP/2)).
// Below 1: q is faster.
func RatioOfMedians(q, t []float64) float64 { return Median(q) / Median(t) }

// Gain is (mean(q) − mean(t)) / mean(t) (Wolsing et al. 2019's performance gain).
// Negative: q is faster.
func Gain(q, t []float64) float64 { mt := Mean(t); return (Mean(q) - mt) / mt }

// Test is a significance test's outcome. When OK is false the samples were
// too small or degenerate for the test, Reason says why, and P is NaN.
type Test struct {
	Name      string  `json:"test"`
	Statistic float64 `json:"statistic"`
	// DF is the degrees of freedom (Welch), DF2 the second (ANOVA's
	// within-groups); 0 where they do not apply.
	DF  float64 `json:"df"`
	DF2 float64 `json:"df2"`
	P   float64 `json:"p"`
	// MinP is the smallest p-value the test can give for these sample
	// sizes (Mann–Whitney: 2 / C(n1+n2, n1)); 0 when it has no floor.
	MinP   float64 `json:"min_p"`
	OK     bool    `json:"ok"`
	Reason string  `json:"reason,omitempty"`
}

func notRun(name, reason string) Test {
	return Test{Name: name, Statistic: math.NaN(), P: math.NaN(), Reason: reason}
}

// Welch is Welch's two-sample t-test, two-sided: it does not assume equal
// variances. It needs at least 2 values per sample and some variance.
func Welch(x, y []float64) Test {
	const name = "welch"
	if len(x) < 2 || len(y) < 2 {
		return notRun(name, "needs at least 2 values per sample")
	}
	vx, vy := variance(x)/float64(len(x)), variance(y)/float64(len(y))
	if vx+vy == 0 {
		return notRun(name, "both samples are constant")
	}
	t := (Mean(x) - Mean(y)) / math.Sqrt(vx+vy)
	df := (vx + vy) * (vx + vy) / (vx*vx/float64(len(x)-1) + vy*vy/float64(len(y)-1))
	p := 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(t))
	return Test{Name: name, Statistic: t, DF: df, P: p, OK: true}
}

func variance(xs []float64) float64 { sd := StdDev(xs); return sd * sd }

// MannWhitney is the Mann–Whitney U test (Wilcoxon rank-sum), two-sided.
// The statistic is U of x. Without ties and with both samples of at most
// 20 values, P is exact; otherwise it is the normal approximation with the
// tie correction and a continuity correction (as scipy's "asymptotic").
func MannWhitney(x, y []float64) Test {
	const name = "mann-whitney"
	n1, n2 := len(x), len(y)
	if n1 < 1 || n2 < 1 {
		return notRun(name, "needs at least 1 value per sample")
	}
	u, tieTerm, ties := rankSumU(x, y)
	// The most extreme arrangement has probability 1 / C(n1+n2, n1).
	minP := math.Min(1, 2*math.Exp(lchoose(n1+n2, n1)*-1))
	if !ties && n1 <= 20 && n2 <= 20 {
		return Test{Name: name, Statistic: u, P: exactMannWhitneyP(u, n1, n2), MinP: minP, OK: true}
	}
	z, ok := mannWhitneyZ(u, tieTerm, n1, n2)
	if !ok {
		return notRun(name, "every value is the same")
	}
	p := math.Min(1, 2*distuv.UnitNormal.Survival(math.Max(z, 0)))
	return Test{Name: name, Statistic: u, P: p, MinP: minP, OK: true}
}

// mannWhitneyZ is |U − n1·n2/2| standardised with the tie correction and
// a continuity correction; ok is false when every value is the same.
func mannWhitneyZ(u, tieTerm float64, n1, n2 int) (float64, bool) {
	fn1, fn2 := float64(n1), float64(n2)
	n := fn1 + fn2
	sigma := math.Sqrt(fn1 * fn2 / 12 * ((n + 1) - tieTerm/(n*(n-1))))
	if sigma == 0 {
		return 0, false
	}
	return (math.Abs(u-fn1*fn2/2) - 0.5) / sigma, true
}

// rankSumU is Mann–Whitney's U of x against y with mid-ranks for ties,
// and Σ (t³ − t) over the groups of ties.
func rankSumU(x, y []float64) (u, tieTerm float64, ties bool) {
	n1 := len(x)
	type obs struct {
		v     float64
		fromX bool
	}
	all := make([]obs, 0, n1+len(y))
	for _, v := range x {
		all = append(all, obs{v, true})
	}
	for _, v := range y {
		all = append(all, obs{v, false})
	}
	slices.SortFunc(all, func(a, b obs) int { return cmp.Compare(a.v, b.v) })
	rankSumX := 0.0
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+j+1) / 2 // ranks i+1 … j
		for k := i; k < j; k++ {
			if all[k].fromX {
				rankSumX += rank
			}
		}
		if t := float64(j - i); t > 1 {
			tieTerm += t*t*t - t
			ties = true
		}
		i = j
	}
	fn1 := float64(n1)
	return rankSumX - fn1*(fn1+1)/2, tieTerm, ties
}

// lchoose is log C(n, k).
func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// exactMannWhitneyP is the two-sided exact p-value of U for samples of n1
// and n2 distinct values: twice the smaller tail, at most 1.
func exactMannWhitneyP(u float64, n1, n2 int) float64 {
	dist := mannWhitneyCounts(n1, n2)
	total := 0.0
	for _, c := range dist {
		total += c
	}
	k := int(math.Round(u))
	lower, upper := 0.0, 0.0
	for i, c := range dist {
		if i <= k {
			lower += c
		}
		if i >= k {
			upper += c
		}
	}
	return math.Min(1, 2*math.Min(lower, upper)/total)
}

// mannWhitneyCounts are, for samples of n1 and n2 values without ties,
// the number of arrangements with U = k, for every k: built by the
// recurrence over the sizes (dynamic programming on (i, j)).
func mannWhitneyCounts(n1, n2 int) []float64 {
	prev := make([][]float64, n2+1) // prev[j] = distribution for (i−1, j)
	for j := range prev {
		prev[j] = []float64{1} // i = 0: U = 0 in one way
	}
	for i := 1; i <= n1; i++ {
		cur := make([][]float64, n2+1)
		cur[0] = []float64{1}
		for j := 1; j <= n2; j++ {
			// The largest value is from x (adds j to U) or from y.
			a, b := prev[j], cur[j-1]
			d := make([]float64, max(len(a)+j, len(b)))
			for k, c := range a {
				d[k+j] += c
			}
			for k, c := range b {
				d[k] += c
			}
			cur[j] = d
		}
		prev = cur
	}
	return prev[n2]
}

// HodgesLehmannShift is the Hodges–Lehmann estimate of the shift of x
// against y (the median of the differences xᵢ − yⱼ) and its confidence
// interval at level, the Mann–Whitney U test inverted (exact up to 20
// values a sample, normal beyond): without ties, the interval excludes 0
// exactly when the test's p is below 1 − level. With too few values for
// the level the interval is the whole range of the differences and ok is
// false.
func HodgesLehmannShift(x, y []float64, level float64) (est, lo, hi float64, ok bool) {
	if len(x) == 0 || len(y) == 0 {
		return math.NaN(), math.NaN(), math.NaN(), false
	}
	return hodgesLehmannAt(differences(x, y), rankSumCritical(len(x), len(y), (1-level)/2))
}

// differences are a−b for every a of x and b of y.
func differences(x, y []float64) []float64 {
	diffs := make([]float64, 0, len(x)*len(y))
	for _, a := range x {
		for _, b := range y {
			diffs = append(diffs, a-b)
		}
	}
	return diffs
}

// rankSumCritical is the largest k with P(U ≤ k−1) ≤ tail for samples of
// m and n values: the interval from the k-th smallest to the k-th largest
// difference covers the shift with probability ≥ 1 − 2·tail.
func rankSumCritical(m, n int, tail float64) int {
	if m <= 20 && n <= 20 {
		dist := mannWhitneyCounts(m, n)
		total := 0.0
		for _, c := range dist {
			total += c
		}
		cum, k := 0.0, 0
		for u, c := range dist {
			cum += c / total
			if cum > tail {
				break
			}
			k = u + 1
		}
		return k
	}
	mn := float64(m * n)
	z := zUpper(tail)
	return int(math.Floor(mn/2 - z*math.Sqrt(mn*float64(m+n+1)/12)))
}

// ANOVA is the one-way analysis of variance of two or more groups (each
// with at least one value, and more values than groups in all): F and its
// p-value with k − 1 and N − k degrees of freedom.
func ANOVA(groups ...[]float64) Test {
	const name = "anova"
	k := len(groups)
	if k < 2 {
		return notRun(name, "needs at least 2 groups")
	}
	n := 0
	var all []float64
	for _, g := range groups {
		if len(g) == 0 {
			return notRun(name, "a group is empty")
		}
		n += len(g)
		all = append(all, g...)
	}
	if n <= k {
		return notRun(name, "needs more values than groups")
	}
	grand := Mean(all)
	between, within := 0.0, 0.0
	for _, g := range groups {
		m := Mean(g)
		between += float64(len(g)) * (m - grand) * (m - grand)
		for _, v := range g {
			within += (v - m) * (v - m)
		}
	}
	df1, df2 := float64(k-1), float64(n-k)
	if within == 0 {
		return notRun(name, "no variance within the groups")
	}
	f := (between / df1) / (within / df2)
	p := distuv.F{D1: df1, D2: df2}.Survival(f)
	return Test{Name: name, Statistic: f, DF: df1, DF2: df2, P: p, OK: true}
}

// BootstrapMedianCI is the percentile bootstrap confidence interval of the
// median of xs at level (such as 0.95), from reps resamples drawn with
// seed. NaN for an empty sample.
func BootstrapMedianCI(xs []float64, level float64, reps int, seed uint64) (lo, hi float64) {
	if len(xs) == 0 || reps < 1 {
		return math.NaN(), math.NaN()
	}
	rng := rand.New(rand.NewPCG(seed, 0xb007))
	medians := make([]float64, reps)
	sample := make([]float64, 0, len(xs))
	for r := range medians {
		sample = Resample(rng, xs, sample[:0])
		medians[r] = medianInPlace(sample)
	}
	slices.Sort(medians)
	return PercentileInterval(medians, level)
}

// Verdict says how sample q compared with sample t.
type Verdict string

// The verdicts.
const (
	Faster        Verdict = "faster" // significantly smaller times
	Slower        Verdict = "slower" // significantly larger times
	NoDifference  Verdict = "no significant difference"
	TooFewSamples Verdict = "too few loads for the test"
)

// Alpha is the significance level of the verdicts.
const Alpha = 0.01

// Decide gives the verdict of a test of q against t at Alpha, the direction
// from the medians (smaller is faster). A test that cannot reach Alpha with
// these sample sizes (MinP ≥ Alpha) gives TooFewSamples, not "no
// difference".
func Decide(test Test, q, t []float64) Verdict {
	switch {
	case !test.OK || test.MinP >= Alpha:
		return TooFewSamples
	case test.P >= Alpha:
		return NoDifference
	case Median(q) < Median(t):
		return Faster
	}
	return Slower
}

// HodgesLehmannRatio is HodgesLehmannShift on the logarithms of positive
// times q and t, as a ratio: the typical q/t with its interval at level,
// the Mann–Whitney test (which ranks logarithms as it ranks the times)
// inverted.
func HodgesLehmannRatio(q, t []float64, level float64) (ratio, lo, hi float64, ok bool) {
	if len(q) == 0 || len(t) == 0 {
		return math.NaN(), math.NaN(), math.NaN(), false
	}
	return hodgesLehmannRatioAt(q, t, rankSumCritical(len(q), len(t), (1-level)/2))
}

// hodgesLehmannRatioAt is HodgesLehmannRatio with the interval from the
// k-th smallest to the k-th largest log ratio (a critical rank already
// found).
func hodgesLehmannRatioAt(q, t []float64, k int) (ratio, lo, hi float64, ok bool) {
	est, l, h, ok := hodgesLehmannAt(differences(logs(q), logs(t)), k)
	return math.Exp(est), math.Exp(l), math.Exp(h), ok
}

// logs are the natural logarithms of xs.
func logs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Log(x)
	}
	return out
}

// LoadsToReach is the fewest loads a protocol (as many each) with which
// the Mann–Whitney test can give p < alpha: its smallest p, two-sided, is
// 2 / C(2n, n).
func LoadsToReach(alpha float64) int {
	n := 1
	for 2*math.Exp(-lchoose(2*n, n)) >= alpha {
		n++
	}
	return n
}

// PairsToReach is the fewest pairs with which the Wilcoxon signed-rank
// test can give p < alpha: its smallest p, two-sided, is 2 / 2ⁿ.
func PairsToReach(alpha float64) int {
	n := 1
	for 2*math.Pow(2, -float64(n)) >= alpha {
		n++
	}
	return n
}
