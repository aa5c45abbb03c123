package report

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/quicbench/quicbench/internal/papers"
	"github.com/quicbench/quicbench/internal/results"
)

// Claims are a paper's claims set beside the loads of the run and of the
// runs of the same reproduction beside it.
type Claims struct {
	Paper papers.Paper
	Rows  []papers.Row
	// Runs names the runs read ("" for this one: its trial IDs carry no
	// run), and Missing the reproduction's runs not found beside it.
	Runs    []string
	Missing []string
}

// claimsOf evaluates the claims of the paper whose spec the run in dir
// ran (spec name), reading the other runs of its scale from their
// directories beside dir, as quicbench reproduce lays them out
// (OUT/<spec name>/); nil for a run of no paper's spec.
func claimsOf(ctx context.Context, dir, name string, trials []results.Trial, seed uint64) (*Claims, error) {
	p, ok := papers.ForSpec(name)
	if !ok {
		return nil, nil
	}
	cl := &Claims{Paper: p, Runs: []string{""}}
	sources := []papers.Source{{Trials: trials}}
	for _, file := range specsBeside(p, name) {
		other := strings.TrimSuffix(file, ".yaml")
		ts, err := siblingTrials(ctx, filepath.Join(filepath.Dir(dir), other), other)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			cl.Missing = append(cl.Missing, other)
			continue
		case err != nil:
			return nil, err
		}
		cl.Runs = append(cl.Runs, other)
		sources = append(sources, papers.Source{Run: other, Trials: ts})
	}
	cl.Rows = papers.Evaluate(p, sources, papers.Options{Seed: seed})
	return cl, nil
}

// specsBeside lists the other spec files of the scale that includes name.
func specsBeside(p papers.Paper, name string) []string {
	for _, files := range p.Specs {
		if slices.Contains(files, name+".yaml") {
			return slices.DeleteFunc(slices.Clone(files), func(f string) bool { return f == name+".yaml" })
		}
	}
	return nil
}

// siblingTrials reads the trials of the run in dir, which must have run
// the spec named name; an error wrapping fs.ErrNotExist if there is no
// run there.
func siblingTrials(ctx context.Context, dir, name string) ([]results.Trial, error) {
	store, err := results.OpenRunOf(dir, name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("the reproduction's runs: %w: move it, or the claims would read the wrong loads", err)
	}
	defer store.Close()
	var trials []results.Trial
	err = store.EachTrial(func(t results.Trial) error {
		trials = append(trials, t)
		return ctx.Err()
	})
	return trials, err
}
