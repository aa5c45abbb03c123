package papers

import (
	"fmt"
	"math"
	"testing"

	"github.com/quicbench/quicbench/internal/results"
)

// TestSmallCellsGetAnHonestInterval: with 2 loads a cell, resampling can
// give no ratio beyond the cells' extremes (here at most 900/1000 in each
// setting); the interval reaches past it to the pooled t interval, worked
// out by hand: three settings of h2 {1000, 1100} and h3 {800, 900}, pooled
// squared CV 0.005728 on 6 degrees of freedom, t = 2.447, standard error
// of the mean log ratio √(3 × 0.005728) / 3 = 0.04370, around the ratio
// 850/1050 = 0.8095: [0.7274, 0.9009].
func TestSmallCellsGetAnHonestInterval(t *testing.T) {
	var trials []results.Trial
	for i := range 3 {
		page := fmt.Sprint("p", i)
		trials = append(trials, load(page+"-h2-a", "a", page, "h2", 50, 1000), load(page+"-h2-b", "a", page, "h2", 50, 1100),
			load(page+"-h3-a", "a", page, "h3", 50, 800), load(page+"-h3-b", "a", page, "h3", 50, 900))
	}
	row := evaluateOne(t, Claim{Location: Mean, Stat: Stat{Kind: Ratio, Vary: h3VsH2}, Region: Below(1)}, trials)
	if math.Abs(row.Value-850.0/1050) > 1e-9 || math.Abs(row.Lo-0.7274) > 0.0005 || math.Abs(row.Hi-0.9009) > 0.0005 {
		t.Errorf("ratio %.4f [%.4f, %.4f], want 0.8095 [0.7274, 0.9009]", row.Value, row.Lo, row.Hi)
	}
	if row.Hi <= 0.9 {
		t.Errorf("the interval's top %.4f does not reach past what resampling the cells can give (0.9)", row.Hi)
	}
}

// TestLargeCellsKeepTheBootstrap: with SmallCell loads a cell or more the
// interval is the bootstrap's alone: it stays within the settings' most
// extreme ratios.
func TestLargeCellsKeepTheBootstrap(t *testing.T) {
	var trials []results.Trial
	for i := range 3 {
		page := fmt.Sprint("p", i)
		trials = append(trials, loads("a", page, "h2", 50, 1000, SmallCell)...)
		trials = append(trials, loads("a", page, "h3", 50, 800, SmallCell)...)
	}
	row := evaluateOne(t, Claim{Location: Mean, Stat: Stat{Kind: Ratio, Vary: h3VsH2}, Region: Below(1)}, trials)
	if row.Lo < 0.8*0.98/1.02-1e-9 || row.Hi > 0.8*1.02/0.98+1e-9 {
		t.Errorf("ratio %.4f [%.4f, %.4f]: wider than resampling %d loads a cell can give", row.Value, row.Lo, row.Hi, SmallCell)
	}
}
