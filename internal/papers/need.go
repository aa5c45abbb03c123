package papers

import (
	"fmt"
	"math"

	"github.com/quicbench/quicbench/internal/stats"
)

// MaxGrowth bounds how many times its loads (or settings) an undecided
// claim may need before it is called undecidable by more of them: its
// value then sits on a bound of its region, where no number of loads
// decides it.
const MaxGrowth = 100

// Need is what an inconclusive claim lacks to be decided at the paper's
// level, projected from what the reproduction measured: the interval's
// half-width shrinks as one over the square root of the loads (or, for a
// share, Clopper–Pearson's interval at the observed share, over more
// settings).
type Need struct {
	// PerCell is how many more loads each cell the claim read needs
	// (the mean over its cells; 0 for a share), Loads the total.
	PerCell, Loads int
	// Settings is how many more settings (pages, networks) a share
	// needs: more loads of the same settings do not decide a share.
	Settings int
	// OnBound says that the value sits so near a bound that more than
	// MaxGrowth times the loads or settings would be needed.
	OnBound bool
}

// Text says the need in words: "about 40 more loads (4 a cell)".
func (n Need) Text() string {
	switch {
	case n.OnBound:
		return fmt.Sprintf("its value sits on a bound of the region: more than %d times the loads would not decide it", MaxGrowth)
	case n.Settings > 0:
		return fmt.Sprintf("about %d more settings (pages or networks) at the observed share: more loads of the same settings cannot decide a share", n.Settings)
	}
	return fmt.Sprintf("about %d more loads (%d a cell) at the observed spread", n.Loads, n.PerCell)
}

// needOf projects what row, an inconclusive claim, needs to be decided.
func needOf(row Row) Need {
	if row.Claim.Stat.Kind == Share {
		return shareNeed(row)
	}
	growth := loadGrowth(row.Claim.Region, row.Value, row.LevelLo, row.LevelHi)
	if growth > MaxGrowth || math.IsNaN(growth) {
		return Need{OnBound: true}
	}
	cells := row.Settings * 2
	if k := row.Claim.Stat.Kind; k == Interaction || k == Widening {
		cells *= 2
	}
	perCell := float64(row.Loads) / float64(cells)
	more := int(math.Ceil(perCell * (growth - 1)))
	more = max(more, 1)
	return Need{PerCell: more, Loads: more * cells}
}

// loadGrowth is the factor by which the loads must grow for the interval
// [lo, hi] around v to clear the bounds that v's side of the region
// needs cleared: inside it, both of the region's bounds; outside it, the
// nearer one. Half-widths shrink as the square root of the loads.
func loadGrowth(r Region, v, lo, hi float64) float64 {
	growth := 1.0
	clear := func(halfWidth, distance float64) {
		if distance <= 0 {
			growth = math.Inf(1)
			return
		}
		growth = max(growth, math.Pow(halfWidth/distance, 2))
	}
	switch {
	case v < r.Low:
		clear(hi-v, r.Low-v)
	case v > r.High:
		clear(v-lo, v-r.High)
	default:
		if !r.lowOpen() {
			clear(v-lo, v-r.Low)
		}
		if !r.highOpen() {
			clear(hi-v, r.High-v)
		}
	}
	return growth
}

// shareNeed is how many more settings a share needs at its observed
// fraction for its Clopper–Pearson interval at the paper's level to leave
// the region's bound, each new setting counting as the row's settings
// counted (Row.Cases over Row.Settings). A share read in each network
// needs them in every network, at the level adjusted over the networks.
func shareNeed(row Row) Need {
	networks := max(row.Networks, 1)
	level := 1 - row.Claim.shareAlpha(networks)
	settings := row.Settings / networks // in the highest share's network, for one read in each
	perSetting := 1.0                   // the independent cases a setting counts, as the row's clusters let it
	if settings > 0 && row.Cases > 0 {
		perSetting = row.Cases / float64(settings)
	}
	for n := settings + 1; n <= MaxGrowth*max(settings, 1); n++ {
		lo, hi := stats.ClopperPearsonEffective(row.Value, perSetting*float64(n), level)
		if decide(row.Claim.Region, lo, hi) != Inconclusive {
			return Need{Settings: (n - settings) * networks}
		}
	}
	return Need{OnBound: true}
}
