package reproduce

import (
	"context"
	"fmt"
	"maps"
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
	// repetitions the loads a cell it adds.
	Spec  *spec.Spec
	Dir   string
	Round int
	// Cells are the IDs of the cells it loads; Claims the claims that
	// read them.
	Cells  []string
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

// Extensions plans round round of deciding: for each spec, the cells the
// undecided rows read in its runs, loaded as many more times as the
// neediest of those rows projects, within MinRoundLoads and
// MaxRoundLoads.
func (r Reproduction) Extensions(rows []papers.Row, round int) ([]Extension, error) {
	type want struct {
		cells  map[string]bool
		claims []string
		loads  int
	}
	bySpec := map[string]*want{}
	for _, row := range Undecided(rows) {
		for _, ref := range row.Trials {
			name, cell, err := cellOfRef(ref)
			if err != nil {
				return nil, err
			}
			w := bySpec[name]
			if w == nil {
				w = &want{cells: map[string]bool{}}
				bySpec[name] = w
			}
			w.cells[cell] = true
			if !slices.Contains(w.claims, row.Claim.ID) {
				w.claims = append(w.claims, row.Claim.ID)
			}
			w.loads = max(w.loads, min(max(row.Need.PerCell, MinRoundLoads), MaxRoundLoads))
		}
	}
	var out []Extension
	for _, s := range r.Specs {
		w := bySpec[s.Name]
		if w == nil {
			continue
		}
		derived, err := decideSpec(s, round, w.loads)
		if err != nil {
			return nil, err
		}
		out = append(out, Extension{Spec: derived, Dir: filepath.Join(r.Dir, derived.DirName()), Round: round,
			Cells: slices.Sorted(maps.Keys(w.cells)), Claims: w.claims})
	}
	return out, nil
}

// cellOfRef splits a trial reference "run/<cell>-r<rep>" into the spec
// whose run (or decide run) holds it and the cell's ID.
func cellOfRef(ref string) (specName, cell string, err error) {
	run, id, ok := strings.Cut(ref, "/")
	i := strings.LastIndex(id, "-r")
	if !ok || run == "" || i <= 0 {
		return "", "", fmt.Errorf("trial %q is not run/<cell>-r<rep>: the claims were read without their runs' names", ref)
	}
	if _, err := strconv.Atoi(id[i+2:]); err != nil {
		return "", "", fmt.Errorf("trial %q is not run/<cell>-r<rep>", ref)
	}
	if base, ok := BaseName(run); ok {
		run = base
	}
	return run, id[:i], nil
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
// and their decide runs; seed seeds the bootstrap.
func (r Reproduction) Rows(ctx context.Context, seed uint64) ([]papers.Row, error) {
	var sources []papers.Source
	for _, s := range r.Specs {
		srcs, err := runAndDecideRuns(ctx, r.Dir, s.Name, "")
		if err != nil {
			return nil, err
		}
		sources = append(sources, srcs...)
	}
	return papers.Evaluate(r.Paper, sources, papers.Options{Seed: seed}), nil
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
		k, _ := strconv.Atoi(decideSuffix.FindStringSubmatch(e.Name())[1])
		out = append(out, decideRun{name: e.Name(), round: k})
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
	runs := []string{name}
	for _, d := range decides {
		runs = append(runs, d.name)
	}
	var out []papers.Source
	for _, run := range runs {
		if run == skip {
			continue
		}
		ts, err := siblingTrials(ctx, filepath.Join(dir, run), run)
		if err != nil {
			return nil, err
		}
		out = append(out, papers.Source{Run: run, Trials: ts})
	}
	return out, nil
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
