package papers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/stats"
)

// cellSpread is the spread of a cell's loads as the paper-like test draws
// them: the median, over a reproduction's cells, of a metric's
// coefficient of variation among a cell's loads, without loss and with
// (scripts/cell-spread.sh on each paper's quick reproduction, BENCHMARKS
// "The paper-like test's spreads"); 0 where the spec has no such cells.
type cellSpread struct{ clean, lossy float64 }

// measuredSpreads are the spreads measured here, by spec and metric.
var measuredSpreads = map[string]map[string]cellSpread{
	// its quick reproduction with discovery, 2026-11-29, 240 cells
	"nepomuceno2018-quick": {"onload": {0.033, 0.150}, "dcl": {0.042, 0.149}},
	// runs/w19-paced, 2026-11-28: 24, 16, 16 and 12 cells
	"wolsing2019-quick":        {"si": {0.020, 0}, "fvc": {0.031, 0}, "plt": {0.022, 0}},
	"wolsing2019-table3-quick": {"si": {0.020, 0}, "fvc": {0.031, 0}, "plt": {0.022, 0}}, // measured as part of wolsing2019-quick
	"wolsing2019-bbr-quick":    {"si": {0.029, 0}, "fvc": {0.016, 0}, "plt": {0.041, 0}},
	"wolsing2019-sites-quick":  {"si": {0.053, 0}, "fvc": {0.046, 0}, "plt": {0.060, 0}},
	"wolsing2019-mss-quick":    {"si": {0, 0.116}, "fvc": {0, 0.199}, "plt": {0, 0.114}},
	// seed 3, 2026-11-29 (scripts/bench-reproduce.sh run 3)
	"masri-quick":               {"onload": {0.059, 0.145}},                      // 24 cells each
	"biswal2016-quick":          {"plt": {0.015, 0.161}},                         // 24 and 48 cells
	"biswal2016-cellular-quick": {"plt": {0.010, 0.012}},                         // 36 and 12 cells
	"biswal2016-sites-quick":    {"plt": {0.023, 0.252}},                         // 16 and 16 cells
	"biswal2016-repeat-quick":   {"plt": {0.004, 0.149}},                         // 8 and 8 cells
	"cook2017-quick":            {"plt": {0.074, 0.232}, "ttfb": {0.003, 1.162}}, // 8 and 4 cells
	"cook2017-access-quick":     {"plt": {0.059, 0}},                             // seed 3, 6 cells
	"cook2017-servers-quick":    {"plt": {0.077, 0}},                             // 8 cells
	"cook2017-altsvc-quick":     {"plt": {0.075, 0}},                             // 4 cells
}

// spreadOf is the spread of a load of claim c of paper p in run (its
// spec's name) on tr's network: the spread measured in that spec's
// cells, else the widest measured in the paper's quick specs (a
// paper-scale spec's, a real-pages run's), else 15 % without loss and
// 50 % with.
func spreadOf(p Paper, run string, c Claim, tr results.Trial) float64 {
	lossy := tr.LossUpPct+tr.LossDownPct > 0
	level := func(s cellSpread) float64 {
		if lossy {
			return s.lossy
		}
		return s.clean
	}
	if v := level(measuredSpreads[strings.TrimSuffix(run, RealRunSuffix)][c.Metric]); v > 0 {
		return v
	}
	widest := 0.0
	for _, spec := range p.Specs[Quick] {
		widest = max(widest, level(measuredSpreads[strings.TrimSuffix(spec, ".yaml")][c.Metric]))
	}
	if widest > 0 {
		return widest
	}
	return level(cellSpread{0.15, 0.5})
}

// Heterogeneity of a paper-like result between settings, in log terms:
// between pages (a page recurs across networks) and between a page's
// networks. Masri et al.'s Figure 10 spreads the QUIC/TCP ratios of its
// nine larger pages at 100 ms over 0.49–0.77 (a standard deviation of
// about 0.12 in log terms).
const (
	pageSpread    = 0.12
	settingSpread = 0.08
)

// paperGrids are the QUIC/TCP ratios a paper gives per network and page,
// which a paper-like result takes for those settings instead of drawing
// them: Masri et al.'s Figure 10 (mean PLT of QUIC over TCP with TLS).
var paperGrids = map[string]map[string]map[string]float64{
	"masri": {
		"rtt5ms-loss0":   masriRow([]float64{320, 200, 120, 351.52, 192.54, 20.76, 105, 115, 65, 68, 43, 38}, []float64{605, 323.14, 65.84, 199.03, 129.51, 49.28, 158.79, 111.79, 50.58, 184.03, 103.12, 50.64}),
		"rtt100ms-loss2": masriRow([]float64{6537.42, 4531.96, 1550, 2350, 1520.85, 1275.34, 1827.38, 1234.75, 813.75, 642.54, 592.37, 538.43}, []float64{3275.24, 2431.26, 817.54, 1199.27, 937.58, 621.54, 1029.49, 826.91, 625.82, 1169.69, 808.51, 435.27}),
		"rtt200ms-loss2": masriRow([]float64{15875.84, 11243.37, 3175.85, 4195.46, 3376.52, 1834.75, 3957.52, 2575.86, 1386.45, 821.37, 759.38, 1754.39}, []float64{8672.42, 5237.49, 1642.48, 2096.03, 1836.93, 1309.05, 2004.88, 1463.51, 1228.8, 2046.25, 1544.36, 1143.9}),
	},
}

// masriRow is a row of Masri et al.'s Figure 10 as ratios by page: its
// TCP and QUIC times in the figure's order of pages.
func masriRow(tcp, quic []float64) map[string]float64 {
	row := map[string]float64{}
	i := 0
	for _, size := range []string{"300KB", "10KB", "1KB", "100B"} {
		for _, n := range []int{128, 64, 2} {
			row[fmt.Sprintf("synthetic:%dx%s", n, size)] = quic[i] / tcp[i]
			i++
		}
	}
	return row
}

// paperLikeSeeds is how many paper-like results each claim is tried on at
// each scale; it can agree there when most of them agree.
const paperLikeSeeds = 3

// recordedSites is how many recorded sites a reproduction on real pages
// (reproduce --sites) has: Nepomuceno et al.'s real-page shares ran on 7
// of the shared recordings on Caddy (issue 76).
const recordedSites = 7

// stacksSaveRTTs is the most round trips before the document's first
// byte h3 can save against TCP+TLS with the TLS 1.3 both sides run here:
// one on a first visit (TCP's handshake), two on a repeat visit (0-RTT
// against TCP's handshake and TLS 1.3's resumption).
var stacksSaveRTTs = map[string]float64{"first": 1, "repeat": 2}

// TestAPaperLikeResultAgrees builds, for every claim, loads shaped like
// a real run of its paper's result on each scale's own plan, and on its
// real-pages plan for a claim about pages: settings of different pages
// (about a second each, lognormal), each setting's effect spread between
// pages and networks around the paper's (pageSpread, settingSpread), a
// share's settings won as often as the paper's share with near-ties
// among them, a modest effect where the paper gives a direction only
// (0.8 or 1.25 times the bound), round trips saved before the first byte
// no more than the stacks here can save (stacksSaveRTTs), and every load
// with the spread measured in the paper's own reproduction
// (measuredSpreads). At paper scale each must agree for most of
// paperLikeSeeds draws; at quick scale too unless it is marked paper scale
// only (Claim.PaperScaleOnly), and then it must not.
func TestAPaperLikeResultAgrees(t *testing.T) {
	t.Parallel()
	for _, p := range All() {
		t.Run(p.ID, func(t *testing.T) {
			t.Parallel() // thousands of resamples per claim: the papers share the cores
			for _, plan := range paperLikePlans(t, p) {
				for i, c := range p.Claims {
					if c.NotReproduced != "" || plan.scale == Quick && c.NotAtQuick || plan.real && !c.Pages {
						continue
					}
					if problem := paperLikeProblem(p, c, plan.scale, plan.real, plan.sources, uint64(i)); problem != "" {
						t.Errorf("%s %s at %s scale%s: %s", p.ID, c.ID, plan.scale, plan.where(), problem)
					}
				}
			}
		})
	}
}

// paperLikePlan is the loads a reproduction of a paper plans at a scale:
// its specs', or (real) its real-pages spec's on recorded sites.
type paperLikePlan struct {
	scale   Scale
	real    bool
	sources []Source
}

func (p paperLikePlan) where() string {
	if p.real {
		return fmt.Sprintf(" on %d recorded sites", recordedSites)
	}
	return ""
}

// paperLikePlans are p's plans at both scales, on recorded sites too
// where p has a real-pages spec.
func paperLikePlans(t *testing.T, p Paper) []paperLikePlan {
	var plans []paperLikePlan
	for _, scale := range []Scale{Quick, Full} {
		sources, _ := loadsOf(t, p.Specs[scale])
		plans = append(plans, paperLikePlan{scale: scale, sources: sources})
		if spec := p.RealPages[scale]; spec != "" {
			real, _ := loadsOf(t, []string{spec})
			plans = append(plans, paperLikePlan{scale: scale, real: true, sources: onRecordedSites(real)})
		}
	}
	return plans
}

// onRecordedSites replaces the pages of sources' loads by recordedSites
// recorded sites: every load of the first page, once for each site.
func onRecordedSites(sources []Source) []Source {
	out := make([]Source, len(sources))
	for i, src := range sources {
		out[i].Run = src.Run + RealRunSuffix
		first := ""
		for _, tr := range src.Trials {
			if first == "" {
				first = tr.Page
			}
			if tr.Page != first {
				continue
			}
			for site := range recordedSites {
				copy := tr
				copy.Page = fmt.Sprintf("%s:site%d.har", factor.PageArchive, site)
				copy.ID = fmt.Sprintf("%s-s%d", tr.ID, site)
				out[i].Trials = append(out[i].Trials, copy)
			}
		}
	}
	return out
}

// paperLikeProblem says what is wrong with claim c of p at scale, whose
// plan's loads are sources, when loads like its paper's result are
// evaluated (real: on recorded sites): most draws do not agree (at
// quick scale: unless it is marked paper scale only; on recorded sites:
// unless it is marked as needing more, Claim.FewSites; at any scale:
// unless it is marked as needing more than the paper's design,
// Claim.BeyondPaperScale), or most agree though it is so marked; "" when
// nothing is.
func paperLikeProblem(p Paper, c Claim, scale Scale, real bool, sources []Source, stream uint64) string {
	agreed := 0
	var last Row
	sources = claimLoads(c, sources)
	for seed := range uint64(paperLikeSeeds) {
		last = Evaluate(Paper{ID: p.ID, Claims: []Claim{c}}, paperLike(p, c, sources, stream*paperLikeSeeds+seed), Options{Reps: 250, Seed: 7})[0]
		if last.Verdict == Agrees {
			agreed++
		}
	}
	agrees := 2*agreed > paperLikeSeeds
	marked := c.BeyondPaperScale != "" || !real && scale == Quick && c.PaperScaleOnly != "" || real && c.FewSites != ""
	if agrees != marked {
		return ""
	}
	k := c.Stat.Kind
	what := fmt.Sprintf("loads like the paper's %s agree in %d of %d draws (the last: %s, %s in %d settings, %s interval [%s, %s]; holds if %s)",
		FormatValue(k, paperLikeTarget(c, "")), agreed, paperLikeSeeds, last.Verdict, FormatValue(k, last.Value), last.Settings,
		levelText(c), FormatValue(k, last.LevelLo), FormatValue(k, last.LevelHi), last.HoldsIf())
	switch {
	case marked && c.BeyondPaperScale != "":
		return what + ", yet it is marked as needing more than the paper's design"
	case marked && real:
		return what + ", yet it is marked as needing more recorded sites"
	case marked:
		return what + ", yet it is marked paper scale only"
	}
	return what
}

// paperLikeTarget is the statistic's value a paper-like result has: the
// paper's, or for a claim of a direction only a modest effect beyond its
// bound (0.8 or 1.25 times it, a round trip past it), the middle of a
// region of two bounds; round trips saved before the first byte on a
// visit no more than the stacks here can save.
func paperLikeTarget(c Claim, visit string) float64 {
	r, target := c.Region, c.PaperValue
	if target == 0 {
		switch {
		case !r.lowOpen() && !r.highOpen() && c.Stat.Kind == RTTsSaved:
			target = (r.Low + r.High) / 2
		case !r.lowOpen() && !r.highOpen():
			target = math.Sqrt(r.Low * r.High)
		case c.Stat.Kind == RTTsSaved && r.lowOpen():
			target = r.High - 1
		case c.Stat.Kind == RTTsSaved:
			target = r.Low + 1
		case r.lowOpen():
			target = 0.8 * r.High
		default:
			target = 1.25 * r.Low
		}
	}
	if most, ok := stacksSaveRTTs[visit]; ok && c.Stat.Kind == RTTsSaved && c.Metric == "ttfb" {
		target = min(target, most)
	}
	if c.Stat.InEachNetwork && c.PaperN > 0 && c.PaperNetworks > 1 {
		// the paper's value is the highest of its networks' shares: a
		// network's own lies below it by the expected highest of as many
		// draws of a share's spread at the paper's n
		target -= expectedMaxOfNormals(c.PaperNetworks) * math.Sqrt(target*(1-target)/float64(c.PaperN))
	}
	return target
}

// expectedMaxOfNormals is the expected highest of k standard normal
// draws, ∫ x·k·φ(x)·Φ(x)^(k−1) dx (1.63 for 12).
func expectedMaxOfNormals(k int) float64 {
	const step = 0.001
	var sum float64
	for x := -8.0; x < 8; x += step {
		sum += x * float64(k) * distuv.UnitNormal.Prob(x) * math.Pow(distuv.UnitNormal.CDF(x), float64(k-1)) * step
	}
	return sum
}

// paperLike copies sources with the claim's metric, in its cells, shaped
// like a run of the paper's result (see TestAPaperLikeResultAgrees);
// seed draws the pages, the settings' effects and the loads' spread.
func paperLike(p Paper, c Claim, sources []Source, seed uint64) []Source {
	index := groupIndex(c, sources)
	rng := rand.New(rand.NewPCG(seed, 11))
	effects := settingEffects(p, c, sources, index, rng)
	base := map[string]float64{}
	return reshape(c, sources, index, func(run string, tr results.Trial, _ float64, slot, g int) float64 {
		b, ok := base[tr.Page]
		if !ok {
			b = 1000 * math.Exp(0.5*rng.NormFloat64()) // pages differ
			base[tr.Page] = b
		}
		if c.Stat.Kind == RTTsSaved { // the one-server pages of these claims: about ten round trips
			b = b / 100 * tr.RTTMs
		}
		return paperLikeValue(c.Stat.Kind, effects[g], b, tr.RTTMs, slot) * math.Exp(spreadOf(p, run, c, tr)*rng.NormFloat64())
	})
}

// settingEffects draws each setting's effect (index numbers them): for a
// ratio or interaction its log, spread between pages and networks around
// the target's and centred on it, so that the settings pool to the
// paper's value; for a share a log ratio below 0 as often as the paper's
// share, near-ties among them; for round trips the target; and where the
// paper's own grid gives the setting, the grid's (fromGrid).
func settingEffects(p Paper, c Claim, sources []Source, index map[factor.Levels]int, rng *rand.Rand) []float64 {
	noise := settingNoise(p, c, sources, index)
	pageOf, visitOf := make([]string, len(index)), make([]string, len(index))
	for key, g := range index {
		pageOf[g], visitOf[g] = key.Of(factor.IDPage), key.Of(factor.IDVisit)
	}
	pageDraw := map[string]float64{}
	spread := make([]float64, len(index))
	for g := range spread {
		if _, ok := pageDraw[pageOf[g]]; !ok {
			pageDraw[pageOf[g]] = rng.NormFloat64()
		}
		spread[g] = pageSpread*pageDraw[pageOf[g]] + settingSpread*rng.NormFloat64()
	}
	effects := make([]float64, len(index))
	target := paperLikeTarget(c, "") // once: a share's integrates a maximum
	switch c.Stat.Kind {
	case Share:
		for g := range effects { // observed as the paper observed its share: through its loads' spread
			sd := math.Hypot(math.Hypot(pageSpread, settingSpread), noise[g])
			effects[g] = -sd*distuv.UnitNormal.Quantile(target) + spread[g]
		}
	case RTTsSaved:
		for g := range effects {
			effects[g] = paperLikeTarget(c, visitOf[g])
		}
	case Widening: // ms, spread between pages and networks as a ratio's
		for g := range effects {
			effects[g] = target * math.Exp(spread[g])
		}
	default:
		mean := stats.Mean(spread)
		for g := range effects {
			effects[g] = math.Log(target) + spread[g] - mean
		}
	}
	fromGrid(p, c, index, effects)
	return effects
}

// fromGrid sets the effects of the settings the paper's own grid gives
// (paperGrids) to the grid's log ratio, for a ratio or share of h3
// against TCP.
func fromGrid(p Paper, c Claim, index map[factor.Levels]int, effects []float64) {
	grid := paperGrids[p.ID]
	if grid == nil || c.Stat.Vary.Factor != factor.IDProtocol || c.Stat.Kind != Ratio && c.Stat.Kind != Share {
		return
	}
	for key, g := range index {
		if r, ok := grid[key.Of(factor.IDNetwork)][key.Of(factor.IDPage)]; ok {
			effects[g] = math.Log(r)
		}
	}
}

// settingNoise is, per setting (index numbers them), the spread of the
// log ratio of its two cells' locations that its loads' spread gives:
// √(1/n₁ + 1/n₂) times a load's spread for cells of n₁ and n₂ loads.
func settingNoise(p Paper, c Claim, sources []Source, index map[factor.Levels]int) []float64 {
	loads := make([][2]float64, len(index))
	spread := make([]float64, len(index))
	for _, src := range sources {
		for _, tr := range src.Trials {
			levels := tr.Levels.Factors()
			slot, ok := slotOf(c.Stat, levels)
			if !ok || slot > 1 || !c.Cells.Has(levels) {
				continue
			}
			g := index[groupKey(c.Stat, levels)]
			loads[g][slot]++
			spread[g] = spreadOf(p, src.Run, c, tr)
		}
	}
	noise := make([]float64, len(index))
	for g, n := range loads {
		if n[0] > 0 && n[1] > 0 {
			noise[g] = spread[g] * math.Sqrt(1/n[0]+1/n[1])
		}
	}
	return noise
}

// paperLikeValue is a load's value before its spread: base, and at the
// contrast's To level (the By.To level's for an interaction) base times
// the setting's effect, or less the round trips it saves.
func paperLikeValue(k Kind, effect, base, rttMs float64, slot int) float64 {
	switch {
	case k == Widening:
		return wideningValue(base, slot, effect)
	case k == RTTsSaved && slot == 1:
		return base - effect*rttMs
	case k == Interaction && slot == 3, k != Interaction && k != RTTsSaved && slot == 1:
		return base * math.Exp(effect)
	}
	return base
}

// TestThePaperLikeCheckFails: the check above fails a claim whose region
// a result like its paper's cannot reach at paper scale (Nepomuceno et
// al.'s C1 with "under 30 %" for the paper's 34 %), a claim whose
// paper's figure the stacks here cannot reach (Cook et al.'s C8, 2 RTT
// saved on a first visit, where TLS 1.3 leaves 1 to save), a share that
// cannot agree at quick scale unmarked (Masri et al.'s C8, 20 of 24 on 6
// pages), and a claim marked paper scale only that agrees at quick scale
// (Nepomuceno's C6, whose ≈ 1 its quick scale tells).
func TestThePaperLikeCheckFails(t *testing.T) {
	nep := nepomuceno2018()
	full, _ := loadsOf(t, nep.Specs[Full])
	quick, _ := loadsOf(t, nep.Specs[Quick])
	unreachable := claimOf(t, nep, "C1")
	unreachable.Region = Below(0.30)
	if problem := paperLikeProblem(nep, unreachable, Full, false, full, 1); !strings.Contains(problem, "agree in 0 of") {
		t.Errorf("C1 under 30 %%: %q, want the check to fail", problem)
	}
	if problem := paperLikeProblem(nep, claimOf(t, nep, "C1"), Full, false, full, 1); problem != "" {
		t.Errorf("C1 as it is: %s", problem)
	}
	stale := claimOf(t, nep, "C6")
	stale.PaperScaleOnly = "said so by mistake"
	if problem := paperLikeProblem(nep, stale, Quick, false, quick, 1); !strings.Contains(problem, "yet it is marked paper scale only") {
		t.Errorf("C6 marked paper scale only: %q, want the check to fail", problem)
	}
	cook := cook2017()
	cookFull, _ := loadsOf(t, cook.Specs[Full])
	c8 := claimOf(t, cook, "C8") // as it was tested before it was marked: the paper's 2 RTT on a first visit
	c8.NotReproduced, c8.Metric, c8.Location, c8.PaperValue, c8.Region = "", "ttfb", Median, 2, Within(1.5, 2.5)
	c8.Stat = Stat{Kind: RTTsSaved, Vary: protocols("h2", "h3")}
	c8.Cells = Cells{factor.IDDiscovery: {"forced"}, factor.IDNetwork: {"delay200-loss0"}, factor.IDVisit: {"first"}, factor.IDOrigins: {"1"}}
	if problem := paperLikeProblem(cook, c8, Full, false, cookFull, 1); !strings.Contains(problem, "agree in 0 of") {
		t.Errorf("Cook C8 tested as the paper's 2 RTT: %q, want the check to fail", problem)
	}
	masri := masri()
	masriQuick, _ := loadsOf(t, masri.Specs[Quick])
	m8 := claimOf(t, masri, "C8") // as it was: over 60 %, counting 24 settings
	m8.PaperScaleOnly, m8.Region = "", Above(0.6)
	if problem := paperLikeProblem(masri, m8, Quick, false, masriQuick, 1); !strings.Contains(problem, "agree in") {
		t.Errorf("Masri C8 unmarked at quick scale: %q, want the check to fail", problem)
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
// Masri et al.'s C8 (10 of its 12 pages) at "over 40 %", and at "over
// 60 %", which excludes the paper's own result.
func TestARegionFarLooserThanThePaperIsCaught(t *testing.T) {
	c := claimOf(t, masri(), "C8")
	if problem := regionProblem(c); problem != "" {
		t.Fatalf("C8 as it is: %s", problem)
	}
	c.Region = Above(0.4)
	if problem := regionProblem(c); !strings.Contains(problem, "far looser") {
		t.Errorf("C8 over 40 %%: %q, want far looser", problem)
	}
	c.Region = Above(0.6)
	if problem := regionProblem(c); !strings.Contains(problem, "does not hold") {
		t.Errorf("C8 over 60 %% (10 of its 12 pages: 52–98 %%): %q, want does not hold", problem)
	}
	c.PaperN = 0
	if problem := regionProblem(c); !strings.Contains(problem, "PaperN") {
		t.Errorf("C8 without its n: %q", problem)
	}
}
