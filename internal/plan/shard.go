package plan

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/spec"
)

// MaxShards bounds a plan's shards.
const MaxShards = 10_000

// ShardID is shard I of N (1 ≤ I ≤ N); the zero value is the whole plan.
type ShardID struct{ I, N int }

// ParseShard reads "I/N".
func ParseShard(text string) (ShardID, error) {
	i, n, ok := strings.Cut(text, "/")
	a, errA := strconv.Atoi(i)
	b, errB := strconv.Atoi(n)
	if !ok || errA != nil || errB != nil || b < 1 || b > MaxShards || a < 1 || a > b {
		return ShardID{}, fmt.Errorf("shard %.40q is not I/N with 1 ≤ I ≤ N ≤ %d, such as 3/20", text, MaxShards)
	}
	return ShardID{a, b}, nil
}

// String gives "I/N", or "" for the whole plan.
func (s ShardID) String() string {
	if s.N == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.I, s.N)
}

// Shard is shard id of p: testbed groups, assigned largest estimate first
// to the shard with the least estimated time so far, in plan order within
// the shard. A group estimated above a shard's mean is split into runs of
// whole repetitions first, unless the spec stops repetitions (until),
// whose rule needs every repetition of a setting in one shard. The N
// shards together are exactly p, and a shard is the same on every
// machine. The whole plan for the zero id.
func (p Plan) Shard(s *spec.Spec, id ShardID) Plan {
	if id.N <= 1 {
		return p
	}
	groups := p.groups(s)
	if s.Until == nil {
		groups = splitLarge(groups, id.N)
	}
	order := make([]int, len(groups))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(groups[b].cost, groups[a].cost) })
	load := make([]time.Duration, id.N)
	mine := map[int]bool{}
	for _, g := range order {
		least := 0
		for k := range load {
			if load[k] < load[least] {
				least = k
			}
		}
		load[least] += groups[g].cost
		if least == id.I-1 {
			mine[g] = true
		}
	}
	out := Plan{}
	cells, setups := map[string]bool{}, map[*Setup]bool{}
	for g, grp := range groups {
		if !mine[g] {
			continue
		}
		for _, t := range grp.trials {
			out.Trials = append(out.Trials, t)
			cells[t.Cell.ID()], setups[t.Cell.Setup] = true, true
		}
	}
	slices.SortFunc(out.Trials, func(a, b Trial) int { return a.Seq - b.Seq })
	out.Cells, out.Setups = len(cells), len(setups)
	return out
}

// splitLarge splits each group estimated above a quarter of the mean
// shard's time into parts of whole repetitions of about that quarter, so
// that the parts can fill the shards evenly.
func splitLarge(groups []group, n int) []group {
	var total time.Duration
	for _, g := range groups {
		total += g.cost
	}
	mean := total / time.Duration(n)
	var out []group
	for _, g := range groups {
		parts := int(g.cost / max(mean/4, 1))
		if parts < 2 {
			out = append(out, g)
			continue
		}
		out = append(out, splitByRep(g, parts)...)
	}
	return out
}

// splitByRep cuts a group into parts of consecutive repetitions, each
// costing about the same (each part also pays for its testbed).
func splitByRep(g group, parts int) []group {
	per := (g.cost - setupCost) / time.Duration(parts)
	var out []group
	cur := group{cost: setupCost}
	for i, t := range g.trials {
		cur.trials, cur.costs = append(cur.trials, t), append(cur.costs, g.costs[i])
		cur.cost += g.costs[i]
		lastOfRep := i+1 == len(g.trials) || g.trials[i+1].Rep != t.Rep
		if lastOfRep && cur.cost-setupCost >= per && len(out) < parts-1 {
			out = append(out, cur)
			cur = group{cost: setupCost}
		}
	}
	if len(cur.trials) > 0 {
		out = append(out, cur)
	}
	return out
}

// group is a testbed's trials and their estimated time.
type group struct {
	trials []Trial
	costs  []time.Duration // each trial's estimate
	cost   time.Duration   // the testbed's set-up and every trial
}

// groups splits p into its testbed groups, in plan order.
func (p Plan) groups(s *spec.Spec) []group {
	var out []group
	m := newLoadModel()
	for i := 0; i < len(p.Trials); {
		j := i
		for j < len(p.Trials) && p.Trials[j].Cell.Setup == p.Trials[i].Cell.Setup {
			j++
		}
		g := group{trials: p.Trials[i:j], cost: setupCost}
		for _, t := range g.trials {
			c := m.trialEstimate(s, t)
			g.costs, g.cost = append(g.costs, c), g.cost+c
		}
		out = append(out, g)
		i = j
	}
	return out
}

// ShardEstimates are the estimated times of the n shards of p.
func (p Plan) ShardEstimates(s *spec.Spec, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		sh := p.Shard(s, ShardID{i + 1, n})
		for _, g := range sh.groups(s) {
			out[i] += g.cost
		}
	}
	return out
}
