package papers

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/quicbench/quicbench/internal/stats"
)

// SmallCell is the fewest loads a cell may have for the bootstrap's
// interval to stand alone. With fewer, resampling a cell's loads cannot
// reach past the loads it has (2 loads give 3 means), so the interval is
// widened to hold a t interval from the claim's cells' pooled spread
// (pooledInterval).
const SmallCell = 5

// smallestCell is the fewest loads of a cell the statistic of kind k
// reads among groups.
func smallestCell(k Kind, groups []*group) int {
	fewest := math.MaxInt
	for _, g := range groups {
		for i := range cellsRead(k) {
			fewest = min(fewest, len(g.samples[i]))
		}
	}
	return fewest
}

// cellsRead is how many cells of a group the statistic of kind k reads.
func cellsRead(k Kind) int {
	if k == Interaction || k == Widening {
		return 4
	}
	return 2
}

// pooledInterval is the interval at level of the statistic of kind k,
// whose value is value, from Student's t: each cell's location has the
// variance of the claim's cells' pooled squared coefficient of variation
// over its loads (times π/2 for a median), with Σ(n − 1) degrees of
// freedom; ratios and interactions on the log scale, round trips and
// widenings on the milliseconds'. ok is false when no cell has two loads or any spread.
func pooledInterval(k Kind, loc Location, groups []*group, value, level float64) (lo, hi float64, ok bool) {
	cv2, df := pooledCV2(k, groups)
	if df == 0 || cv2 == 0 {
		return 0, 0, false
	}
	if loc == Median {
		cv2 *= math.Pi / 2
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - (1-level)/2)
	var variance float64 // of the mean over groups
	for _, g := range groups {
		variance += groupVariance(k, g, cv2)
	}
	se := math.Sqrt(variance) / float64(len(groups))
	if k == RTTsSaved || k == Widening {
		return value - t*se, value + t*se, true
	}
	center := math.Log(value)
	return math.Exp(center - t*se), math.Exp(center + t*se), true
}

// pooledCV2 is the pooled squared coefficient of variation of the cells
// the statistic reads, and its degrees of freedom.
func pooledCV2(k Kind, groups []*group) (cv2, df float64) {
	var sum float64
	for _, g := range groups {
		for i := range cellsRead(k) {
			s := g.samples[i]
			if len(s) < 2 {
				continue
			}
			m, sd := stats.Mean(s), stats.StdDev(s)
			sum += float64(len(s)-1) * (sd / m) * (sd / m)
			df += float64(len(s) - 1)
		}
	}
	if df == 0 {
		return 0, 0
	}
	return sum / df, df
}

// groupVariance is the variance of one group's term of the statistic:
// the log ratio (or the difference of log ratios) of its cells'
// locations, its round trips saved, or its lead's widening in ms.
func groupVariance(k Kind, g *group, cv2 float64) float64 {
	n := func(i int) float64 { return float64(len(g.samples[i])) }
	switch k {
	case RTTsSaved:
		m0, m1 := stats.Mean(g.samples[0]), stats.Mean(g.samples[1])
		return cv2 * (m0*m0/n(0) + m1*m1/n(1)) / (g.rttMs * g.rttMs)
	case Interaction:
		return cv2 * (1/n(0) + 1/n(1) + 1/n(2) + 1/n(3))
	case Widening:
		var sum float64
		for i := range 4 {
			m := stats.Mean(g.samples[i])
			sum += m * m / n(i)
		}
		return cv2 * sum
	}
	return cv2 * (1/n(0) + 1/n(1))
}

// widenSmall widens [lo, hi], an interval at level, to hold the pooled t
// interval when a cell the statistic reads has fewer than SmallCell loads.
func widenSmall(c Claim, groups []*group, value, level, lo, hi float64) (float64, float64) {
	if smallestCell(c.Stat.Kind, groups) >= SmallCell {
		return lo, hi
	}
	plo, phi, ok := pooledInterval(c.Stat.Kind, c.Location, groups, value, level)
	if !ok {
		return lo, hi
	}
	return math.Min(lo, plo), math.Max(hi, phi)
}
