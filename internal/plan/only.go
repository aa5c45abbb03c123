package plan

// Only is the part of p that loads each of the chosen cells (cell ID →
// loads) as many times as chosen, its first repetitions, in plan order:
// the loads a reproduction that decides its undecided claims adds to a
// chosen few settings, more to some than to others. The whole plan for
// no choice.
func (p Plan) Only(loads map[string]int) Plan {
	if len(loads) == 0 {
		return p
	}
	out := Plan{}
	kept, setups := map[string]bool{}, map[*Setup]bool{}
	for _, t := range p.Trials {
		if id := t.Cell.ID(); t.Rep <= loads[id] {
			out.Trials = append(out.Trials, t)
			kept[id], setups[t.Cell.Setup] = true, true
		}
	}
	out.Cells, out.Setups = len(kept), len(setups)
	return out
}
