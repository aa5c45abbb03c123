package stats

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/stat/distuv"
)

// This file holds the rule that stops repeating loads once the answer is
// known: a group-sequential test whose false-positive rate holds however
// often it is looked at.

// Sequential is a two-sided group-sequential test of two samples, looked
// at after every repetition from Min to Max, with Lan and DeMets'
// O'Brien–Fleming-type α-spending function α(t) = 2 − 2Φ(z_{α/2}/√t) at
// information fraction t = n/Max: early looks need overwhelming evidence,
// and the error rate over all looks stays at Alpha. Each look reads its
// verdict from a repeated confidence interval (Jennison and Turnbull): the
// Hodges–Lehmann interval of the ratio at the look's level 2Φ(b)−1 for
// its boundary b, which inverts the rank test at that boundary, so a
// verdict and the interval beside it always agree and the intervals hold
// 1 − Alpha together over all looks. A setting also stops, without a
// verdict, once the 95 % interval of the ratio is within ±CIRatio of the
// ratio (precision reached), or at Max.
type Sequential struct {
	Alpha    float64 // two-sided error rate over all looks, such as 0.01
	Min, Max int     // repetitions of the first and the last look
	CIRatio  float64 // relative half-width of the ratio's interval that suffices; 0: none
	// Paired analyses the loads as pairs of equal repetition (trials that
	// shared their link state): the Wilcoxon signed-rank test of the log
	// ratios and the Hodges–Lehmann interval of their median ratio, in
	// place of Mann–Whitney and the bootstrap of the ratio of medians.
	Paired bool
	// bounds[k] is the |z| that rejects at look k (n = Min + k).
	bounds []float64
	// criticals caches the rank tests' critical values at the looks'
	// levels: the exact distributions cost most of a look.
	criticals *criticals
}

// precisionLook is the look key of the 95 % interval's critical rank,
// which the precision stop reads at every look alike.
const precisionLook = 0

// criticals are critical ranks by look (precisionLook for the 95 %
// interval) and sample sizes.
type criticals struct {
	mu sync.Mutex
	k  map[[4]int]int // look, paired (1) or not (0), sizes
}

// at is the critical rank at look n for sizes a and b (b 0 when paired),
// from compute on first use.
func (c *criticals) at(n, paired, a, b int, compute func() int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := [4]int{n, paired, a, b}
	k, ok := c.k[key]
	if !ok {
		k = compute()
		c.k[key] = k
	}
	return k
}

// Stop reasons.
const (
	StopVerdict   = "verdict"   // the sequential test rejected: the verdict is final
	StopPrecision = "precision" // the ratio's interval is as narrow as asked
	StopMax       = "max"       // the last look
)

// NewSequential computes the test's boundaries. It needs 2 ≤ min ≤ max.
func NewSequential(alpha float64, min, max int, ciRatio float64) (*Sequential, error) {
	if !(alpha > 0 && alpha < 1) || min < 2 || max < min || ciRatio < 0 {
		return nil, fmt.Errorf("sequential test: α %g, min %d, max %d, ci %g: need 0 < α < 1, 2 ≤ min ≤ max, ci ≥ 0", alpha, min, max, ciRatio)
	}
	s := &Sequential{Alpha: alpha, Min: min, Max: max, CIRatio: ciRatio, criticals: &criticals{k: map[[4]int]int{}}}
	var times []float64
	for n := min; n <= max; n++ {
		times = append(times, float64(n)/float64(max))
	}
	s.bounds = spendingBounds(alpha, times)
	return s, nil
}

// Bound is the |z| that rejects at the look after n repetitions; +Inf
// outside Min to Max.
func (s *Sequential) Bound(n int) float64 {
	if n < s.Min || n > s.Max {
		return math.Inf(1)
	}
	return s.bounds[n-s.Min]
}

// Look is the decision after n repetitions with samples q (compared) and
// t (baseline): stop or go on, and why.
type Look struct {
	Stop   bool
	Reason string // StopVerdict, StopPrecision or StopMax when Stop
	Z      float64
	// Verdict is Faster or Slower when the repeated interval excludes 1
	// (StopVerdict), else NoDifference.
	Verdict Verdict
	// RatioLo and RatioHi are the 95 % interval of the ratio at the look,
	// whose width the precision stop reads.
	RatioLo, RatioHi float64
	// Level is the look's level, 2Φ(b)−1 for its boundary b (1 outside
	// Min to Max); Estimate the Hodges–Lehmann ratio q/t and Lo–Hi its
	// repeated interval at Level (IntervalOK false when the loads are too
	// few for one at that level).
	Level, Estimate, Lo, Hi float64
	IntervalOK              bool
}

// LookLevel is the level of the repeated interval at the look after n
// repetitions: 2Φ(b)−1 for its boundary b, 1 outside Min to Max.
func (s *Sequential) LookLevel(n int) float64 {
	b := s.Bound(n)
	if math.IsInf(b, 1) {
		return 1
	}
	return 1 - 2*distuv.UnitNormal.Survival(b)
}

// repeated sets l's repeated interval from the Hodges–Lehmann estimate
// est with interval lo–hi (ok) at l.Level, and the verdict it reads.
func (l *Look) repeated(est, lo, hi float64, ok bool) {
	l.Estimate, l.Lo, l.Hi, l.IntervalOK = est, lo, hi, ok
	if ok && (hi < 1 || lo > 1) {
		l.Stop, l.Reason, l.Verdict = true, StopVerdict, intervalVerdict(lo, hi)
	}
}

// Decide looks at the samples after n repetitions: a verdict where the
// repeated interval (the Mann–Whitney test inverted at the look's level)
// excludes 1. Z is Mann–Whitney's U in its normal approximation (with the
// tie and continuity corrections), for the tables; ratioLo and ratioHi
// are the 95 % interval the precision stop reads.
func (s *Sequential) Decide(n int, q, t []float64, ratioLo, ratioHi float64) Look {
	l := Look{Verdict: NoDifference, RatioLo: ratioLo, RatioHi: ratioHi, Level: s.LookLevel(n)}
	if n < s.Min || len(q) == 0 || len(t) == 0 {
		return l
	}
	u, tieTerm, _ := rankSumU(q, t)
	l.Z, _ = mannWhitneyZ(u, tieTerm, len(q), len(t))
	k := s.criticals.at(n, 0, len(q), len(t), func() int { return rankSumCritical(len(q), len(t), (1-l.Level)/2) })
	if l.repeated(hodgesLehmannRatioAt(q, t, k)); l.Stop {
		return l
	}
	if r := RatioOfMedians(q, t); s.CIRatio > 0 && r > 0 && ratioHi-ratioLo <= 2*s.CIRatio*r {
		l.Stop, l.Reason = true, StopPrecision
		return l
	}
	return s.atMax(l, n)
}

// atMax stops l at the last look.
func (s *Sequential) atMax(l Look, n int) Look {
	if n >= s.Max {
		l.Stop, l.Reason = true, StopMax
	}
	return l
}

// obfSpending is the O'Brien–Fleming-type spending function: the error
// spent by information fraction t.
func obfSpending(alpha, t float64) float64 {
	if t <= 0 {
		return 0
	}
	z := distuv.UnitNormal.Quantile(1 - alpha/2)
	return 2 - 2*distuv.UnitNormal.CDF(z/math.Sqrt(t))
}

// spendingGrid is the number of points the continuation density is kept on.
const spendingGrid = 401

// spendingBounds finds two-sided z boundaries for looks at information
// fractions times (increasing, the last 1) such that the probability of
// first crossing at look k under the null is α(t_k) − α(t_{k−1}). The
// score S_k = Z_k·√t_k is Brownian motion; its density over the region
// not yet stopped is carried from look to look on a grid (Armitage,
// McPherson and Rowe's recursion).
func spendingBounds(alpha float64, times []float64) []float64 {
	bounds := make([]float64, len(times))
	var grid, dens []float64 // the last look's continuation density of S
	prevT, spent := 0.0, 0.0
	for k, t := range times {
		want := obfSpending(alpha, t) - spent
		sd := math.Sqrt(t - prevT)
		tail := func(b float64) float64 { // P(|S_k| ≥ b, not stopped before)
			if grid == nil {
				return 2 * distuv.UnitNormal.Survival(b/sd)
			}
			return integrate(grid, dens, func(s float64) float64 {
				return distuv.UnitNormal.CDF((-b-s)/sd) + distuv.UnitNormal.Survival((b-s)/sd)
			})
		}
		b := solveDecreasing(tail, want, 0, 12*math.Sqrt(t))
		bounds[k] = b / math.Sqrt(t)
		spent += tail(b)
		grid, dens = carry(grid, dens, b, sd)
		prevT = t
	}
	return bounds
}

// carry is the density of S at the next look on a grid over (−b, b), from
// the density dens on grid (nil: S starts at 0) and a normal step of sd.
func carry(grid, dens []float64, b, sd float64) ([]float64, []float64) {
	next := make([]float64, spendingGrid)
	out := make([]float64, spendingGrid)
	for i := range next {
		x := -b + 2*b*float64(i)/float64(spendingGrid-1)
		next[i] = x
		if grid == nil {
			out[i] = distuv.UnitNormal.Prob(x/sd) / sd
			continue
		}
		out[i] = integrate(grid, dens, func(s float64) float64 { return distuv.UnitNormal.Prob((x-s)/sd) / sd })
	}
	return next, out
}

// integrate is the trapezoid rule of dens·f over grid.
func integrate(grid, dens []float64, f func(float64) float64) float64 {
	sum := 0.0
	for i := 1; i < len(grid); i++ {
		h := grid[i] - grid[i-1]
		sum += h * (dens[i-1]*f(grid[i-1]) + dens[i]*f(grid[i])) / 2
	}
	return sum
}

// solveDecreasing finds x in [lo, hi] with f(x) = want for a decreasing f,
// by bisection; hi if f(hi) is still above want.
func solveDecreasing(f func(float64) float64, want, lo, hi float64) float64 {
	if f(hi) >= want {
		return hi
	}
	for range 60 {
		mid := (lo + hi) / 2
		if f(mid) > want {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// StopBootstrapReps is the resamples of the ratio's interval at each look.
const StopBootstrapReps = 1000

// LookAt is Decide after n repetitions over the values of repetitions 1
// to n, given by repetition (q compared, t baseline; a failed load has no
// value), with the ratio's interval from a bootstrap seeded from seed and
// n. The result depends only on those values: a resumed run and the
// report reach the decisions the run reached.
func (s *Sequential) LookAt(n int, q, t map[int]float64, seed uint64) Look {
	if s.Paired {
		return s.lookPaired(n, q, t)
	}
	qs, ts := upTo(q, n), upTo(t, n)
	lo, hi := math.NaN(), math.NaN()
	if len(qs) > 0 && len(ts) > 0 {
		lo, hi = BootstrapRatioCI(qs, ts, 0.95, StopBootstrapReps, seed^uint64(n)*0x9e3779b97f4a7c15)
	}
	return s.Decide(n, qs, ts, lo, hi)
}

// Replay makes the looks after repetitions Min, Min+1, … through
// min(through, Max) and returns the first that stops, with its
// repetition; ok is false if none stopped.
func (s *Sequential) Replay(q, t map[int]float64, through int, seed uint64) (rep int, look Look, ok bool) {
	for n := s.Min; n <= min(through, s.Max); n++ {
		if l := s.LookAt(n, q, t, seed); l.Stop {
			return n, l, true
		}
	}
	return 0, Look{}, false
}

// upTo is the values of repetitions 1 to n in repetition order.
func upTo(byRep map[int]float64, n int) []float64 {
	reps := make([]int, 0, len(byRep))
	for r := range byRep {
		if r <= n {
			reps = append(reps, r)
		}
	}
	slices.Sort(reps)
	out := make([]float64, len(reps))
	for i, r := range reps {
		out[i] = byRep[r]
	}
	return out
}

// lookPaired is LookAt for paired loads: the repetitions up to n with a
// value on both sides, their log ratios' Hodges–Lehmann interval at the
// look's level (the signed-rank test inverted) for the verdict, Z the
// signed-rank statistic's normal approximation, and the 95 % interval for
// the precision stop.
func (s *Sequential) lookPaired(n int, q, t map[int]float64) Look {
	var d []float64
	for r := 1; r <= n; r++ {
		a, okA := q[r]
		b, okB := t[r]
		if okA && okB && a > 0 && b > 0 {
			d = append(d, math.Log(a/b))
		}
	}
	l := Look{Verdict: NoDifference, RatioLo: math.NaN(), RatioHi: math.NaN(), Level: s.LookLevel(n)}
	if n < s.Min || len(d) == 0 {
		return l
	}
	wPlus, tieTerm, _, m := signedRanks(d)
	l.Z, _ = signedRankZ(wPlus, tieTerm, m)
	walsh := walshAverages(d) // selection reorders it, which neither use minds
	k95 := s.criticals.at(precisionLook, 1, len(d), 0, func() int { return signedRankCritical(len(d), 0.025) })
	est, lo95, hi95, ok95 := hodgesLehmannAt(walsh, k95)
	l.RatioLo, l.RatioHi = math.Exp(lo95), math.Exp(hi95)
	k := s.criticals.at(n, 1, len(d), 0, func() int { return signedRankCritical(len(d), (1-l.Level)/2) })
	r, lo, hi, ok := hodgesLehmannAt(walsh, k)
	if l.repeated(math.Exp(r), math.Exp(lo), math.Exp(hi), ok); l.Stop {
		return l
	}
	if s.CIRatio > 0 && ok95 && l.RatioHi-l.RatioLo <= 2*s.CIRatio*math.Exp(est) {
		l.Stop, l.Reason = true, StopPrecision
		return l
	}
	return s.atMax(l, n)
}

// intervalVerdict is the side of 1 an interval of the ratio lies on:
// below (faster), above (slower) or across it.
func intervalVerdict(lo, hi float64) Verdict {
	switch {
	case hi < 1:
		return Faster
	case lo > 1:
		return Slower
	}
	return NoDifference
}
