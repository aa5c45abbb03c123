package papers

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/stats"
)

// spread are n loads of one cell around ms, spread ±10 % in a fixed
// pattern whose mean is ms for any multiple of 4 loads.
func spread(network, page, protocol string, ms float64, n int) []results.Trial {
	var out []results.Trial
	for i := range n {
		wobble := []float64{0.9, 1.1, 0.95, 1.05}[i%4]
		out = append(out, load(fmt.Sprintf("%s-%s-%s-%d", network, page, protocol, i), network, page, protocol, 50, ms*wobble))
	}
	return out
}

func TestAnInconclusiveClaimSaysHowManyLoadsDecideIt(t *testing.T) {
	c := Claim{Location: Mean, Stat: Stat{Kind: Ratio, Vary: h3VsH2}, Region: Below(1)}
	cell := func(n int) []results.Trial {
		return append(spread("a", "p", "h2", 1000, n), spread("a", "p", "h3", 950, n)...)
	}
	row := evaluateOne(t, c, cell(4))
	if row.Verdict != Inconclusive || row.Need.PerCell <= 0 || row.Need.Loads != 2*row.Need.PerCell {
		t.Fatalf("4 loads a cell: %s, interval [%.3f, %.3f], need %+v: want inconclusive with a need", row.Verdict, row.LevelLo, row.LevelHi, row.Need)
	}
	if !strings.Contains(row.ToDecide(), fmt.Sprintf("about %d more loads (%d a cell)", row.Need.Loads, row.Need.PerCell)) {
		t.Errorf("to decide: %q", row.ToDecide())
	}
	// The projection holds at the same spread: that many more loads, to
	// the pattern's next whole period, decide it.
	n := 4 + row.Need.PerCell
	n += (4 - n%4) % 4
	if more := evaluateOne(t, c, cell(n)); more.Verdict != Agrees {
		t.Errorf("%d loads a cell (4 + %d projected): %s [%.3f, %.3f], want agrees", n, row.Need.PerCell, more.Verdict, more.LevelLo, more.LevelHi)
	}
	if decided := evaluateOne(t, c, cell(n)); decided.Need != (Need{}) || decided.ToDecide() != "" {
		t.Errorf("a decided claim has a need: %+v", decided.Need)
	}
}

func TestAValueOnABoundCannotBeDecidedByMoreLoads(t *testing.T) {
	c := Claim{Location: Mean, Stat: Stat{Kind: Ratio, Vary: h3VsH2}, Region: Below(1)}
	row := evaluateOne(t, c, append(spread("a", "p", "h2", 1000, 4), spread("a", "p", "h3", 1000, 4)...))
	if row.Verdict != Inconclusive || !row.Need.OnBound {
		t.Errorf("h3 = h2 against a bound at 1: %s, need %+v; want inconclusive on the bound", row.Verdict, row.Need)
	}
}

func TestLoadGrowthClearsTheBoundsTheValuesSideNeeds(t *testing.T) {
	for _, tc := range []struct {
		r         Region
		v, lo, hi float64
		want      float64
	}{
		{Below(1), 0.9, 0.7, 1.1, 4},           // inside: the half-width 0.2 must become 0.1
		{Within(0.9, 1.1), 1, 0.8, 1.05, 4},    // inside: the low side (0.2 to 0.1) rules
		{Above(1), 0.8, 0.6, 1.2, 4},           // outside below: the top must fall under 1
		{Within(0.5, 1.5), 2, 1.4, 2.6, 1.44},  // outside above: 0.6 to 0.5
		{Below(1), 1, 0.9, 1.1, math.Inf(1)},   // on the bound
		{Within(0.75, 1.75), 1.2, 1.1, 1.3, 1}, // already clear of both
	} {
		if got := loadGrowth(tc.r, tc.v, tc.lo, tc.hi); math.Abs(got-tc.want) > 1e-9 && !(math.IsInf(got, 1) && math.IsInf(tc.want, 1)) {
			t.Errorf("%+v, %.2f in [%.2f, %.2f]: growth %.3f, want %.3f", tc.r, tc.v, tc.lo, tc.hi, got, tc.want)
		}
	}
}

func TestAShareSaysHowManyMoreSettingsDecideIt(t *testing.T) {
	c := Claim{Location: Mean, Stat: Stat{Kind: Share, Vary: h3VsH2}, Region: Below(0.5)}
	var trials []results.Trial
	for i, h3 := range []float64{800, 1200, 1300, 1100} {
		trials = append(trials, loads("a", fmt.Sprint("p", i), "h2", 50, 1000, 3)...)
		trials = append(trials, loads("a", fmt.Sprint("p", i), "h3", 50, h3, 3)...)
	}
	row := evaluateOne(t, c, trials)
	if row.Verdict != Inconclusive || row.Need.Settings <= 0 || row.Need.Loads != 0 {
		t.Fatalf("1 win in 4: %s, need %+v; want a need of settings", row.Verdict, row.Need)
	}
	n := 4 + row.Need.Settings // four pages of one setting each: a setting is a case
	if lo, hi := clopper(0.25, n); decide(c.Region, lo, hi) != Agrees {
		t.Errorf("a quarter of %d settings won: [%.3f, %.3f] does not agree", n, lo, hi)
	}
	if lo, hi := clopper(0.25, n-1); decide(c.Region, lo, hi) != Inconclusive {
		t.Errorf("one setting fewer (%d) already decides: the need is not the least", n-1)
	}
}

// clopper is Clopper–Pearson's 95 % interval of a share of n cases.
func clopper(share float64, n int) (float64, float64) {
	return stats.ClopperPearsonEffective(share, float64(n), 0.95)
}
