package papers

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/stats"
)

// Verdict is how our measurement stands to a claim.
type Verdict string

// The verdicts. A claim agrees when the interval at the paper's level lies
// inside its region, disagrees when it lies wholly outside, and is
// inconclusive when it straddles a bound.
const (
	Agrees        Verdict = "agrees"
	Disagrees     Verdict = "disagrees"
	Inconclusive  Verdict = "inconclusive"
	NotMeasured   Verdict = "not measured"   // no setting had loads at every level the statistic needs
	NotReproduced Verdict = "not reproduced" // the claim cannot be tested here (Claim.NotReproduced)
)

// MinLoads is how many successful loads a level of a setting needs for the
// setting to count.
const MinLoads = 2

// DefaultReps is how many bootstrap resamples an interval takes.
const DefaultReps = 2000

// Source is one run's trials; Run names it in trial references when a
// reproduction has several runs ("" for one). Round is the decide round
// that added them, 0 for the reproduction's own runs.
type Source struct {
	Run    string
	Trials []results.Trial
	Round  int
}

// Options tune the evaluation.
type Options struct {
	Reps int    // bootstrap resamples (0: DefaultReps)
	Seed uint64 // of the resampling
	// Sample restricts share claims to sampled settings (a sequential
	// reproduction's); nil: every claim reads every setting loaded.
	Sample Sample
	// Spend reads each round's look at the claim's level times
	// LookShare(round), so that its looks together keep its level (a
	// sequential reproduction's); false: every look at the claim's level.
	Spend bool
}

// LookShare is the part of a claim's level that the look after round
// round (0: the reproduction's own loads) spends: 6/(π²(round+1)²), whose
// sum over every look is 1, so that however many rounds a claim takes,
// the chance that any of its looks decides it wrongly stays within its
// level (Bonferroni over the looks).
func LookShare(round int) float64 {
	k := float64(round + 1)
	return 6 / (math.Pi * math.Pi * k * k)
}

// Row is a claim set beside our measurement.
type Row struct {
	Paper Paper
	Claim Claim
	// Value is our statistic (NaN when not measured), Lo and Hi its 95 %
	// interval, LevelLo and LevelHi its interval at the paper's level,
	// which the verdict reads.
	Value, Lo, Hi    float64
	LevelLo, LevelHi float64
	Verdict          Verdict
	// Need is what an inconclusive row lacks to be decided (zero for a
	// decided one).
	Need     Need
	Settings int // groups of settings compared
	// Pages is how many pages a share's settings cover, and Cases how
	// many independent settings they count as, a page recurring across
	// networks being one cluster (shareOf): between Pages and
	// Settings. Both 0 for another statistic.
	Pages int
	Cases float64
	// Networks is, for a share read in each network
	// (Stat.InEachNetwork), how many networks it was read in; Cases is
	// then the highest share's network's. 0 otherwise.
	Networks int
	Loads    int      // loads used
	Trials   []string // their IDs, "run/id" when the sources are several
	// Levels lists the networks and pages of the settings used, and the
	// levels of any other factor that differs among them: what the row
	// covers.
	Levels map[factor.ID][]string
	// Round is the last decide round whose loads the row read: the one
	// that decided it, or the last one for a claim still undecided.
	Round int
	// Spent says the row's level is the claim's times LookShare(Round)
	// (Options.Spend): Claim.Alpha holds the level it was read at.
	Spent bool
	// Real is a claim about pages evaluated on recorded sites
	// (EvaluateSites); nil when it was not.
	Real *Row
	// LeftOut, in a row on recorded sites, are the sites it could not use.
	LeftOut []LeftOut
	// Breakdown is, for a claim with an explanation, its loads taken
	// apart; nil otherwise or where no setting's loads recorded parts.
	Breakdown *Breakdown
}

// Evaluate sets every claim of p beside the loads of sources. Sources of
// decide rounds are read round by round, the reproduction's own loads
// first, and a claim keeps the verdict of the first round that decides
// it: the sequential stopping of a run's until rule, for claims, so that
// the loads a later round adds to a decided claim's cells for another
// claim do not reopen it. A claim still undecided reads every round.
func Evaluate(p Paper, sources []Source, o Options) []Row {
	last := 0
	for _, s := range sources {
		last = max(last, s.Round)
	}
	if o.Reps <= 0 {
		o.Reps = DefaultReps
	}
	rows := make([]Row, len(p.Claims))
	for round := 0; round <= last; round++ {
		read := upToRound(sources, round)
		for i, c := range p.Claims {
			if v := rows[i].Verdict; round > 0 && (v == Agrees || v == Disagrees) {
				continue
			}
			looked := c
			if o.Spend {
				looked.Alpha = c.alpha() * LookShare(round)
			}
			rows[i] = evaluateClaim(p, looked, read, o, uint64(i))
			rows[i].Round, rows[i].Spent = round, o.Spend
		}
	}
	return rows
}

// upToRound keeps the sources of decide rounds up to round.
func upToRound(sources []Source, round int) []Source {
	var out []Source
	for _, s := range sources {
		if s.Round <= round {
			out = append(out, s)
		}
	}
	return out
}

// group is one setting of a claim: its loads' values at each combination
// of the contrasted levels (index: 0 From, 1 To; +2 at By.To).
type group struct {
	key     factor.Levels
	samples [4][]float64
	trials  []string
	rttMs   float64
	// plt and parts are, at the contrast's two levels, the loads' PLTs
	// and parts (results.Parts.Values; nil for a load without), for the
	// claim's breakdown.
	plt   [2][]float64
	parts [2][][]float64
	// held is the From level's loads' held_ms (NaN for a load without).
	held []float64
}

func evaluateClaim(p Paper, c Claim, sources []Source, o Options, stream uint64) Row {
	row := Row{Paper: p, Claim: c, Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), LevelLo: math.NaN(), LevelHi: math.NaN()}
	if c.NotReproduced != "" {
		row.Verdict = NotReproduced
		return row
	}
	groups := usable(collect(c, sources, o.Sample), c.Stat.Kind)
	if len(groups) == 0 {
		row.Verdict = NotMeasured
		return row
	}
	describe(&row, groups)
	locate := locator(c.Location)
	switch {
	case c.Stat.Kind == Share && c.Stat.InEachNetwork:
		highestShare(&row, groups, locate)
	case c.Stat.Kind == Share:
		row.Value, row.Cases, row.Pages = shareOf(groups, locate)
		row.Lo, row.Hi, row.LevelLo, row.LevelHi = shareIntervals(c, row.Value, row.Cases, 1)
	default:
		row.Value = statistic(c.Stat.Kind, groups, func(g *group, i int) float64 { return locate(g.samples[i]) })
		row.Lo, row.Hi, row.LevelLo, row.LevelHi = intervals(c, groups, row.Value, locate, o, stream)
	}
	row.Verdict = decide(c.Region, row.LevelLo, row.LevelHi)
	row.Breakdown = breakdownOf(c, groups)
	if row.Verdict == Inconclusive {
		row.Need = needOf(row)
	}
	return row
}

// collect sorts the claim's loads into groups of equal settings.
func collect(c Claim, sources []Source, sample Sample) []*group {
	metric, ok := results.MetricNamed(c.Metric)
	if !ok {
		return nil
	}
	then, _ := results.MetricNamed(c.Stat.Then)
	byKey := map[factor.Levels]*group{}
	var order []*group
	wantHeld := c.Explains != nil && c.Explains.HeadOfLine
	for _, src := range sources {
		for _, t := range src.Trials {
			v := metric.Value(t)
			if t.Status != results.StatusOK || v == nil || *v <= 0 {
				continue
			}
			levels := t.Levels.Factors()
			slot, ok := slotOf(c.Stat, levels)
			if !ok || !c.Cells.Has(levels) {
				continue
			}
			key := c.SettingOf(levels)
			if !sample.allows(c, key) {
				continue
			}
			g := byKey[key]
			if g == nil {
				g = &group{key: key, rttMs: t.RTTMs}
				byKey[key] = g
				order = append(order, g)
			}
			g.samples[slot] = append(g.samples[slot], *v)
			if c.Stat.Kind == Widening {
				if tv := then.Value(t); tv != nil && *tv > 0 {
					g.samples[slot+2] = append(g.samples[slot+2], *tv)
				}
			}
			g.trials = append(g.trials, trialRef(src.Run, t.ID))
			if slot < 2 && t.PLT != nil {
				g.plt[slot], g.parts[slot] = append(g.plt[slot], *t.PLT), append(g.parts[slot], t.Parts.Values())
			}
			if slot == 0 && wantHeld {
				g.held = append(g.held, heldMs(t))
			}
		}
	}
	return order
}

// slotOf is where a load of levels l goes in its group, and false if its
// levels of the contrasted factors are not the contrast's.
func slotOf(s Stat, l factor.Levels) (int, bool) {
	slot, ok := side(s.Vary, l)
	if !ok {
		return 0, false
	}
	if s.Kind != Interaction {
		return slot, true
	}
	by, ok := side(s.By, l)
	return slot + 2*by, ok
}

// side is 0 for the contrast's From level, 1 for its To level.
func side(c Contrast, l factor.Levels) (int, bool) {
	switch l.Of(c.Factor) {
	case c.From:
		return 0, true
	case c.To:
		return 1, true
	}
	return 0, false
}

func trialRef(run, id string) string {
	if run == "" {
		return id
	}
	return run + "/" + id
}

// usable keeps the groups with MinLoads at every level the statistic
// reads (and a known RTT where it divides by it).
func usable(groups []*group, k Kind) []*group {
	need := cellsRead(k)
	var out []*group
	for _, g := range groups {
		ok := k != RTTsSaved || g.rttMs > 0
		for i := range need {
			ok = ok && len(g.samples[i]) >= MinLoads
		}
		if ok {
			out = append(out, g)
		}
	}
	return out
}

// describe records which settings and loads the row used.
func describe(row *Row, groups []*group) {
	row.Settings = len(groups)
	row.Levels = map[factor.ID][]string{}
	for _, g := range groups {
		row.Trials = append(row.Trials, g.trials...)
		for i, s := range g.samples {
			if row.Claim.Stat.Kind == Widening && i >= 2 { // the same loads' later metric
				break
			}
			row.Loads += len(s)
		}
		for _, f := range factor.Table() {
			if lvl := g.key.Of(f.ID); lvl != "" && !slices.Contains(row.Levels[f.ID], lvl) {
				row.Levels[f.ID] = append(row.Levels[f.ID], lvl)
			}
		}
	}
	for id, lv := range row.Levels {
		if len(lv) < 2 && id != factor.IDNetwork && id != factor.IDPage {
			delete(row.Levels, id)
		}
		sort.Slice(lv, func(i, j int) bool { return factor.ComparePages(lv[i], lv[j]) < 0 })
	}
	sort.Strings(row.Trials)
}

// locator returns the summary of a cell's loads.
func locator(l Location) func([]float64) float64 {
	if l == Median {
		return stats.Median
	}
	return stats.Mean
}

// statistic pools the groups' locations (loc(g, i) of sample i) into the
// claim's statistic.
func statistic(k Kind, groups []*group, loc func(*group, int) float64) float64 {
	var sum float64
	for _, g := range groups {
		from, to := loc(g, 0), loc(g, 1)
		switch k {
		case Ratio:
			sum += math.Log(to / from)
		case Share:
			if to < from {
				sum++
			}
		case RTTsSaved:
			sum += (from - to) / g.rttMs
		case Interaction:
			sum += math.Log(loc(g, 3)/loc(g, 2)) - math.Log(to/from)
		case Widening:
			sum += (loc(g, 2) - loc(g, 3)) - (from - to)
		}
	}
	mean := sum / float64(len(groups))
	if k == Ratio || k == Interaction {
		return math.Exp(mean)
	}
	return mean
}

// intervals are the statistic's 95 % interval and its interval at the
// claim's level, percentile bootstraps resampling every cell's loads.
func intervals(c Claim, groups []*group, value float64, locate func([]float64) float64, o Options, stream uint64) (lo, hi, levelLo, levelHi float64) {
	level := 1 - c.alpha()
	rng := rand.New(rand.NewPCG(o.Seed, stream))
	draws := make([]float64, o.Reps)
	var buf []float64
	for b := range draws {
		draws[b] = statistic(c.Stat.Kind, groups, func(g *group, i int) float64 {
			buf = stats.Resample(rng, g.samples[i], buf[:0])
			return locate(buf)
		})
	}
	slices.Sort(draws)
	lo, hi = stats.PercentileInterval(draws, 0.95)
	levelLo, levelHi = stats.PercentileInterval(draws, level)
	lo, hi = widenSmall(c, groups, value, 0.95, lo, hi)
	levelLo, levelHi = widenSmall(c, groups, value, level, levelLo, levelHi)
	return lo, hi, levelLo, levelHi
}

// shareIntervals are a share's 95 % interval and its interval at the
// claim's level: Clopper–Pearson's at n, the settings' effective number
// (shareOf), each level adjusted over the levels read at once (a share
// in each of several networks; 1 otherwise). The claim is about pages or
// settings, which are the sample: more loads of them do not narrow it.
func shareIntervals(c Claim, value, n float64, levels int) (lo, hi, levelLo, levelHi float64) {
	lo, hi = stats.ClopperPearsonEffective(value, n, 1-0.05/float64(levels))
	levelLo, levelHi = stats.ClopperPearsonEffective(value, n, 1-c.shareAlpha(levels))
	return lo, hi, levelLo, levelHi
}

// highestShare reads a share claim in each network (Stat.InEachNetwork):
// row's value is the highest network's share, with its cases, and its
// intervals the highest of the networks' bounds, each at a level adjusted
// over the networks, so that they hold the highest share with every
// network's at once.
func highestShare(row *Row, groups []*group, locate func([]float64) float64) {
	byNetwork := map[string][]*group{}
	var networks []string
	pages := map[string]bool{}
	for _, g := range groups {
		n := g.key.Of(factor.IDNetwork)
		if byNetwork[n] == nil {
			networks = append(networks, n)
		}
		byNetwork[n] = append(byNetwork[n], g)
		if page := g.key.Of(factor.IDPage); page != "" {
			pages[page] = true
		}
	}
	row.Networks, row.Pages = len(networks), len(pages)
	row.Value, row.Lo, row.Hi, row.LevelLo, row.LevelHi = -1, 0, 0, 0, 0
	for _, n := range networks {
		share, cases, _ := shareOf(byNetwork[n], locate)
		lo, hi, levelLo, levelHi := shareIntervals(row.Claim, share, cases, len(networks))
		if share > row.Value {
			row.Value, row.Cases = share, cases
		}
		row.Lo, row.Hi, row.LevelLo, row.LevelHi = max(row.Lo, lo), max(row.Hi, hi), max(row.LevelLo, levelLo), max(row.LevelHi, levelHi)
	}
}

// decide reads the interval at the paper's level against the region.
func decide(r Region, lo, hi float64) Verdict {
	switch {
	case lo >= r.Low && hi <= r.High:
		return Agrees
	case hi < r.Low || lo > r.High:
		return Disagrees
	}
	return Inconclusive
}

// shareOf is the share of a share claim's groups that the To level won,
// how many independent settings they count as and how many pages they
// cover, in one pass. A page seen in several networks is one cluster of
// settings, its outcomes alike in so far as the page decides them
// (stats.EffectiveCases); a group without a page is a cluster of its own.
func shareOf(groups []*group, locate func([]float64) float64) (share, cases float64, pages int) {
	index := map[string]int{}
	var clusterWins, clusterCases []float64
	var won int
	for i, g := range groups {
		page := g.key.Of(factor.IDPage)
		if page == "" {
			page = "\x00" + strconv.Itoa(i)
		} else if _, seen := index[page]; !seen {
			pages++
		}
		k, ok := index[page]
		if !ok {
			k = len(clusterCases)
			index[page] = k
			clusterWins, clusterCases = append(clusterWins, 0), append(clusterCases, 0)
		}
		clusterCases[k]++
		if locate(g.samples[1]) < locate(g.samples[0]) {
			clusterWins[k]++
			won++
		}
	}
	return float64(won) / float64(len(groups)), stats.EffectiveCases(clusterWins, clusterCases), pages
}

// heldMs is the time a load's TCP connections held bytes behind a lost
// segment; NaN where it did not record it.
func heldMs(t results.Trial) float64 {
	if t.HeldMs == nil {
		return math.NaN()
	}
	return *t.HeldMs
}

// heldOf is the location of g's From loads' held_ms; NaN where a load did
// not record it.
func heldOf(g *group, locate func([]float64) float64) float64 {
	if len(g.held) == 0 || slices.ContainsFunc(g.held, math.IsNaN) {
		return math.NaN()
	}
	return locate(g.held)
}
