package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// MannWhitneyEfficiency is the Mann–Whitney U test's asymptotic relative
// efficiency against the t-test on normal data (3/π): it needs about 1/0.955
// times the loads the t-test needs.
const MannWhitneyEfficiency = 3 / math.Pi

// MinRepetitionsForAlpha is the fewest loads per protocol with which
// Mann–Whitney U can reach p < 0.01 at all (5 against 5: p = 0.008).
const MinRepetitionsForAlpha = 5

// RepetitionsFor is the loads per protocol a comparison needs to find a
// ratio of medians of ratio (such as 1.05) with probability power at
// significance level alpha (two-sided), when the log of the metric has
// standard deviation sdLog in each protocol: the normal approximation of the
// two-sample test on logs, n = 2 σ² (z₁₋α/₂ + z_power)² / ln(ratio)²,
// divided by Mann–Whitney's efficiency, plus one for the t distribution's
// heavier tails at small n, and at least MinRepetitionsForAlpha. It
// returns 0 for a ratio of 1 or a non-positive spread.
func RepetitionsFor(sdLog, ratio, alpha, power float64) int {
	effect := math.Abs(math.Log(ratio))
	if effect == 0 || !(sdLog > 0) || alpha <= 0 || alpha >= 1 || power <= 0 || power >= 1 {
		return 0
	}
	z := distuv.UnitNormal.Quantile(1-alpha/2) + distuv.UnitNormal.Quantile(power)
	n := 2 * sdLog * sdLog * z * z / (effect * effect) / MannWhitneyEfficiency
	return max(int(math.Ceil(n))+1, MinRepetitionsForAlpha)
}

// PooledLogSD is the pooled standard deviation of the logs of two samples
// of positive values (each needs two or more); NaN otherwise.
func PooledLogSD(x, y []float64) float64 {
	if len(x) < 2 || len(y) < 2 {
		return math.NaN()
	}
	var ss float64
	for _, s := range [][]float64{x, y} {
		logs := make([]float64, len(s))
		for i, v := range s {
			if v <= 0 {
				return math.NaN()
			}
			logs[i] = math.Log(v)
		}
		m := Mean(logs)
		for _, l := range logs {
			ss += (l - m) * (l - m)
		}
	}
	return math.Sqrt(ss / float64(len(x)+len(y)-2))
}

// PairsFor is the pairs a paired comparison needs to find a typical ratio
// of ratio with probability power at significance level alpha (two-sided),
// when the pairs' log ratios have standard deviation sdLogRatio: the
// one-sample normal approximation n = σ² (z₁₋α/₂ + z_power)² / ln(ratio)²,
// divided by the signed-rank test's efficiency (3/π, as Mann–Whitney's),
// plus one, and at least PairsToReach(alpha). It returns 0 for a ratio of
// 1 or a non-positive spread.
func PairsFor(sdLogRatio, ratio, alpha, power float64) int {
	effect := math.Abs(math.Log(ratio))
	if effect == 0 || !(sdLogRatio > 0) || alpha <= 0 || alpha >= 1 || power <= 0 || power >= 1 {
		return 0
	}
	z := distuv.UnitNormal.Quantile(1-alpha/2) + distuv.UnitNormal.Quantile(power)
	n := sdLogRatio * sdLogRatio * z * z / (effect * effect) / MannWhitneyEfficiency
	return max(int(math.Ceil(n))+1, PairsToReach(alpha))
}

// LogRatioSD is the standard deviation of the log ratios of pairs
// (q[i], t[i]) of positive values (two or more pairs); NaN otherwise.
func LogRatioSD(q, t []float64) float64 {
	if len(q) < 2 || len(q) != len(t) {
		return math.NaN()
	}
	d := make([]float64, len(q))
	for i := range q {
		if q[i] <= 0 || t[i] <= 0 {
			return math.NaN()
		}
		d[i] = math.Log(q[i] / t[i])
	}
	return StdDev(d)
}
