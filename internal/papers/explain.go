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
	// Caveat, if set, says what of the paper's reason the parts cannot
	// show (another window than the claim's metric, another visit than
	// the reason's, instruments that differ between the protocols),
	// printed beside them.
	Caveat string
	// HeadOfLine adds the time the From level's TCP loads held bytes
	// behind a lost segment (results.Stalls.HeldMs, head-of-line
	// blocking), which QUIC's streams do not.
	HeadOfLine bool
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
	// HeldMs is, for an explanation of head-of-line blocking, the mean
	// over settings of the From level's location of held_ms; NaN where
	// a load did not record it.
	HeldMs float64
}

// breakdownOf takes the loads of a claim's groups apart; nil when the
// claim has no explanation, contrasts more than two levels, or no setting
// has every load's parts.
func breakdownOf(c Claim, groups []*group) *Breakdown {
	if c.Explains == nil || c.Stat.Kind == Interaction || c.Stat.Kind == Widening {
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
		if c.Explains.HeadOfLine {
			b.HeldMs += heldOf(g, locate)
		}
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
	b.HeldMs /= n
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
	why := fmt.Sprintf("the paper's reason: %s. The PLT taken apart, %s, %s per setting over %d settings: %s in all; %s. The part the paper's reason points at, %s, moved %s.",
		c.Explains.Says, c.Stat.Vary, c.Location, b.Settings, effectText(b.Total), strings.Join(parts, ", "), results.PartNames()[c.Explains.Part], named)
	if c.Explains.HeadOfLine {
		held := "not recorded by these loads"
		if !math.IsNaN(b.HeldMs) {
			held = fmt.Sprintf("%.1f ms a load", b.HeldMs)
		}
		why += fmt.Sprintf(" Head-of-line blocking: %s's bytes waited behind a lost segment %s (%s); QUIC's streams hold no other stream's bytes.", c.Stat.Vary.From, held, c.Location)
	}
	if c.Explains.Caveat != "" {
		why += " What these parts cannot show: " + c.Explains.Caveat + "."
	}
	return why
}

// effectText is e in round trips and ms, "-1.02 RTT (-20.4 ms)".
func effectText(e PartEffect) string {
	return fmt.Sprintf("%+.2f RTT (%+.1f ms)", e.RTTs, e.Ms)
}
