package reproduce

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/papers"
	"github.com/quicbench/quicbench/internal/plan"
)

// This file holds the sequential design of a reproduction: its specs'
// repetitions become a budget. Every cell a claim reads gets a pilot of a
// few loads, a share claim a random sample of its settings at their whole
// repetitions; then, round after round, the undecided claims get more
// loads (a ratio or an interaction) or more settings (a share), each cell
// at most its spec's repetitions, until every claim is decided or nothing
// more can be given. Cells that no claim reads are left out.
//
// A share's settings get the design's loads, not a pilot's, because a
// setting is won or lost on its loads: a setting decided on 2 loads a side
// where the paper's had 5 is decided by noise more often, which draws the
// share towards a half (on Biswal et al.'s design, simulated, their large
// pages' share read 0.87 from 2 loads a setting against the fixed design's
// 0.93). A share saves by reading fewer settings, not fewer loads of each.

// DefaultPilot is the most loads a cell gets first by default: the quick
// scale's. A spec of fewer repetitions gives a third of them (at least
// papers.MinLoads), so that its pilot leaves rounds something to give.
const DefaultPilot = 5

// MinShareSample is the fewest settings a share claim's first sample
// holds (all of them where it has fewer), and ShareFraction the part of
// its settings it holds at least.
const (
	MinShareSample = 12
	ShareFraction  = 4 // a quarter
)

// MinShareStep is the fewest settings a round adds to an undecided share.
const MinShareStep = 4

// designCell is one cell of a spec: its levels and budget.
type designCell struct {
	levels factor.Levels
	budget int // the spec's repetitions: the most loads it may get
}

// shareDesign is a share claim's settings in the order its sample takes
// them, and the cells of each.
type shareDesign struct {
	order []factor.Levels
	cells map[factor.Levels][]specCell
}

// Design is the sequential design of a reproduction's specs.
type Design struct {
	// Pilot is the loads each cell gets first; 0: DefaultPilot, or a
	// third of the cell's budget where that is fewer (pilotOf).
	Pilot  int
	cells  map[specCell]designCell
	claims []papers.Claim
	reads  map[specCell][]int // the claims (indexes) that read a cell
	shares map[string]*shareDesign
}

// State is what a sequential reproduction has given: the loads planned
// for each cell so far, and how many settings of each share claim's order
// are its sample.
type State struct {
	Given   map[specCell]int
	Sampled map[string]int
}

// Loads is the loads the state plans in all.
func (st State) Loads() int { return sumValues(st.Given) }

// sumValues is the sum of m's values.
func sumValues[K comparable](m map[K]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// PerCell is the fewest and the most loads st gives a cell it loads.
func (st State) PerCell() (lo, hi int) {
	for _, g := range st.Given {
		if g > 0 && (lo == 0 || g < lo) {
			lo = g
		}
		hi = max(hi, g)
	}
	return lo, hi
}

// NewDesign lays out r's sequential design with a pilot of pilot loads a
// cell; seed orders each share claim's settings.
func NewDesign(r Reproduction, pilot int, seed uint64) (*Design, error) {
	if pilot != 0 && pilot < papers.MinLoads {
		return nil, fmt.Errorf("--pilot %d is below %d: a cell's comparison needs %d loads a side", pilot, papers.MinLoads, papers.MinLoads)
	}
	d := &Design{Pilot: pilot, cells: map[specCell]designCell{}, reads: map[specCell][]int{}, shares: map[string]*shareDesign{}}
	for _, c := range r.Paper.Claims {
		if c.NotReproduced == "" {
			d.claims = append(d.claims, c)
		}
	}
	for _, s := range r.Specs {
		for _, t := range plan.Build(s).Trials {
			if t.Rep != 1 {
				continue
			}
			c := specCell{s.Name, t.Cell.ID()}
			d.cells[c] = designCell{levels: t.Cell.Levels, budget: s.Repetitions}
			d.addReaders(c, t.Cell.Levels)
		}
	}
	for id, sh := range d.shares {
		sh.order = slices.SortedFunc(maps.Keys(sh.cells), func(a, b factor.Levels) int { return strings.Compare(papers.SettingKey(a), papers.SettingKey(b)) })
		rng := rand.New(rand.NewPCG(plan.DeriveSeed(seed, "share", id), 0))
		rng.Shuffle(len(sh.order), func(i, j int) { sh.order[i], sh.order[j] = sh.order[j], sh.order[i] })
	}
	return d, nil
}

// addReaders notes the claims that read cell c of levels l.
func (d *Design) addReaders(c specCell, l factor.Levels) {
	for i, claim := range d.claims {
		if !claim.Reads(l) {
			continue
		}
		d.reads[c] = append(d.reads[c], i)
		if claim.Stat.Kind != papers.Share {
			continue
		}
		sh := d.shares[claim.ID]
		if sh == nil {
			sh = &shareDesign{cells: map[factor.Levels][]specCell{}}
			d.shares[claim.ID] = sh
		}
		key := claim.SettingOf(l)
		sh.cells[key] = append(sh.cells[key], c)
	}
}

// pilotOf is the loads cell c gets first: Pilot, or by default
// DefaultPilot or a third of its budget where that is fewer, at least
// papers.MinLoads; never more than its budget.
func (d *Design) pilotOf(c specCell) int {
	budget := d.cells[c].budget
	if d.Pilot > 0 {
		return min(d.Pilot, budget)
	}
	return min(DefaultPilot, max(papers.MinLoads, (budget+2)/3), budget)
}

// Budget is the loads of the specs' whole designs: what the fixed
// design loads.
func (d *Design) Budget() int {
	n := 0
	for _, c := range d.cells {
		n += c.budget
	}
	return n
}

// Unread is how many cells no claim reads: the sequential design leaves
// them out.
func (d *Design) Unread() int {
	n := 0
	for c := range d.cells {
		if len(d.reads[c]) == 0 {
			n++
		}
	}
	return n
}

// Start is the pilot's state: the pilot's loads for each cell that a
// claim other than a share reads, and their whole budget for the cells of
// each share's first sample of settings.
func (d *Design) Start() State {
	st := State{Given: map[specCell]int{}, Sampled: map[string]int{}}
	for c := range d.cells {
		if slices.ContainsFunc(d.reads[c], func(i int) bool { return d.claims[i].Stat.Kind != papers.Share }) {
			st.Given[c] = d.pilotOf(c)
		}
	}
	for id, sh := range d.shares {
		n := min(len(sh.order), max(MinShareSample, (len(sh.order)+ShareFraction-1)/ShareFraction))
		d.sample(st, id, sh, n)
	}
	return st
}

// sample makes the first n settings of share id's order its sample,
// giving their cells their whole budget: the loads the fixed design decides
// each setting on.
func (d *Design) sample(st State, id string, sh *shareDesign, n int) {
	for _, key := range sh.order[:n] {
		for _, c := range sh.cells[key] {
			st.Given[c] = d.cells[c].budget
		}
	}
	st.Sampled[id] = n
}

// Sample is the settings each share claim reads in state st.
func (d *Design) Sample(st State) papers.Sample {
	out := papers.Sample{}
	for id, sh := range d.shares {
		set := map[string]bool{}
		for _, key := range sh.order[:st.Sampled[id]] {
			set[papers.SettingKey(key)] = true
		}
		out[id] = set
	}
	return out
}

// Round is what one round of a sequential reproduction adds.
type Round struct {
	adds map[specCell]int
	// Claims are the claims it gives loads or settings to.
	Claims []string
}

// Loads is the loads the round adds.
func (rd Round) Loads() int { return sumValues(rd.adds) }

// Next is the round after rows (the claims read in state st), and the
// state after it. A round of no loads: nothing more can decide a claim
// within the budget.
func (d *Design) Next(rows []papers.Row, st State) (Round, State, error) {
	next := State{Given: maps.Clone(st.Given), Sampled: maps.Clone(st.Sampled)}
	var rd Round
	loaded, err := d.moreLoads(rows, next)
	if err != nil {
		return Round{}, st, err
	}
	for _, row := range rows {
		if d.moreSettings(row, next) || slices.Contains(loaded, row.Claim.ID) {
			rd.Claims = append(rd.Claims, row.Claim.ID)
		}
	}
	rd.adds = map[specCell]int{}
	for c, g := range next.Given {
		if g > st.Given[c] {
			rd.adds[c] = g - st.Given[c]
		}
	}
	return rd, next, nil
}

// Cells is the loads st gives each cell of the spec named name (cell ID →
// loads): the cells its run loads.
func (st State) Cells(name string) map[string]int {
	out := map[string]int{}
	for c, g := range st.Given {
		if c.spec == name && g > 0 {
			out[c.cell] = g
		}
	}
	return out
}

// RoundExtensions are the decide runs of round number that load what rd
// adds.
func (r Reproduction) RoundExtensions(rd Round, number int) ([]Extension, error) {
	bySpec := map[string]*Extension{}
	for c, n := range rd.adds {
		e := bySpec[c.spec]
		if e == nil {
			e = &Extension{Round: number, Cells: map[string]int{}, Claims: rd.Claims}
			bySpec[c.spec] = e
		}
		e.Cells[c.cell] = n
	}
	return r.extensionsOf(bySpec, number)
}

// moreLoads gives the cells of the undecided claims that more loads can
// decide what a round of deciding gives them (Extensions' rule), each at
// most its budget; it returns the claims whose cells it gave loads.
func (d *Design) moreLoads(rows []papers.Row, st State) ([]string, error) {
	undecided, _ := ThisRound(undecidedWithin(rows))
	total, have, cellsOf, err := roundTotals(undecided)
	if err != nil {
		return nil, err
	}
	before := maps.Clone(st.Given)
	for c, t := range total {
		cell, ok := d.cells[c]
		if !ok {
			continue // a cell of a spec the design does not hold
		}
		add := min(max(t-have[c], MinRoundLoads), MaxRoundLoads)
		st.Given[c] = min(st.Given[c]+add, cell.budget)
	}
	var loaded []string
	for i, row := range undecided {
		if slices.ContainsFunc(cellsOf[i], func(c specCell) bool { return st.Given[c] > before[c] }) {
			loaded = append(loaded, row.Claim.ID)
		}
	}
	return loaded, nil
}

// undecidedWithin lists the rows more loads may decide within a budget:
// Undecided's, and those whose value sits on a bound of their region,
// which get a round's most (a pilot's value is rough: the bound it sits
// on may not be the claim's; the budget stops a claim that is).
func undecidedWithin(rows []papers.Row) []papers.Row {
	var out []papers.Row
	for _, r := range rows {
		switch {
		case r.Verdict != papers.Inconclusive || r.Claim.Stat.Kind == papers.Share:
		case r.Need.OnBound:
			r.Need.PerCell = MaxRoundLoads
			out = append(out, r)
		case r.Need.PerCell > 0:
			out = append(out, r)
		}
	}
	return out
}

// moreSettings widens an undecided share's sample by the settings it
// needs (at least MinShareStep), while its order has more, and reports
// whether it did.
func (d *Design) moreSettings(row papers.Row, st State) bool {
	sh := d.shares[row.Claim.ID]
	if sh == nil || row.Verdict != papers.Inconclusive || row.Need.OnBound || row.Need.Settings <= 0 {
		return false
	}
	have := st.Sampled[row.Claim.ID]
	if have >= len(sh.order) {
		return false
	}
	d.sample(st, row.Claim.ID, sh, min(len(sh.order), have+max(row.Need.Settings, MinShareStep)))
	return true
}

// Expected is the loads the design is expected to give in all, projected
// from rows (the claims read in state st): each undecided claim's cells
// given what its interval's width at the observed spread says it needs
// (papers.Need; its cells' budget where its value sits on a bound), each
// undecided share the settings it needs; never more than the budget.
func (d *Design) Expected(rows []papers.Row, st State) int {
	want := maps.Clone(st.Given)
	undecided := undecidedWithin(rows)
	_, _, cellsOf, err := roundTotals(undecided)
	if err != nil {
		return st.Loads()
	}
	for i, row := range undecided {
		for _, c := range cellsOf[i] {
			if cell, ok := d.cells[c]; ok {
				more := row.Need.PerCell
				if row.Need.OnBound {
					more = cell.budget
				}
				want[c] = max(want[c], min(st.Given[c]+more, cell.budget))
			}
		}
	}
	for _, row := range rows {
		sh := d.shares[row.Claim.ID]
		if sh == nil || row.Verdict != papers.Inconclusive || row.Need.OnBound || row.Need.Settings <= 0 {
			continue
		}
		n := min(len(sh.order), st.Sampled[row.Claim.ID]+row.Need.Settings)
		for _, key := range sh.order[:n] {
			for _, c := range sh.cells[key] {
				want[c] = max(want[c], d.pilotOf(c))
			}
		}
	}
	return State{Given: want}.Loads()
}
