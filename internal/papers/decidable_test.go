package papers

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/stats"
)

// TestEveryClaimCanAgreeAndCanFail builds, for every testable claim at
// each scale, loads on that scale's own plan (so with its number of
// settings and loads) whose statistic lies well inside the claim's region,
// and loads whose statistic lies well outside it: the first must give
// "agrees" and the second "disagrees". A claim that fails it is decided
// before a load is run: its region or its cells leave one verdict out of
// reach (a share bound below what its settings can show, a region no
// value of its statistic can leave). At quick scale a claim marked paper
// scale only (Claim.PaperScaleOnly: its settings cannot bound a share
// near the paper's) need only be able to fail, a share whose quick scale
// has too few settings to fail (shareDecidable) must be so marked, and one
// the quick scale leaves out (Claim.NotAtQuick) must have no loads there.
func TestEveryClaimCanAgreeAndCanFail(t *testing.T) {
	t.Parallel()
	for _, p := range All() {
		t.Run(p.ID, func(t *testing.T) {
			t.Parallel() // thousands of resamples per claim: the papers share the cores
			claimsCanAgreeAndFail(t, p)
		})
	}
}

// claimsCanAgreeAndFail checks TestEveryClaimCanAgreeAndCanFail's rule
// for each claim of p at both scales, a claim to a parallel subtest.
func claimsCanAgreeAndFail(t *testing.T, p Paper) {
	for _, scale := range []Scale{Quick, Full} {
		sources, _ := loadsOf(t, p.Specs[scale]) // read only by the subtests
		for _, c := range p.Claims {
			if c.NotReproduced != "" {
				continue
			}
			t.Run(fmt.Sprintf("%s/%s", scale, c.ID), func(t *testing.T) {
				t.Parallel()
				claimCanAgreeAndFail(t, p, c, scale, sources)
			})
		}
	}
}

// claimCanAgreeAndFail checks claim c of p at scale on loads shaped from
// sources to agree and to disagree.
func claimCanAgreeAndFail(t *testing.T, p Paper, c Claim, scale Scale, sources []Source) {
	if scale == Quick && c.NotAtQuick {
		if row := Evaluate(Paper{ID: p.ID, Claims: []Claim{c}}, sources, Options{Reps: 10})[0]; row.Verdict != NotMeasured {
			t.Errorf("%s %s is marked as left out of the quick scale, yet it has %d settings there", p.ID, c.ID, row.Settings)
		}
		return
	}
	if c.Stat.Kind == Share && scale == Quick && !shareDecidable(c, sources) {
		if c.PaperScaleOnly == "" {
			t.Errorf("%s %s: its quick scale has %d settings, too few to decide a share either way, yet it is not marked paper scale only", p.ID, c.ID, len(groupIndex(c, sources)))
		}
		return
	}
	for _, want := range []Verdict{Agrees, Disagrees} {
		if want == Agrees && scale == Quick && c.PaperScaleOnly != "" {
			continue
		}
		shaped := shapeLoads(c, claimLoads(c, sources), want)
		row := Evaluate(Paper{ID: p.ID, Claims: []Claim{c}}, shaped, Options{Reps: 400, Seed: 7})[0]
		if row.Verdict != want {
			t.Errorf("%s %s at %s scale: loads built to give %q give %s (%s in %d settings, %s interval [%s, %s]; holds if %s)",
				p.ID, c.ID, scale, want, row.Verdict, FormatValue(c.Stat.Kind, row.Value), row.Settings,
				levelText(c), FormatValue(c.Stat.Kind, row.LevelLo), FormatValue(c.Stat.Kind, row.LevelHi), row.HoldsIf())
		}
	}
}

func levelText(c Claim) string {
	return FormatValue(Share, 1-c.alpha())
}

// shapeLoads copies sources with the claim's metric set, in the claim's
// cells, so that its statistic lies well inside its region (want Agrees)
// or well outside it (Disagrees); other loads keep their values.
func shapeLoads(c Claim, sources []Source, want Verdict) []Source {
	target := targetOf(c.Stat.Kind, c.Region, want)
	index := groupIndex(c, sources)
	wins := int(math.Round(target * float64(len(index))))
	return reshape(c, sources, index, func(_ string, tr results.Trial, v float64, slot, group int) float64 {
		return shaped(c.Stat.Kind, v, tr.RTTMs, slot, target, group < wins)
	})
}

// shareDecidable reports whether share claim c's settings in sources are
// enough for a unanimous share against the claim (no setting won, or
// every one) to disagree at the claim's level: one site is not enough
// for a region over 55 %.
func shareDecidable(c Claim, sources []Source) bool {
	n, level := float64(len(groupIndex(c, sources))), 1-c.alpha()
	_, noneHi := stats.ClopperPearsonEffective(0, n, level)
	allLo, _ := stats.ClopperPearsonEffective(1, n, level)
	return decide(c.Region, 0, noneHi) == Disagrees || decide(c.Region, allLo, 1) == Disagrees
}

// claimLoads are sources' loads that claim c reads (in its cells, at a
// level its statistic compares), in their order: Evaluate of c alone
// gives the same row on them as on all of sources, and shaping them copies
// a fraction of a paper-scale design's loads.
func claimLoads(c Claim, sources []Source) []Source {
	out := make([]Source, len(sources))
	for i, src := range sources {
		var keep []int // indices first: a trial is large, copied once
		for j := range src.Trials {
			levels := src.Trials[j].Levels.Factors()
			if _, ok := slotOf(c.Stat, levels); ok && c.Cells.Has(levels) {
				keep = append(keep, j)
			}
		}
		out[i] = Source{Run: src.Run, Round: src.Round, Trials: make([]results.Trial, len(keep))}
		for k, j := range keep {
			out[i].Trials[k] = src.Trials[j]
		}
	}
	return out
}

// reshape copies sources with the claim's metric, in its cells, set to
// value(its run, load, its value, its slot, its setting's number in
// groups, groupIndex's); other loads keep their values.
func reshape(c Claim, sources []Source, groups map[factor.Levels]int, value func(run string, tr results.Trial, v float64, slot, group int) float64) []Source {
	metric, _ := results.MetricNamed(c.Metric)
	then, _ := results.MetricNamed(c.Stat.Then)
	out := make([]Source, len(sources))
	for i, src := range sources {
		out[i] = Source{Run: src.Run, Trials: slices.Clone(src.Trials)}
		for j := range out[i].Trials {
			tr := &out[i].Trials[j]
			levels := tr.Levels.Factors()
			slot, ok := slotOf(c.Stat, levels)
			if v := metric.Value(*tr); ok && v != nil && c.Cells.Has(levels) {
				g := groups[groupKey(c.Stat, levels)]
				if tv := then.Value; c.Stat.Kind == Widening && tv(*tr) != nil {
					setMetric(tr, c.Stat.Then, value(src.Run, *tr, *tv(*tr), slot+2, g))
				}
				setMetric(tr, c.Metric, value(src.Run, *tr, *v, slot, g))
			}
		}
	}
	return out
}

// groupKey is a load's setting as collect groups them.
func groupKey(s Stat, l factor.Levels) factor.Levels {
	l.Set(s.Vary.Factor, "")
	if s.Kind == Interaction {
		l.Set(s.By.Factor, "")
	}
	return l
}

// groupIndex numbers the claim's settings in the order of their first load.
func groupIndex(c Claim, sources []Source) map[factor.Levels]int {
	index := map[factor.Levels]int{}
	for _, src := range sources {
		for _, tr := range src.Trials {
			levels := tr.Levels.Factors()
			if _, ok := slotOf(c.Stat, levels); !ok || !c.Cells.Has(levels) {
				continue
			}
			if key := groupKey(c.Stat, levels); index[key] == 0 {
				index[key] = len(index) + 1
			}
		}
	}
	for k, v := range index {
		index[k] = v - 1
	}
	return index
}

// targetOf is the statistic's value the shaped loads aim at: the region's
// middle to agree, twice as far out as its nearest bound (or one unit for
// round trips) to disagree; for a share, the fraction of settings won.
func targetOf(k Kind, r Region, want Verdict) float64 {
	if k == Share {
		switch {
		case want == Agrees && r.lowOpen():
			return 0
		case want == Agrees && r.highOpen():
			return 1
		case want == Agrees:
			return (r.Low + r.High) / 2
		case r.Low > 0:
			return 0
		}
		return 1
	}
	additive := k == RTTsSaved || k == Widening
	step := 1.0 // a round trip
	if k == Widening {
		step = 1000 // ms
	}
	inside := func() float64 {
		switch {
		case r.lowOpen() && additive:
			return r.High - step
		case r.lowOpen():
			return r.High / 2
		case r.highOpen() && additive:
			return r.Low + step
		case r.highOpen():
			return r.Low * 2
		case additive:
			return (r.Low + r.High) / 2
		}
		return math.Sqrt(r.Low * r.High)
	}
	if want == Agrees {
		return inside()
	}
	if r.lowOpen() || (!r.highOpen() && r.Low <= 0 && additive) {
		if additive {
			return r.High + step
		}
		return r.High * 2
	}
	if additive {
		return r.Low - step
	}
	return r.Low / 2
}

// shaped is a load's new value v given its slot in its setting.
func shaped(k Kind, v, rttMs float64, slot int, target float64, wins bool) float64 {
	switch {
	case k == Ratio && slot == 1, k == Interaction && slot == 3:
		return v * target
	case k == RTTsSaved && slot == 1: // both slots ten round trips longer: room to save some on a long link
		return v + (10-target)*rttMs
	case k == RTTsSaved:
		return v + 10*rttMs
	case k == Share && slot == 1 && wins:
		return v / 2
	case k == Share && slot == 1:
		return v * 2
	case k == Widening:
		return wideningValue(v, slot, target)
	}
	return v
}

// wideningValue is a load's value for a Widening whose value is widening
// (ms): From's at the earlier metric base, To's 30 % less; at the later
// metric To's 3.7 times base and From's 4 times base plus widening, so
// that To's lead grows by widening.
func wideningValue(base float64, slot int, widening float64) float64 {
	switch slot {
	case 1:
		return 0.7 * base
	case 2:
		return 4*base + widening
	case 3:
		return 3.7 * base
	}
	return base
}

// TestTheCheckFindsAClaimDecidedInAdvance: the check above fails a claim
// whose region its settings cannot reach (Nepomuceno et al.'s C3 as it
// was: a share below 13 % over 24 settings, where even no win leaves the
// interval's top at 14 %), and passes it with more settings.
func TestTheCheckFindsAClaimDecidedInAdvance(t *testing.T) {
	c := Claim{ID: "C3", Metric: "plt", Location: Mean, Stat: Stat{Kind: Share, Vary: h3VsH2}, Region: Below(0.13)}
	for _, tc := range []struct {
		pages int
		want  Verdict
	}{{24, Inconclusive}, {30, Agrees}} {
		var trials []results.Trial
		for i := range tc.pages {
			trials = append(trials, loads("a", fmt.Sprint("p", i), "h2", 50, 1000, 3)...)
			trials = append(trials, loads("a", fmt.Sprint("p", i), "h3", 50, 1000, 3)...)
		}
		shaped := shapeLoads(c, []Source{{Trials: trials}}, Agrees)
		if row := Evaluate(Paper{Claims: []Claim{c}}, shaped, Options{Reps: 100})[0]; row.Verdict != tc.want || row.Value != 0 {
			t.Errorf("%d pages, no win for h3: %s at %s, want %s", tc.pages, row.Verdict, FormatValue(Share, row.Value), tc.want)
		}
	}
}

// TestClaimLoadsGiveTheSameRow: the checks above shape only the loads a
// claim reads (claimLoads), which holds only while Evaluate of a claim
// reads nothing else; paper-like loads of every claim of two papers give
// the same row on the claim's loads as on the whole plan's.
func TestClaimLoadsGiveTheSameRow(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"masri", "cook"} {
		p, err := Lookup(id)
		if err != nil {
			t.Fatal(err)
		}
		sources, _ := loadsOf(t, p.Specs[Quick])
		for i, c := range p.Claims {
			if c.NotReproduced != "" || c.NotAtQuick {
				continue
			}
			shaped := paperLike(p, c, sources, uint64(i))
			one := Paper{ID: p.ID, Claims: []Claim{c}}
			all := Evaluate(one, shaped, Options{Reps: 50, Seed: 3})[0]
			own := Evaluate(one, claimLoads(c, shaped), Options{Reps: 50, Seed: 3})[0]
			if all.Verdict != own.Verdict || all.Value != own.Value || all.LevelLo != own.LevelLo || all.Settings != own.Settings {
				t.Errorf("%s %s: on all loads %s %g [%g, %g] in %d settings, on its own loads %s %g [%g, %g] in %d",
					p.ID, c.ID, all.Verdict, all.Value, all.LevelLo, all.LevelHi, all.Settings, own.Verdict, own.Value, own.LevelLo, own.LevelHi, own.Settings)
			}
		}
	}
}
