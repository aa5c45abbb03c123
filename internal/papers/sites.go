package papers

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
)

// RealRunSuffix ends the name of a paper's real-pages run: its RealPages
// spec run on recorded sites (reproduce --sites).
const RealRunSuffix = "-real"

// LeftOut is a recorded site a claim on real pages could not use, and why.
type LeftOut struct {
	Site  string // the recording's name
	Cause string // such as "failed to import: …" or "2 of 4 loads failed: …"
}

// SiteName is the name a page level goes by among recorded sites: an
// archive page's directory name ("www.amazon.com.mahimahi"), else the
// level itself.
func SiteName(page string) string {
	if dir, ok := strings.CutPrefix(page, string(factor.PageArchive)+":"); ok {
		return filepath.Base(dir)
	}
	return page
}

// EvaluateSites sets each claim about pages (Claim.Pages) of rows, as
// Evaluate made them, beside the loads of recorded sites (sources: the
// runs of the paper's RealPages spec): Row.Real, with the sites it could
// not use and why. unread are sites that never reached a load (a
// recording that failed to import), left out of every such claim.
func EvaluateSites(p Paper, rows []Row, sources []Source, unread []LeftOut, o Options) {
	if o.Reps <= 0 {
		o.Reps = DefaultReps
	}
	for i := range rows {
		c := rows[i].Claim
		if !c.Pages || c.NotReproduced != "" {
			continue
		}
		real := evaluateClaim(p, c, sources, o, uint64(len(p.Claims)+i))
		real.LeftOut = append(leftOut(c, sources, real.Levels[factor.IDPage]), unread...)
		rows[i].Real = &real
	}
}

// leftOut lists the sites among sources' loads in c's cells that the
// claim's settings did not use, with why: their failed loads' most common
// error, or too few successful loads.
func leftOut(c Claim, sources []Source, used []string) []LeftOut {
	type tally struct {
		loads, failed int
		errors        map[string]int
	}
	bySite := map[string]*tally{}
	var order []string
	for _, src := range sources {
		for _, t := range src.Trials {
			levels := t.Levels.Factors()
			if _, ok := slotOf(c.Stat, levels); !ok || !c.Cells.Has(levels) || slices.Contains(used, t.Page) {
				continue
			}
			tl := bySite[t.Page]
			if tl == nil {
				tl = &tally{errors: map[string]int{}}
				bySite[t.Page] = tl
				order = append(order, t.Page)
			}
			tl.loads++
			if t.Status != results.StatusOK {
				tl.failed++
				tl.errors[cmp.Or(t.Error, string(t.Status))]++
			}
		}
	}
	slices.SortFunc(order, func(a, b string) int { return strings.Compare(SiteName(a), SiteName(b)) })
	out := make([]LeftOut, 0, len(order))
	for _, page := range order {
		tl := bySite[page]
		cause := fmt.Sprintf("fewer than %d successful loads at each level compared (%d of %d loads failed)", MinLoads, tl.failed, tl.loads)
		if common := mostCommon(tl.errors); common != "" {
			cause += ": " + common
		}
		out = append(out, LeftOut{Site: SiteName(page), Cause: cause})
	}
	return out
}

// mostCommon is the key counted most often, the first in order on a tie;
// "" for none.
func mostCommon(counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	best := ""
	for _, k := range keys {
		if best == "" || counts[k] > counts[best] {
			best = k
		}
	}
	return best
}

// SitesUsed names the recorded sites a row on real pages used, sorted.
func (r Row) SitesUsed() []string {
	var names []string
	for _, page := range r.Levels[factor.IDPage] {
		names = append(names, SiteName(page))
	}
	slices.Sort(names)
	return names
}

// RealText says what a claim about pages found on recorded sites, in a
// line: "agrees: 25 % [8 %, 52 %]; 12 sites, 1 left out (www.x: cause)";
// "" when it was not evaluated there.
func (r Row) RealText() string {
	if r.Real == nil {
		return ""
	}
	re := r.Real
	text := fmt.Sprintf("%s: %s; %d sites", re.Verdict, re.Ours(), len(re.SitesUsed()))
	if len(re.LeftOut) > 0 {
		text += fmt.Sprintf(", %d left out (%s)", len(re.LeftOut), LeftOutText(re.LeftOut))
	}
	return text
}

// LeftOutText lists left-out sites with their causes: "a: why; b: why".
func LeftOutText(l []LeftOut) string {
	parts := make([]string, len(l))
	for i, s := range l {
		parts[i] = s.Site + ": " + s.Cause
	}
	return strings.Join(parts, "; ")
}
