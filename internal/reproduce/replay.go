package reproduce

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/quicbench/quicbench/internal/papers"
	"github.com/quicbench/quicbench/internal/results"
)

// Replayed is a sequential design replayed on fixed runs: the claims as
// the fixed runs decide them and as the sequential design would have.
type Replayed struct {
	Fixed, Sequential []papers.Row
	// FixedLoads is the loads of the fixed runs in cells of the design,
	// SequentialLoads those of them the sequential design took.
	FixedLoads, SequentialLoads int
	// Rounds is the sequential design's rounds after its pilot.
	Rounds int
	// PilotLoads is the loads the pilot took, and Expected the loads the
	// design expected to take in all once it had read the pilot's.
	PilotLoads, Expected int
}

// ReplaySequential replays d on the fixed runs of r's specs (each spec's
// own run in r.Dir): had the sequential design's loads been those runs'
// first repetitions of each cell, which it would have taken round after
// round, and what each claim would read. A cell's loads never exceed what
// its fixed run holds, so the design's budget is the fixed runs'.
func (r Reproduction) ReplaySequential(ctx context.Context, d *Design, seed uint64) (*Replayed, error) {
	fixed, held, err := r.fixedSources(ctx, d)
	if err != nil {
		return nil, err
	}
	out := &Replayed{Fixed: papers.Evaluate(r.Paper, fixed, papers.Options{Seed: seed})}
	out.FixedLoads = loadsIn(fixed)
	d = d.budgetsOf(held)
	st := d.Start()
	var given []State // the state after each round, the pilot's first
	for {
		given = append(given, st)
		read := takenBy(fixed, given)
		rows := papers.Evaluate(r.Paper, read, papers.Options{Seed: seed, Sample: d.Sample(st), Spend: true})
		if len(given) == 1 {
			out.PilotLoads, out.Expected = loadsIn(read), d.Expected(rows, st)
		}
		rd, next, err := d.Next(rows, st)
		if err != nil {
			return nil, err
		}
		if rd.Loads() == 0 || ctx.Err() != nil {
			out.Sequential, out.Rounds, out.SequentialLoads = rows, len(given)-1, loadsIn(read)
			return out, ctx.Err()
		}
		st = next
	}
}

// fixedSources reads each spec's own run in r.Dir, keeping the trials of
// the design's cells, and the repetitions each cell holds there.
func (r Reproduction) fixedSources(ctx context.Context, d *Design) ([]papers.Source, map[specCell]int, error) {
	var out []papers.Source
	held := map[specCell]int{}
	for _, s := range r.Specs {
		trials, err := siblingTrials(ctx, filepath.Join(r.Dir, s.DirName()), s.Name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a spec whose fixed run is not there: its cells hold nothing
		}
		if err != nil {
			return nil, nil, err
		}
		var kept []results.Trial
		for _, t := range trials {
			c := specCell{s.Name, cellIDOf(t.ID)}
			if _, ok := d.cells[c]; ok {
				kept = append(kept, t)
				held[c] = max(held[c], int(t.Rep))
			}
		}
		out = append(out, papers.Source{Run: s.Name, Trials: kept})
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("no run of %s's specs in %s: run it first (quicbench %s)", r.Paper.ID, r.Dir, r.Command)
	}
	return out, held, nil
}

// budgetsOf is d with each cell's budget the loads held gives it.
func (d *Design) budgetsOf(held map[specCell]int) *Design {
	out := *d
	out.cells = make(map[specCell]designCell, len(d.cells))
	for c, dc := range d.cells {
		dc.budget = held[c]
		out.cells[c] = dc
	}
	return &out
}

// takenBy is the loads of fixed that a sequential design took by the
// last of given (the states after each round): a cell's repetitions up to
// its loads given, each in the round that gave it.
func takenBy(fixed []papers.Source, given []State) []papers.Source {
	var out []papers.Source
	for _, src := range fixed {
		byRound := make([][]results.Trial, len(given))
		for _, t := range src.Trials {
			c := specCell{src.Run, cellIDOf(t.ID)}
			for round, st := range given {
				if int(t.Rep) <= st.Given[c] {
					byRound[round] = append(byRound[round], t)
					break
				}
			}
		}
		for round, trials := range byRound {
			if len(trials) > 0 {
				out = append(out, papers.Source{Run: src.Run, Trials: trials, Round: round})
			}
		}
	}
	return out
}

// loadsIn counts the trials of sources.
func loadsIn(sources []papers.Source) int {
	n := 0
	for _, src := range sources {
		n += len(src.Trials)
	}
	return n
}

// cellIDOf is the cell ID of trial ID "<cell>-r<rep>".
func cellIDOf(id string) string {
	if cell, _, ok := splitRep(id); ok {
		return cell
	}
	return id
}

// splitRep splits a trial ID, <cell>-r<rep>, into its cell's ID and its
// repetition; ok is false for an ID of another form.
func splitRep(id string) (cell string, rep int, ok bool) {
	i := strings.LastIndex(id, "-r")
	if i <= 0 {
		return "", 0, false
	}
	rep, err := strconv.Atoi(id[i+2:])
	return id[:i], rep, err == nil
}

// Agreement is how a sequential row stands to the fixed one of its claim.
type Agreement string

// The agreements of a replayed claim.
const (
	SameVerdict     Agreement = "same verdict"
	WithinIntervals Agreement = "within intervals" // verdicts differ, each value inside the other's 95 % interval
	Differs         Agreement = "differs"
	NotComparable   Agreement = "-" // neither design measured it
)

// Agree says how the sequential row s stands to the fixed row f.
func Agree(f, s papers.Row) Agreement {
	switch {
	case f.Verdict == s.Verdict && (f.Verdict == papers.NotMeasured || f.Verdict == papers.NotReproduced):
		return NotComparable
	case f.Verdict == s.Verdict:
		return SameVerdict
	case within(f.Value, s.Lo, s.Hi) && within(s.Value, f.Lo, f.Hi):
		return WithinIntervals
	}
	return Differs
}

// within reports whether v lies in [lo, hi].
func within(v, lo, hi float64) bool { return v >= lo && v <= hi }
