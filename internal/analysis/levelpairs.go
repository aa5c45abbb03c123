package analysis

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/quicbench/quicbench/internal/factor"
)

// LevelPair compares two levels of a factor besides the protocol (a TCP
// stack, QUIC stack, server or client) for one protocol in otherwise
// equal settings. Its Comparison's Setting has the factor empty; its
// Baseline is the Earlier level's sample and its Compare the Later's.
type LevelPair struct {
	Factor factor.ID
	// Earlier and Later are the levels in alphabetical order; the ratio
	// is Later's median over Earlier's.
	Earlier, Later string
	Comparison
}

// FactorName is the factor's column name, such as "stack".
func (p LevelPair) FactorName() string { return factor.Of(p.Factor).Column }

// levelFactors are the factors whose levels the report compares pair by
// pair where they vary.
func levelFactors() []factor.ID {
	return []factor.ID{factor.IDStack, factor.IDQUIC, factor.IDServer, factor.IDClient}
}

// levelGroup is one protocol's samples in settings equal but for one
// factor, by that factor's level.
type levelGroup struct {
	base    Setting
	proto   factor.Protocol
	samples map[string]*Sample
}

// levelPairs compares every pair of levels of each factor of
// levelFactors wherever a protocol was loaded with two or more of them
// in otherwise equal settings (QUIC stacks for h3 only), in the
// settings' table order.
func levelPairs(ctx context.Context, samples map[sampleKey]*Sample, o Options) ([]LevelPair, error) {
	var out []LevelPair
	for _, id := range levelFactors() {
		groups := map[sampleKey]*levelGroup{}
		for k, sm := range samples {
			if len(sm.Values) == 0 || id == factor.IDQUIC && k.proto != factor.H3 {
				continue // a QUIC stack serves h3 alone, as the ANOVAs across them say
			}
			base := k.s
			level := base.Of(id)
			base.Set(id, "")
			g := groups[sampleKey{base, k.proto}]
			if g == nil {
				g = &levelGroup{base: base, proto: k.proto, samples: map[string]*Sample{}}
				groups[sampleKey{base, k.proto}] = g
			}
			g.samples[level] = sm
		}
		keys := make([]sampleKey, 0, len(groups))
		for k := range groups {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b sampleKey) int {
			if c := CompareSettings(a.s, b.s); c != 0 {
				return c
			}
			return cmp.Compare(a.proto, b.proto) // h1, h2, h3
		})
		for _, k := range keys {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			out = append(out, pairsOfLevels(id, groups[k], o)...)
		}
	}
	return out, nil
}

// pairsOfLevels compares each pair of g's levels, the later against the
// earlier in alphabetical order; none for a group of one level.
func pairsOfLevels(id factor.ID, g *levelGroup, o Options) []LevelPair {
	levels := make([]string, 0, len(g.samples))
	for l := range g.samples {
		levels = append(levels, l)
	}
	slices.Sort(levels)
	var out []LevelPair
	for i, earlier := range levels {
		for _, later := range levels[i+1:] {
			h := fnv.New64a()
			h.Write([]byte(sampleKey{g.base, factor.Protocol(fmt.Sprintf("%s %s %s/%s", g.proto, factor.Of(id).Column, later, earlier))}.seedText()))
			c := compareSamples(g.base, *g.samples[earlier], *g.samples[later], o.BootstrapReps, o.Seed^h.Sum64())
			out = append(out, LevelPair{Factor: id, Earlier: earlier, Later: later, Comparison: c})
		}
	}
	return out
}
