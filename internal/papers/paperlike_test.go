package papers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/results"
)

// The spread of a cell's loads measured here: the median coefficient of
// variation of onLoad among a cell's 3 loads in Nepomuceno et al.'s quick
// reproduction on Caddy (seed 1, 2026-11-27, 120 cells): 3 % without loss
// (20 and 200 ms), 9 % at 2 % loss.
const (
	measuredCV      = 0.03
	measuredLossyCV = 0.09
)

// spreadOf is the spread of a load on tr's network.
func spreadOf(tr results.Trial) float64 {
	if tr.LossUpPct+tr.LossDownPct > 0 {
		return measuredLossyCV
	}
	return measuredCV
}

// shareMargin is how much faster (or slower) a setting's winner is in
// loads shaped like a share: a tenth.
const shareMargin = 0.1

// TestAPaperLikeResultAgrees builds, for every claim with a number of its
// paper's (Claim.PaperValue), loads shaped like that result on each
// scale's own plan: a share as the paper's share of settings won by a
// tenth (the rest lost by a tenth), a ratio or round trips as the paper's,
// settings of different pages (about a second each, lognormal; about ten
// round trips for the one-server pages round-trip claims read) and every
// load with the spread measured here. At paper scale each must agree; at quick scale each must agree
// unless it is marked paper scale only (Claim.PaperScaleOnly), and then it
// must not.
func TestAPaperLikeResultAgrees(t *testing.T) {
	t.Parallel()
	for _, p := range All() {
		t.Run(p.ID, func(t *testing.T) {
			t.Parallel() // thousands of resamples per claim: the papers share the cores
			for _, scale := range []Scale{Quick, Full} {
				sources, _ := loadsOf(t, p.Specs[scale])
				for i, c := range p.Claims {
					if c.NotReproduced != "" || c.PaperValue == 0 || scale == Quick && c.NotAtQuick {
						continue
					}
					if problem := paperLikeProblem(p, c, scale, sources, uint64(i)); problem != "" {
						t.Errorf("%s %s at %s scale: %s", p.ID, c.ID, scale, problem)
					}
				}
			}
		})
	}
}

// paperLikeProblem says what is wrong with claim c of p at scale, whose
// plan's loads are sources, when loads like its paper's result are
// evaluated: they do not agree (at quick scale: unless it is marked paper
// scale only), or they agree though it is so marked; "" when nothing is.
func paperLikeProblem(p Paper, c Claim, scale Scale, sources []Source, seed uint64) string {
	row := Evaluate(Paper{ID: p.ID, Claims: []Claim{c}}, paperLike(c, sources, seed), Options{Reps: 400, Seed: 7})[0]
	marked := scale == Quick && c.PaperScaleOnly != ""
	if (row.Verdict == Agrees) != marked {
		return ""
	}
	what := fmt.Sprintf("loads like the paper's %s give %s (%s in %d settings, %s interval [%s, %s]; holds if %s)",
		FormatValue(c.Stat.Kind, c.PaperValue), row.Verdict, FormatValue(c.Stat.Kind, row.Value), row.Settings,
		levelText(c), FormatValue(c.Stat.Kind, row.LevelLo), FormatValue(c.Stat.Kind, row.LevelHi), row.HoldsIf())
	if marked {
		return what + ", yet it is marked paper scale only"
	}
	return what
}

// TestThePaperLikeCheckFails: the check above fails a claim whose region
// a result like its paper's cannot reach at paper scale (Nepomuceno et
// al.'s C1 with "under 30 %" for the paper's 34 %), and a claim marked
// paper scale only that agrees at quick scale (C6, whose ≈ 1 its quick
// scale tells).
func TestThePaperLikeCheckFails(t *testing.T) {
	p := nepomuceno2018()
	full, _ := loadsOf(t, p.Specs[Full])
	quick, _ := loadsOf(t, p.Specs[Quick])
	unreachable := claimOf(t, p, "C1")
	unreachable.Region = Below(0.30)
	if problem := paperLikeProblem(p, unreachable, Full, full, 1); !strings.Contains(problem, "give disagrees") && !strings.Contains(problem, "give inconclusive") {
		t.Errorf("C1 under 30 %%: %q, want the check to fail", problem)
	}
	if problem := paperLikeProblem(p, claimOf(t, p, "C1"), Full, full, 1); problem != "" {
		t.Errorf("C1 as it is: %s", problem)
	}
	stale := claimOf(t, p, "C6")
	stale.PaperScaleOnly = "said so by mistake"
	if problem := paperLikeProblem(p, stale, Quick, quick, 1); !strings.HasSuffix(problem, "give agrees") && !strings.Contains(problem, "yet it is marked paper scale only") {
		t.Errorf("C6 marked paper scale only: %q, want the check to fail", problem)
	}
}

// claimOf is p's claim id.
func claimOf(t *testing.T, p Paper, id string) Claim {
	t.Helper()
	for _, c := range p.Claims {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("%s has no claim %s", p.ID, id)
	return Claim{}
}

// paperLike copies sources with the claim's metric, in its cells, shaped
// like the paper's result (see TestAPaperLikeResultAgrees); seed draws the
// settings' pages, which settings win, and the loads' spread.
func paperLike(c Claim, sources []Source, seed uint64) []Source {
	n := len(groupIndex(c, sources))
	rng := rand.New(rand.NewPCG(seed, 11))
	base := make([]float64, n)
	for g := range base {
		base[g] = 1000 * math.Exp(0.5*rng.NormFloat64()) // pages differ
	}
	winner := make([]bool, n)
	if c.Stat.Kind == Share {
		for _, g := range rng.Perm(n)[:int(math.Round(c.PaperValue*float64(n)))] {
			winner[g] = true
		}
	}
	return reshape(c, sources, func(tr results.Trial, _ float64, slot, g int) float64 {
		b := base[g]
		if c.Stat.Kind == RTTsSaved { // the one-server pages of these claims: about ten round trips
			b = b / 100 * tr.RTTMs
		}
		return paperLikeValue(c.Stat.Kind, c.PaperValue, b, tr.RTTMs, slot, winner[g]) * math.Exp(spreadOf(tr)*rng.NormFloat64())
	})
}

// paperLikeValue is a load's value before its spread: base, and at the
// contrast's To level the paper's ratio, round trips saved or a win or a
// loss by shareMargin.
func paperLikeValue(k Kind, paper, base, rttMs float64, slot int, wins bool) float64 {
	switch {
	case k == Ratio && slot == 1, k == Interaction && slot == 3:
		return base * paper
	case k == RTTsSaved && slot == 1:
		return base - paper*rttMs
	case k == Share && slot == 1 && wins:
		return base * (1 - shareMargin)
	case k == Share && slot == 1:
		return base * (1 + shareMargin)
	}
	return base
}

// regionSlack is how much looser than the paper's own interval a share
// claim's region may be: its bound at most this far past the interval's
// end (Nepomuceno et al.'s C2, "under a third" for 24 % of 1,200 cases,
// whose upper end is 27 %, is the loosest).
const regionSlack = 0.075

// TestShareRegionsHoldThePaperAndLittleMore: every share claim with a
// paper value says how many cases it counts, and its region holds the
// paper's own result at that n — and is not far looser, so that a
// reproduction tests the paper's figure and not a direction (the audit of
// issue 65 found Masri C8, Biswal C6, C8, C9 and Wolsing C13, C14 at
// "over half" for 82–96 %).
func TestShareRegionsHoldThePaperAndLittleMore(t *testing.T) {
	for _, p := range All() {
		for _, c := range p.Claims {
			if c.Stat.Kind != Share || c.PaperValue == 0 {
				continue
			}
			if problem := regionProblem(c); problem != "" {
				t.Errorf("%s %s: %s", p.ID, c.ID, problem)
			}
		}
	}
}

// regionProblem says what is wrong with share claim c's region against
// its paper's own result; "" when nothing is.
func regionProblem(c Claim) string {
	lo, hi, ok := c.PaperInterval()
	if !ok {
		return "a share with a paper value needs the cases it counts (PaperN)"
	}
	paper := fmt.Sprintf("the paper's %s of %d (interval [%.3f, %.3f])", FormatValue(Share, c.PaperValue), c.PaperN, lo, hi)
	switch r := c.Region; {
	case lo < r.Low || hi > r.High:
		return fmt.Sprintf("region [%.2f, %.2f] does not hold %s", r.Low, r.High, paper)
	case r.Low > 0 && lo-r.Low > regionSlack, r.High < 1 && r.High-hi > regionSlack:
		return fmt.Sprintf("region [%.2f, %.2f] is far looser than %s", r.Low, r.High, paper)
	}
	return ""
}

// TestARegionFarLooserThanThePaperIsCaught: the check above fails
// Masri et al.'s C8 at "over half" as it was, and one that excludes the
// paper's own result.
func TestARegionFarLooserThanThePaperIsCaught(t *testing.T) {
	c := claimOf(t, masri(), "C8")
	if problem := regionProblem(c); problem != "" {
		t.Fatalf("C8 as it is: %s", problem)
	}
	c.Region = Above(0.5)
	if problem := regionProblem(c); !strings.Contains(problem, "far looser") {
		t.Errorf("C8 over half: %q, want far looser", problem)
	}
	c.Region = Above(0.7)
	if problem := regionProblem(c); !strings.Contains(problem, "does not hold") {
		t.Errorf("C8 over 70 %%: %q, want does not hold", problem)
	}
	c.PaperN = 0
	if problem := regionProblem(c); !strings.Contains(problem, "PaperN") {
		t.Errorf("C8 without its n: %q", problem)
	}
}
