// Package papers holds the five studies quicbench reproduces as data: who
// wrote each and where, the example specs that run its design at two
// scales, its headline claims — the claim in words, the table or figure it
// comes from, the paper's numbers, the cells of our spec that test it, the
// statistic we compute there and the region it must fall in — and the
// conditions we cannot reproduce, each with its reason. Evaluate sets each
// claim beside our measurement: the statistic with its 95 % bootstrap
// interval and a verdict (agrees, disagrees, inconclusive) decided at the
// paper's own significance level.
//
// The package is pure: it reads trials, never runs them.
package papers

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/quicbench/quicbench/internal/factor"
)

// Scale is how much of a paper's design a reproduction runs.
type Scale string

// The scales: Quick runs a slice of the design in at most half an hour on
// a 2-core machine, with every claim's cells in it; Full runs the paper's
// whole design (hours to days: shard it on Slurm).
const (
	Quick Scale = "quick"
	Full  Scale = "paper"
)

// ParseScale reads a scale as --scale takes it.
func ParseScale(s string) (Scale, error) {
	switch Scale(s) {
	case Quick, Full:
		return Scale(s), nil
	}
	return "", fmt.Errorf("scale %q is not quick or paper", s)
}

// Paper is one study of ../shared/seeds: its citation, the specs that run
// its design, its claims and the conditions we cannot reproduce.
type Paper struct {
	// ID names the paper on the command line and its example specs: the
	// first author and year, such as "cook2017"; the author alone where no
	// year is known.
	ID      string
	Authors string // as its title page gives them
	Year    int    // 0: unknown
	// YearFrom says where the year comes from: its own title page, or
	// another of the five papers that cites it.
	YearFrom string
	Title    string
	Venue    string // where it appeared, if known
	Seed     string // its text in ../shared/seeds
	// Setup is the paper's set-up in a line: servers, client and version,
	// pages, network emulation.
	Setup string
	// Metric is the paper's headline metric (results.MetricNamed), the
	// one its reproduction's reports compare.
	Metric string
	// Specs are the example spec files (in examples/) that make up a
	// reproduction at each scale; runs of one scale never share a setting.
	Specs map[Scale][]string
	// RealPages names, per scale, the example spec whose pages recorded
	// sites replace (reproduce --sites) to test the claims about pages
	// (Claim.Pages) on real pages; none for a paper without such claims.
	RealPages map[Scale]string
	Claims    []Claim
	// Gaps are the paper's conditions no claim can test here, with why.
	Gaps []Gap
}

// Cite names the paper as a reader would: "Cook et al. 2017", "Biswal and
// Gnawali 2016", "Masri et al." (no year known).
func (p Paper) Cite() string {
	authors := strings.Split(p.Authors, ", ")
	surname := func(name string) string { return name[strings.LastIndex(name, " ")+1:] }
	cite := surname(authors[0])
	switch {
	case len(authors) == 2:
		cite += " and " + surname(authors[1])
	case len(authors) > 2:
		cite += " et al."
	}
	if p.Year > 0 {
		cite += " " + strconv.Itoa(p.Year)
	}
	return cite
}

// Gap is a condition of a paper that quicbench does not reproduce.
type Gap struct {
	Condition string // what the paper had
	Reason    string // why we cannot have it
}

// Claim is one headline finding of a paper, with how we test it.
type Claim struct {
	ID     string // "C1", "C2" … in the order of the paper's text
	Text   string // the finding in words
	Source string // where the paper makes it: "Table III", "§IV-A2, Fig. 5–6"
	// Figure is the paper's number in the statistic's terms, short
	// ("0.24", "28.6–39.6 %"); Reported what the paper gives, in full.
	Figure   string
	Reported string
	// Metric names the measure (results.MetricNamed), Location how the
	// paper summarised a cell's loads.
	Metric   string
	Location Location
	// Cells are the levels whose loads test the claim; a factor not named
	// is not restricted.
	Cells  Cells
	Stat   Stat
	Region Region
	// Alpha is the paper's significance level: the verdict reads the
	// (1 − Alpha) interval (0: 0.05).
	Alpha float64
	// Differs says what differs between the paper's set-up and ours that
	// bears on this claim.
	Differs string
	// Arithmetic, if set, marks a claim the paper reasons from the
	// protocols' design rather than measures, and says what that reasoning
	// predicts for today's protocols: the prediction the region tests
	// where it differs from the paper's figure.
	Arithmetic string
	// NotReproduced, if set, is why the claim cannot be tested here; the
	// fields that test it are then empty.
	NotReproduced string
	// PaperValue is the paper's own result in the statistic's terms (a
	// share of settings, a ratio, round trips saved), where the paper gives
	// a number and the claim tests it; 0 where it gives a direction only
	// or the claim tests design arithmetic.
	PaperValue float64
	// PaperN is how many cases (pages, sites, settings) the paper's share
	// counts, as it states them or its design gives them; 0 for another
	// claim. A share claim's region holds the paper's own result at this n
	// (Claim.PaperAgrees), so that it tests the paper's figure and not
	// merely a direction.
	PaperN int
	// PaperNetworks is, for a share read in each network
	// (Stat.InEachNetwork), how many networks the paper read it in, PaperN
	// cases in each: the paper's interval is adjusted over them as ours is.
	PaperNetworks int
	// PaperUnit is what PaperN counts, as the paper counts it: "pages"
	// where its share is of pages in each network and the same pages recur
	// in every one (Nepomuceno et al.'s Table III), "settings" where its
	// design counts page × network settings. Either way our interval
	// counts a page recurring across networks as one cluster of settings
	// (Row.Cases).
	PaperUnit string
	// PaperScaleOnly, if set, says why a result like the paper's can only
	// be told at paper scale, with the settings or loads it needs: at
	// quick scale the claim cannot agree with the paper's own value.
	PaperScaleOnly string
	// BeyondPaperScale, if set, says why a result like the paper's cannot
	// agree even at paper scale, at the spread of loads measured here,
	// with the loads it would need: decide rounds (reproduce --decide)
	// add them.
	BeyondPaperScale string
	// FewSites, if set, says why a result like the paper's cannot agree
	// on the recorded sites shared here (a claim about pages, Pages), and
	// how many it would need: a share over sites needs sites.
	FewSites string
	// NotAtQuick marks a claim none of whose cells the quick scale runs
	// (PaperScaleOnly says why): there it is not measured.
	NotAtQuick bool
	// Pages marks a claim about pages: with recorded sites (reproduce
	// --sites) it is evaluated on them too (Row.Real), with the paper's
	// RealPages spec run on them.
	Pages bool
	// Explains, if set, is the paper's reason for what the claim finds:
	// the reproduction sets the claim's loads taken apart beside it
	// (Row.Breakdown).
	Explains *Explanation
}

// shareAlpha is the significance level of each of a share's intervals
// when there are levels of them, read at once (Stat.InEachNetwork):
// Bonferroni's alpha over levels; the claim's level otherwise.
func (c Claim) shareAlpha(levels int) float64 {
	if c.Stat.InEachNetwork && levels > 1 {
		return c.alpha() / float64(levels)
	}
	return c.alpha()
}

// alpha is the claim's significance level.
func (c Claim) alpha() float64 {
	if c.Alpha > 0 {
		return c.Alpha
	}
	return 0.05
}

// Location is how a cell's loads are summarised.
type Location string

// The locations the papers use.
const (
	Mean   Location = "mean"
	Median Location = "median"
)

// Cells restrict a claim to levels of factors: a trial counts if, for
// every factor named, its level is one of those listed (canonical text, as
// factor.Levels holds it: "on", "4", "repeat"). A listed level ending in
// ":*" stands for every level of that kind ("web2024:*": every generated
// page, not a synthetic one).
type Cells map[factor.ID][]string

// Has reports whether a trial of levels l is in the cells.
func (c Cells) Has(l factor.Levels) bool {
	for id, allowed := range c {
		if !slices.ContainsFunc(allowed, func(a string) bool { return levelMatches(a, l.Of(id)) }) {
			return false
		}
	}
	return true
}

// levelMatches reports whether level is the listed level, or of the kind
// a listed "kind:*" names.
func levelMatches(listed, level string) bool {
	if kind, ok := strings.CutSuffix(listed, ":*"); ok {
		return strings.HasPrefix(level, kind+":")
	}
	return listed == level
}

// Kind is the statistic a claim computes.
type Kind string

// The statistics. Each compares loads at two levels of a factor (Vary)
// in settings otherwise equal (a group); the value pools the groups.
const (
	// Ratio is the geometric mean over groups of location(To) ÷
	// location(From): below 1 when To is faster.
	Ratio Kind = "ratio"
	// Share is the fraction of groups in which To's location is below
	// From's, such as the share of pages where QUIC wins.
	Share Kind = "share"
	// RTTsSaved is the mean over groups of (location(From) −
	// location(To)) ÷ the network's RTT: how many round trips To saves.
	RTTsSaved Kind = "round trips saved"
	// Interaction is the geometric mean over groups of the Ratio of Vary
	// at By.To divided by the Ratio of Vary at By.From: below 1 when Vary's
	// effect is smaller at By.To.
	Interaction Kind = "interaction"
	// Widening is how much To's lead over From grows from the claim's
	// metric to a later one (Stat.Then): the mean over groups of
	// location(From) − location(To) at Then less the same at the claim's
	// metric, in ms; above 0 when the lead widens.
	Widening Kind = "widening"
)

// Contrast is two levels of one factor.
type Contrast struct {
	Factor   factor.ID
	From, To string
}

// String reads "h3 against h2".
func (c Contrast) String() string {
	return fmt.Sprintf("%s against %s", c.To, c.From)
}

// Stat is what a claim computes from its loads.
type Stat struct {
	Kind Kind
	Vary Contrast
	By   Contrast // Interaction only
	// Then is, for Widening, the later metric the lead is read at again.
	Then string
	// InEachNetwork, for a share, reads the share within each network and
	// tells the highest of them: a claim that holds in every network ("in
	// less than 40 % of the pages, regardless of the configuration"). Its
	// intervals hold every network's share at once (Bonferroni over the
	// networks); its region must be an upper bound.
	InEachNetwork bool
}

// Region is where our statistic must lie for the claim to hold: an
// interval with bounds included, ±Inf where open.
type Region struct {
	Low, High float64
}

// Below is every value up to x.
func Below(x float64) Region { return Region{math.Inf(-1), x} }

// Above is every value from x up.
func Above(x float64) Region { return Region{x, math.Inf(1)} }

// Within is every value from lo to hi.
func Within(lo, hi float64) Region { return Region{lo, hi} }

func (r Region) lowOpen() bool  { return math.IsInf(r.Low, -1) }
func (r Region) highOpen() bool { return math.IsInf(r.High, 1) }

// Text reads the region in the statistic's units: "< 1", "> 50 %",
// "0.54–0.74", "1.5–2.5 RTT".
func (r Region) Text(k Kind) string {
	bound := func(v float64) string {
		if k == Share { // a percentage to a tenth at most: 0.55 reads 55, not 55.00000000000001
			v = math.Round(v*1000) / 10
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	switch {
	case r.lowOpen():
		return "< " + bound(r.High) + unit(k)
	case r.highOpen():
		return "> " + bound(r.Low) + unit(k)
	}
	return bound(r.Low) + "–" + bound(r.High) + unit(k)
}

// unit is what follows a value of the statistic: " %", " RTT" or nothing.
func unit(k Kind) string {
	switch k {
	case Share:
		return " %"
	case RTTsSaved:
		return " RTT"
	case Widening:
		return " ms"
	}
	return ""
}

// FormatValue writes a value of the statistic in its units: "0.61",
// "25 %", "0.81 RTT", "-" for NaN.
func FormatValue(k Kind, v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case k == Share, k == Widening:
		scale := map[Kind]float64{Share: 100, Widening: 1}[k]
		return strconv.FormatFloat(scale*v, 'f', 0, 64) + unit(k)
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + unit(k)
}
