package reproduce

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/quicbench/quicbench/internal/papers"
	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/spec"
)

// Loads a cell that a round of deciding adds at least and at most: a
// round then re-reads every claim, so that loads stop going to a claim
// once it is decided (the sequential stopping of spec until, applied to
// claims).
const (
	MinRoundLoads = 2
	MaxRoundLoads = 10
)

// FarPerCell is the projected need, in loads a cell, beyond which a claim
// waits while others can be decided within a round: a round gives it at
// most MaxRoundLoads, which would not decide it, and its cells' loads
// would take the budget from claims a round can decide (on Wolsing et
// al.'s MSS link, 22 s a load, such a claim took 20 of 30 minutes).
const FarPerCell = 4 * MaxRoundLoads

// decideSuffix ends the name of a decide run: "<spec>-decide-<round>".
var decideSuffix = regexp.MustCompile(`-decide-([1-9][0-9]{0,3})$`)

// DecideName names the round-th decide run of the spec named name.
func DecideName(name string, round int) string { return fmt.Sprintf("%s-decide-%d", name, round) }

// BaseName is the name of the spec a decide run adds loads to ("" and
// false for any other name).
func BaseName(name string) (string, bool) {
	loc := decideSuffix.FindStringIndex(name)
	if loc == nil {
		return "", false
	}
	return name[:loc[0]], true
}

// Extension is one decide run: loads added to some cells of one of the
// reproduction's specs.
type Extension struct {
	// Spec is the spec's, renamed DecideName(spec, Round), its seed
	// derived from the spec's and the round (new loss draws), its
	// repetitions the most loads it adds to a cell.
	Spec  *spec.Spec
	Dir   string
	Round int
	// Cells are the loads it adds to each cell it loads (cell ID →
	// loads); Claims the claims that read them.
	Cells  map[string]int
	Claims []string
}

// Undecided lists the rows more loads can decide: inconclusive, neither
// a share (which needs more settings) nor on a bound of its region.
func Undecided(rows []papers.Row) []papers.Row {
	var out []papers.Row
	for _, r := range rows {
		if r.Verdict == papers.Inconclusive && r.Need.PerCell > 0 && !r.Need.OnBound {
			out = append(out, r)
		}
	}
	return out
}

// ThisRound splits undecided rows (from Undecided) into those a round
// loads now and those that wait: when any row projects a need a round can
// meet (at most MaxRoundLoads a cell), the rows that project more than
// FarPerCell wait for a later round; else every row is loaded now.
func ThisRound(undecided []papers.Row) (now, later []papers.Row) {
	near := slices.ContainsFunc(undecided, func(r papers.Row) bool { return r.Need.PerCell <= MaxRoundLoads })
	for _, r := range undecided {
		if near && r.Need.PerCell > FarPerCell {
			later = append(later, r)
		} else {
			now = append(now, r)
		}
	}
	return now, later
}

// specCell is one cell of one of the reproduction's specs.
type specCell struct{ spec, cell string }

// Extensions plans round round of deciding. Each undecided row that
// ThisRound loads now asks its
// cells, in whichever spec's runs they are, to reach the loads of its
// fullest cell plus what it projects it needs, within MinRoundLoads and
// MaxRoundLoads more: its cells end the round with equal loads where the
// round's bound allows, so that no side of its contrast lags. A cell
// that several rows read gets the most any asks, and the rows sharing a
// cell then ask as much for all their cells.
func (r Reproduction) Extensions(rows []papers.Row, round int) ([]Extension, error) {
	undecided, _ := ThisRound(Undecided(rows))
	total, have, cellsOf, err := roundTotals(undecided)
	if err != nil {
		return nil, err
	}
	bySpec := map[string]*Extension{}
	for i, row := range undecided {
		for _, c := range cellsOf[i] {
			e := bySpec[c.spec]
			if e == nil {
				e = &Extension{Round: round, Cells: map[string]int{}}
				bySpec[c.spec] = e
			}
			e.Cells[c.cell] = min(max(total[c]-have[c], MinRoundLoads), MaxRoundLoads)
			if !slices.Contains(e.Claims, row.Claim.ID) {
				e.Claims = append(e.Claims, row.Claim.ID)
			}
		}
	}
	return r.extensionsOf(bySpec, round)
}

// roundTotals is the loads each cell of the undecided rows is to end a
// round with, the loads it has and each row's cells: each row asks its cells to reach the
// loads of its fullest cell plus what it projects it needs, within
// MinRoundLoads and MaxRoundLoads more (balancedTotals shares them out).
func roundTotals(undecided []papers.Row) (total, have map[specCell]int, cellsOf [][]specCell, err error) {
	have, cellsOf, err = loadsOfCells(undecided)
	if err != nil {
		return nil, nil, nil, err
	}
	target := make([]int, len(undecided))
	for i, row := range undecided {
		fullest := 0
		for _, c := range cellsOf[i] {
			fullest = max(fullest, have[c])
		}
		target[i] = fullest + min(max(row.Need.PerCell, MinRoundLoads), MaxRoundLoads)
	}
	return balancedTotals(cellsOf, target), have, cellsOf, nil
}

// loadsOfCells counts the loads each row's cells hold (the most any row
// read: a load without a row's metric is not in its trials) and lists
// each row's cells.
func loadsOfCells(rows []papers.Row) (map[specCell]int, [][]specCell, error) {
	have := map[specCell]int{}
	cellsOf := make([][]specCell, len(rows))
	for i, row := range rows {
		read := map[specCell]int{}
		for _, ref := range row.Trials {
			name, cell, err := cellOfRef(ref)
			if err != nil {
				return nil, nil, err
			}
			read[specCell{name, cell}]++
		}
		for c, n := range read {
			have[c] = max(have[c], n)
			cellsOf[i] = append(cellsOf[i], c)
		}
		slices.SortFunc(cellsOf[i], func(a, b specCell) int { return strings.Compare(a.spec+"/"+a.cell, b.spec+"/"+b.cell) })
	}
	return have, cellsOf, nil
}

// balancedTotals gives each cell the loads to end the round with: the
// most that any row reading it asks, where a row asks for all its cells
// the most that any of them is given, until nothing changes (rows that
// share cells end with the same total).
func balancedTotals(cellsOf [][]specCell, target []int) map[specCell]int {
	total := map[specCell]int{}
	for changed := true; changed; {
		changed = false
		for i, cells := range cellsOf {
			for _, c := range cells {
				target[i] = max(target[i], total[c])
			}
			for _, c := range cells {
				if total[c] < target[i] {
					total[c], changed = target[i], true
				}
			}
		}
	}
	return total
}

// extensionsOf makes each spec's extension of the round, in spec order.
func (r Reproduction) extensionsOf(bySpec map[string]*Extension, round int) ([]Extension, error) {
	var out []Extension
	for _, s := range r.Specs {
		e := bySpec[s.Name]
		if e == nil {
			continue
		}
		derived, err := decideSpec(s, round, slices.Max(slices.Collect(maps.Values(e.Cells))))
		if err != nil {
			return nil, err
		}
		e.Spec, e.Dir = derived, filepath.Join(r.Dir, derived.DirName())
		out = append(out, *e)
	}
	return out, nil
}

// cellOfRef splits a trial reference "run/<cell>-r<rep>" into the spec
// whose run (or decide run) holds it and the cell's ID.
func cellOfRef(ref string) (specName, cell string, err error) {
	run, id, ok := strings.Cut(ref, "/")
	if !ok || run == "" || !strings.Contains(id, "-r") {
		return "", "", fmt.Errorf("trial %q is not run/<cell>-r<rep>: the claims were read without their runs' names", ref)
	}
	cell, _, valid := splitRep(id)
	if !valid {
		return "", "", fmt.Errorf("trial %q is not run/<cell>-r<rep>", ref)
	}
	if base, ok := BaseName(run); ok {
		run = base
	}
	return run, cell, nil
}

// decideSpec is s renamed for round, with a seed of its own and loads
// repetitions.
func decideSpec(s *spec.Spec, round, loads int) (*spec.Spec, error) {
	d := *s
	d.Name = DecideName(s.Name, round)
	d.Seed = plan.DeriveSeed(s.Seed, "decide", strconv.Itoa(round))
	d.Repetitions = loads
	d.Until = nil
	out, err := reparse(&d)
	if err != nil {
		return nil, fmt.Errorf("decide run of %s: %w", s.Name, err)
	}
	return out, nil
}

// reparse writes d as a spec file and reads it back: the spec a run
// stores, with its text and hash.
func reparse(d *spec.Spec) (*spec.Spec, error) {
	text, err := spec.Format(d)
	if err != nil {
		return nil, err
	}
	return spec.Parse(text)
}

// Rows evaluates the paper's claims on every run of r: its specs' runs
// and their decide runs, share claims on their samples where the
// reproduction is sequential; seed seeds the bootstrap.
func (r Reproduction) Rows(ctx context.Context, seed uint64) ([]papers.Row, error) {
	sample, err := ReadSample(r.Dir)
	if err != nil {
		return nil, err
	}
	return r.RowsThrough(ctx, papers.Options{Seed: seed, Sample: sample, Spend: sample != nil}, math.MaxInt)
}

// RowsThrough evaluates the paper's claims on r's runs and decide runs up
// to round (0: the specs' own runs alone), a spec whose run is not there
// holding nothing.
func (r Reproduction) RowsThrough(ctx context.Context, o papers.Options, round int) ([]papers.Row, error) {
	var sources []papers.Source
	for _, s := range r.Specs {
		srcs, err := runAndDecideRuns(ctx, r.Dir, s.Name, "")
		if errors.Is(err, fs.ErrNotExist) && round < math.MaxInt {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, src := range srcs {
			if src.Round <= round {
				sources = append(sources, src)
			}
		}
	}
	return papers.Evaluate(r.Paper, sources, o), nil
}

// Rounds is how many decide rounds the runs in r.Dir hold: the highest
// round of any spec's decide runs.
func (r Reproduction) Rounds() (int, error) {
	rounds := 0
	for _, s := range r.Specs {
		runs, err := decideRunsIn(r.Dir, s.Name)
		if err != nil {
			return 0, err
		}
		for _, run := range runs {
			rounds = max(rounds, run.round)
		}
	}
	return rounds, nil
}

// decideRun is one decide run found in a reproduction's directory.
type decideRun struct {
	name  string
	round int
}

// decideRunsIn lists the decide runs of the spec named name in dir, by
// round: the directories (not links) named DecideName(name, k).
func decideRunsIn(dir, name string) ([]decideRun, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("the reproduction's runs: %w", err)
	}
	var out []decideRun
	for _, e := range entries {
		base, ok := BaseName(e.Name())
		if !ok || base != name || !e.IsDir() {
			continue
		}
		out = append(out, decideRun{name: e.Name(), round: roundOf(e.Name())})
	}
	slices.SortFunc(out, func(a, b decideRun) int { return a.round - b.round })
	return out, nil
}

// runAndDecideRuns reads the run of the spec named name in dir/<name>
// and its decide runs beside it, leaving out the run named skip (the one
// read already); a missing run of the spec is fs.ErrNotExist.
func runAndDecideRuns(ctx context.Context, dir, name, skip string) ([]papers.Source, error) {
	decides, err := decideRunsIn(dir, name)
	if err != nil {
		return nil, err
	}
	runs := append([]decideRun{{name: name}}, decides...)
	var out []papers.Source
	for _, run := range runs {
		if run.name == skip {
			continue
		}
		ts, err := siblingTrials(ctx, filepath.Join(dir, run.name), run.name)
		if err != nil {
			return nil, err
		}
		out = append(out, papers.Source{Run: run.name, Trials: ts, Round: run.round})
	}
	return out, nil
}

// roundOf is the decide round of the run named name, 0 for a spec's own
// run.
func roundOf(name string) int {
	m := decideSuffix.FindStringSubmatch(name)
	if m == nil {
		return 0
	}
	k, _ := strconv.Atoi(m[1])
	return k
}

// Reseed gives every spec of r the seed seed instead of its own (new loss
// draws and trial order, the same pages): a second reproduction that
// shows whether the verdicts hold from run to run. Its runs are new runs,
// so give it its own directory.
func (r *Reproduction) Reseed(seed uint64) error {
	for i, s := range r.Specs {
		d := *s
		d.Seed = seed
		var err error
		if r.Specs[i], err = reparse(&d); err != nil {
			return fmt.Errorf("--seed: %s: %w", s.Name, err)
		}
	}
	r.Command += " --seed " + strconv.FormatUint(seed, 10)
	return nil
}
