// Package reproduce lays out and evaluates the reproduction of a paper:
// which example specs a paper's scale runs and where (OUT/<spec name>/,
// or OUT/<paper>/<spec name>/ for every paper), the check that a
// directory holds no other spec's run, the report of each run with the
// paper's claims set beside its loads and those of the other runs
// (ClaimsOf), claims.csv, and how to shard a paper's scale on Slurm. The
// command line runs the specs (experiment.Run) between Resolve and
// Evaluate.
package reproduce

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/quicbench/quicbench/examples"
	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/papers"
	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/report"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/spec"
)

// Reproduction is what one paper's reproduction runs, and where.
type Reproduction struct {
	Paper papers.Paper
	Scale papers.Scale
	// Dir is OUT, or OUT/<paper> when every paper is reproduced.
	Dir   string
	Specs []*spec.Spec
	// Real, with recorded sites (UseSites), is the paper's RealPages spec
	// run on them, and Sites the recordings; nil and none without.
	Real  *spec.Spec
	Sites []Site
	// Command repeats the reproduction (to continue it).
	Command string
}

// AllSpecs are the specs r runs: its own, then the real-pages spec.
func (r Reproduction) AllSpecs() []*spec.Spec {
	if r.Real == nil {
		return r.Specs
	}
	return append(slices.Clip(r.Specs), r.Real)
}

// RunDir is where the run of spec s of r goes.
func (r Reproduction) RunDir(s *spec.Spec) string { return filepath.Join(r.Dir, s.DirName()) }

// ClaimsFile is the name of the claims table in a reproduction's
// directory.
const ClaimsFile = "claims.csv"

// Resolve turns the paper named name (an ID, a first author, or "all"),
// the scale and the output directory (empty: runs/reproduce-NAME-TIME at
// now) into the reproductions to run.
func Resolve(name, scaleText, out string, now time.Time) ([]Reproduction, error) {
	scale, err := papers.ParseScale(scaleText)
	if err != nil {
		return nil, fmt.Errorf("--scale: %v", err)
	}
	ps, err := lookup(name)
	if err != nil {
		return nil, err
	}
	root := out
	if root == "" {
		root = "runs/reproduce-" + strings.ToLower(name) + "-" + now.Format("20060102-150405")
	}
	var repros []Reproduction
	for _, p := range ps {
		r := Reproduction{Paper: p, Scale: scale, Dir: root,
			Command: fmt.Sprintf("quicbench reproduce %s --scale %s --out %s", strings.ToLower(name), scale, root)}
		if len(ps) > 1 {
			r.Dir = filepath.Join(root, p.ID)
		}
		for _, file := range p.Specs[scale] {
			s, err := exampleSpec(file)
			if err != nil {
				return nil, err
			}
			r.Specs = append(r.Specs, s)
		}
		repros = append(repros, r)
	}
	return repros, nil
}

// lookup is the paper named name, or every paper for "all".
func lookup(name string) ([]papers.Paper, error) {
	if strings.EqualFold(name, "all") {
		return papers.All(), nil
	}
	p, err := papers.Lookup(name)
	if err != nil {
		return nil, err
	}
	return []papers.Paper{p}, nil
}

// exampleSpec parses an embedded example spec.
func exampleSpec(file string) (*spec.Spec, error) {
	data, err := examples.Read(file)
	if err != nil {
		return nil, err
	}
	s, err := spec.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("example %s: %w", file, err)
	}
	return s, nil
}

// CheckRuns refuses a reproduction whose directory holds a run of another
// spec where one of its runs goes.
func (r Reproduction) CheckRuns() error {
	for _, s := range r.AllSpecs() {
		store, err := results.OpenRunOf(r.RunDir(s), s.Name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return fmt.Errorf("%w: give another --out", err)
		default:
			store.Close()
		}
	}
	return nil
}

// Evaluated is a reproduction's outcome: each run's report and the
// paper's claims.
type Evaluated struct {
	// Reports are the runs' report pages (index.html), in spec order.
	Reports []string
	Claims  *report.Claims
	// ClaimsCSV is the claims table written.
	ClaimsCSV string
}

// Evaluate writes the report of each of r's runs by the paper's metric,
// with the claims set beside its loads, and the claims table into r.Dir.
func (r Reproduction) Evaluate(ctx context.Context) (*Evaluated, error) {
	out := &Evaluated{}
	for _, s := range r.AllSpecs() {
		cl, err := reportRun(ctx, r.RunDir(s), r.Paper.Metric)
		if err != nil {
			return nil, fmt.Errorf("report of %s: %w", s.Name, err)
		}
		out.Reports = append(out.Reports, filepath.Join(r.RunDir(s), "report", "index.html"))
		if out.Claims == nil {
			out.Claims = cl
		}
	}
	if out.Claims == nil {
		return nil, fmt.Errorf("the reports of %s found no claims of %s", r.Dir, r.Paper.ID)
	}
	if err := writeClaimsCSV(r.Dir, out.Claims.CSV); err != nil {
		return nil, err
	}
	out.ClaimsCSV = filepath.Join(r.Dir, ClaimsFile)
	return out, nil
}

// reportRun writes the report of the run in dir by metric and returns its
// claims.
func reportRun(ctx context.Context, dir, metric string) (*report.Claims, error) {
	store, err := results.OpenReadOnly(filepath.Join(dir, results.FileName))
	if err != nil {
		return nil, err
	}
	defer store.Close()
	rep, err := Report(ctx, store, analysis.Options{Metric: metric, Seed: 1})
	if err != nil {
		return nil, err
	}
	if _, err := report.WriteFiles(filepath.Join(dir, "report"), rep.Page, rep.Analysis, rep.Figures); err != nil {
		return nil, err
	}
	return rep.Page.Claims, nil
}

// Report builds the report of the run of store with the claims of the
// paper whose spec it ran (ClaimsOf, the bootstrap seeded by o.Seed). A
// decide run that cannot be reported alone (its cells may hold one
// protocol) says which run's report reads it.
func Report(ctx context.Context, store *results.Store, o analysis.Options) (*report.Report, error) {
	claims, err := ClaimsOf(ctx, store, o.Seed)
	if err != nil {
		return nil, err
	}
	rep, err := report.Build(ctx, store, "", o, claims)
	if err != nil && ctx.Err() == nil {
		return nil, decideRunHint(store, err)
	}
	return rep, err
}

// decideRunHint adds to err, from the report of the run of store, which
// run to report instead if it is a decide run.
func decideRunHint(store *results.Store, err error) error {
	facts, ferr := store.Facts()
	if ferr != nil {
		return err
	}
	base, ok := BaseName(facts["spec_name"])
	if !ok {
		return err
	}
	dir := filepath.Join(filepath.Dir(filepath.Dir(store.Path())), base)
	return fmt.Errorf("%w (this is a decide run, loads added to some cells of %s: report %s, whose report reads them with its own)", err, base, dir)
}

// writeClaimsCSV writes the claims table into the reproduction's
// directory.
func writeClaimsCSV(dir string, rows [][]string) error {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.WriteAll(rows)
	if err := w.Error(); err != nil {
		return err
	}
	return safefs.WriteFile(dir, ClaimsFile, buf.Bytes(), 0o644)
}

// AdviseSlurm says how long r takes here by the plan's estimate and how to
// shard it on a cluster instead.
func (r Reproduction) AdviseSlurm(w io.Writer) {
	var total time.Duration
	estimates := make([]time.Duration, len(r.Specs))
	plans := make([]plan.Plan, len(r.Specs))
	for i, s := range r.Specs {
		plans[i] = plan.Build(s)
		estimates[i] = plans[i].Estimate(s)
		total += estimates[i]
	}
	fmt.Fprintf(w, "The paper's scale takes about %s here by the plan's estimate; it runs here, resumably, unless you stop it.\n", total.Round(time.Minute))
	for i, s := range r.Specs {
		if n, longest := plans[i].OverTimeout(s); n > 0 {
			fmt.Fprintf(w, "%s: %d trials' loads are expected to outlast its timeout of %s (up to about %s each by the model): they will fail unless its timeout is raised\n", s.Name, n, s.Timeout, longest.Round(time.Second))
		}
	}
	fmt.Fprintln(w, "On a Slurm cluster, submit it instead (a job array and a merge job per spec; it says the wall time it expects on N nodes first), then evaluate the merged runs:")
	fmt.Fprintf(w, "  %s --slurm --nodes N\n", r.Command)
	fmt.Fprintf(w, "  %s   # once the merge jobs are done: runs what the runs lack, then the claims\n\n", r.Command)
}
