package plan

// Only is the part of p whose cells are among cells (cell IDs), in plan
// order: the loads of a chosen few settings, as a reproduction that
// decides its undecided claims adds them. The whole plan for an empty
// set.
func (p Plan) Only(cells map[string]bool) Plan {
	if len(cells) == 0 {
		return p
	}
	out := Plan{}
	kept, setups := map[string]bool{}, map[*Setup]bool{}
	for _, t := range p.Trials {
		if id := t.Cell.ID(); cells[id] {
			out.Trials = append(out.Trials, t)
			kept[id], setups[t.Cell.Setup] = true, true
		}
	}
	out.Cells, out.Setups = len(kept), len(setups)
	return out
}
