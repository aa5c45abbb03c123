package papers

import (
	"fmt"
	"math"
	"strings"

	"github.com/quicbench/quicbench/internal/results"
)

// Explanation is a paper's own reason for what a claim finds, which the
// loads' parts (results.Parts) are set beside: the reason as the paper
// gives it, with its place, and the part it points at (results.PartLoss,
// …).
type Explanation struct {
	Says string
	Part int
}

// PartEffect is how one part of the loads' time moved between a claim's
// contrasted levels (To − From): in each setting the claim's location
// (mean or median) of the part at each level, the difference averaged
// over the settings, in ms and in round trips of each setting's RTT.
// Known is false where some load did not record the part.
type PartEffect struct {
	Ms, RTTs float64
	Known    bool
}

// Breakdown is a claim's loads taken apart: the effect on their PLT and
// on each part (results.PartNames' order), over Settings settings whose
// every load recorded its parts.
type Breakdown struct {
	Settings int
	Total    PartEffect
	Parts    []PartEffect
}

// breakdownOf takes the loads of a claim's groups apart; nil when the
// claim has no explanation, contrasts more than two levels, or no setting
// has every load's parts.
func breakdownOf(c Claim, groups []*group) *Breakdown {
	if c.Explains == nil || c.Stat.Kind == Interaction {
		return nil
	}
	locate := locator(c.Location)
	b := &Breakdown{Total: PartEffect{Known: true}, Parts: make([]PartEffect, len(results.PartNames()))}
	for i := range b.Parts {
		b.Parts[i].Known = true
	}
	add := func(e *PartEffect, from, to []float64, rttMs float64) {
		d := locate(to) - locate(from)
		if math.IsNaN(d) {
			e.Known = false
		}
		e.Ms += d
		e.RTTs += d / rttMs
	}
	for _, g := range groups {
		if !g.hasParts() || g.rttMs <= 0 {
			continue
		}
		b.Settings++
		add(&b.Total, g.plt[0], g.plt[1], g.rttMs)
		for i := range b.Parts {
			add(&b.Parts[i], column(g.parts[0], i), column(g.parts[1], i), g.rttMs)
		}
	}
	if b.Settings == 0 {
		return nil
	}
	n := float64(b.Settings)
	for _, e := range append([]*PartEffect{&b.Total}, pointers(b.Parts)...) {
		e.Ms, e.RTTs = e.Ms/n, e.RTTs/n
	}
	return b
}

// hasParts reports whether every load of g's two contrasted levels
// recorded its parts.
func (g *group) hasParts() bool {
	for slot := range 2 {
		if len(g.parts[slot]) == 0 || len(g.parts[slot]) != len(g.plt[slot]) {
			return false
		}
		for _, row := range g.parts[slot] {
			if row == nil {
				return false
			}
		}
	}
	return true
}

// column is part i of every row.
func column(rows [][]float64, i int) []float64 {
	out := make([]float64, len(rows))
	for k, r := range rows {
		out[k] = r[i]
	}
	return out
}

// pointers are pointers to each element of es.
func pointers(es []PartEffect) []*PartEffect {
	out := make([]*PartEffect, len(es))
	for i := range es {
		out[i] = &es[i]
	}
	return out
}

// WhyText sets the paper's explanation of the claim beside its loads
// taken apart; "" for a claim without an explanation or loads with parts.
func (r Row) WhyText() string {
	c, b := r.Claim, r.Breakdown
	if c.Explains == nil || b == nil {
		return ""
	}
	var parts []string
	for i, e := range b.Parts {
		if e.Known {
			parts = append(parts, results.PartNames()[i]+" "+effectText(e))
		}
	}
	named := "not recorded by these loads"
	if e := b.Parts[c.Explains.Part]; e.Known {
		named = effectText(e)
	}
	return fmt.Sprintf("the paper's reason: %s. The PLT taken apart, %s, %s per setting over %d settings: %s in all; %s. The part the paper's reason points at, %s, moved %s.",
		c.Explains.Says, c.Stat.Vary, c.Location, b.Settings, effectText(b.Total), strings.Join(parts, ", "), results.PartNames()[c.Explains.Part], named)
}

// effectText is e in round trips and ms, "-1.02 RTT (-20.4 ms)".
func effectText(e PartEffect) string {
	return fmt.Sprintf("%+.2f RTT (%+.1f ms)", e.RTTs, e.Ms)
}
