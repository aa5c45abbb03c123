package report

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
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
// the spec named name; fs.ErrNotExist if there is no run there.
func siblingTrials(ctx context.Context, dir, name string) ([]results.Trial, error) {
	path := filepath.Join(dir, results.FileName)
	if _, err := os.Lstat(path); err != nil {
		return nil, fs.ErrNotExist
	}
	store, err := results.OpenReadOnly(path)
	if err != nil {
		return nil, fmt.Errorf("the reproduction's run %s: %w", dir, err)
	}
	defer store.Close()
	facts, err := store.Facts()
	if err != nil {
		return nil, fmt.Errorf("the reproduction's run %s: %w", dir, err)
	}
	if got := facts["spec_name"]; got != name {
		return nil, fmt.Errorf("%s ran the spec %q, not %s: move it, or the claims would read the wrong loads", dir, got, name)
	}
	var trials []results.Trial
	err = store.EachTrial(func(t results.Trial) error {
		trials = append(trials, t)
		return ctx.Err()
	})
	return trials, err
}
