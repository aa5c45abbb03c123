package reproduce

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/quicbench/quicbench/internal/papers"
	"github.com/quicbench/quicbench/internal/report"
	"github.com/quicbench/quicbench/internal/results"
)

// ClaimsOf evaluates the claims of the paper whose spec the run of store
// ran (its fact spec_name), on its loads and those of the reproduction's
// other runs of the same scale and their decide runs, read from their
// directories beside it as Run lays them out (OUT/<spec name>/,
// OUT/<spec name>-decide-<round>/); seed seeds the bootstrap. Nil for a
// run of no paper's spec.
func ClaimsOf(ctx context.Context, store *results.Store, seed uint64) (*report.Claims, error) {
	facts, err := store.Facts()
	if err != nil {
		return nil, err
	}
	name := facts["spec_name"]
	base := name
	if b, ok := BaseName(name); ok {
		base = b
	}
	p, ok := papers.ForSpec(base)
	if !ok {
		return nil, nil
	}
	trials, err := trialsOf(ctx, store)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(filepath.Dir(store.Path()))
	runs, missing := []string{""}, []string(nil)
	sources := []papers.Source{{Trials: trials, Round: roundOf(name)}}
	for _, file := range specsOfScale(p, base) {
		other := strings.TrimSuffix(file, ".yaml")
		srcs, err := runAndDecideRuns(ctx, dir, other, name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			missing = append(missing, other)
			continue
		case err != nil:
			return nil, err
		}
		for _, src := range srcs {
			runs = append(runs, src.Run)
		}
		sources = append(sources, srcs...)
	}
	sample, err := ReadSample(dir)
	if err != nil {
		return nil, err
	}
	rows := papers.Evaluate(p, sources, papers.Options{Seed: seed, Sample: sample, Spend: sample != nil})
	if err := withRealPages(ctx, p, rows, dir, base, seed); err != nil {
		return nil, err
	}
	cl := claimsView(p, rows)
	cl.Runs, cl.Missing = runs, missing
	return cl, nil
}

// claimsView is the report's view of the paper's evaluated claims.
func claimsView(p papers.Paper, rows []papers.Row) *report.Claims {
	var table bytes.Buffer
	papers.WriteTable(&table, p, rows)
	cl := &report.Claims{PaperID: p.ID, Cite: p.Cite(), Title: p.Title, Venue: p.Venue, Setup: p.Setup,
		Tally: papers.Tally(rows), Table: table.String(), CSV: papers.CSVRows(rows)}
	for _, g := range p.Gaps {
		cl.Gaps = append(cl.Gaps, report.ClaimGap{Condition: g.Condition, Reason: g.Reason})
	}
	for _, r := range rows {
		c := r.Claim
		cl.Rows = append(cl.Rows, report.ClaimRow{ID: c.ID, Text: c.Text, Reported: c.Reported, Figure: c.Figure, Source: c.Source,
			Verdict: string(r.Verdict), Level: r.Level(), ToDecide: r.ToDecide(), Statistic: r.Statistic(), Ours: r.Ours(), HoldsIf: r.HoldsIf(),
			Used: r.Used(), Covers: r.Covers(), Differs: cmp.Or(c.NotReproduced, c.Differs), Arithmetic: c.Arithmetic, Trials: r.Trials,
			Real: r.RealText(), Marks: c.Marks(), Why: r.WhyText()})
	}
	return cl
}

// specsOfScale lists the spec files of the scale that includes the spec
// named name, itself among them.
func specsOfScale(p papers.Paper, name string) []string {
	for _, files := range p.Specs {
		if slices.Contains(files, name+".yaml") {
			return files
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
	return trialsOf(ctx, store)
}

// trialsOf reads every trial of store.
func trialsOf(ctx context.Context, store *results.Store) ([]results.Trial, error) {
	var trials []results.Trial
	err := store.EachTrial(func(t results.Trial) error {
		trials = append(trials, t)
		return ctx.Err()
	})
	return trials, err
}
