package papers

import (
	"fmt"

	"github.com/quicbench/quicbench/internal/stats"
)

// maxSettings bounds the search of SettingsToAgree.
const maxSettings = 100_000

// SettingsToAgree is how many settings a share claim needs for a result
// like its paper's (PaperValue of them won) to agree: the fewest whose
// Clopper–Pearson interval at the claim's level lies inside its region
// (for a share read in each network, the settings each of the paper's
// networks needs, the level adjusted over them); 0 for another claim, one without a paper value, or one no number of
// settings up to 100,000 lets agree.
func SettingsToAgree(c Claim) int {
	if c.Stat.Kind != Share || c.PaperValue <= 0 || c.PaperValue >= 1 {
		return 0
	}
	inside := func(n int) bool {
		k := int(c.PaperValue*float64(n) + 0.5)
		lo, hi := stats.ClopperPearson(k, n, 1-c.shareAlpha(c.PaperNetworks))
		return lo >= c.Region.Low && hi <= c.Region.High
	}
	hi := 1
	for !inside(hi) {
		if hi *= 2; hi > maxSettings {
			return 0
		}
	}
	lo := hi / 2 // not inside (or 0); find the first n inside by bisection
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if inside(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// PaperScaleNote says why a claim can agree with a result like its
// paper's only at paper scale and what it needs ("" for a claim that can
// at quick scale): PaperScaleOnly, and for a share the settings it needs.
func (c Claim) PaperScaleNote() string {
	if c.PaperScaleOnly == "" {
		return ""
	}
	if n := SettingsToAgree(c); n > 0 {
		return fmt.Sprintf("%s; a share like the paper's %s agrees from %d settings", c.PaperScaleOnly, FormatValue(Share, c.PaperValue), n)
	}
	return c.PaperScaleOnly
}

// PaperInterval is the Clopper–Pearson interval, at the claim's level, of
// the paper's own share: PaperValue of PaperN cases won (in each of
// PaperNetworks networks, the level adjusted over them, for a share read
// in each network); ok is false for a claim without both.
func (c Claim) PaperInterval() (lo, hi float64, ok bool) {
	if c.Stat.Kind != Share || c.PaperN <= 0 || c.PaperValue <= 0 {
		return 0, 0, false
	}
	won := int(c.PaperValue*float64(c.PaperN) + 0.5)
	lo, hi = stats.ClopperPearson(won, c.PaperN, 1-c.shareAlpha(c.PaperNetworks))
	return lo, hi, true
}

// Marks are what a result like the paper's needs that a reproduction may
// lack, each in words: "paper scale only: …" (PaperScaleNote), "beyond
// the paper's design: …", "too few recorded sites: …"; none for a claim
// any scale can tell.
func (c Claim) Marks() []string {
	var marks []string
	if note := c.PaperScaleNote(); note != "" {
		marks = append(marks, "paper scale only: "+note)
	}
	if c.BeyondPaperScale != "" {
		marks = append(marks, "beyond the paper's design: "+c.BeyondPaperScale)
	}
	if c.FewSites != "" {
		few := "too few recorded sites: " + c.FewSites
		if n := SettingsToAgree(c); n > 0 {
			few += fmt.Sprintf("; a share like the paper's %s agrees from %d sites", FormatValue(Share, c.PaperValue), n)
		}
		marks = append(marks, few)
	}
	return marks
}
