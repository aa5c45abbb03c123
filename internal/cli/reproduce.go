package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/quicbench/quicbench/examples"
	"github.com/quicbench/quicbench/internal/experiment"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/papers"
	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/report"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/spec"
)

// reproduction is what one paper's reproduction runs, and where.
type reproduction struct {
	paper papers.Paper
	scale papers.Scale
	dir   string // OUT, or OUT/<paper> for all
	specs []*spec.Spec
	// command repeats the reproduction (to continue it).
	command string
}

// runReproduce runs a paper's specs at a scale and sets its claims beside
// the measurement.
func runReproduce(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("reproduce", flag.ContinueOnError)
	scaleText := fs.String("scale", string(papers.Quick), "`quick`: a slice of the design with every claim's cells, under half an hour each here; paper: the paper's whole design (hours to days: it says how to shard it on Slurm)")
	out := fs.String("out", "", "`directory` of the reproduction: a run per spec in DIR/<spec>/ (DIR/<paper>/<spec>/ for all), continued where it stopped if it exists (default runs/reproduce-<paper>-<time>)")
	list := fs.Bool("list", false, "name the papers and their claims, and run nothing")
	binaries := newClientBinaries(fs)
	verbose := fs.Bool("verbose", false, "log what the runs do to stderr")
	usage := "Usage: quicbench reproduce PAPER [--scale quick|paper] [--out DIR]\n       quicbench reproduce --list\n\n" +
		"Runs a paper's design (its example specs), then prints one row per claim of the paper: its figure, ours with its\n" +
		"95 % interval, and agrees, disagrees or inconclusive at the paper's significance level. PAPER is one of\n" +
		strings.Join(papers.IDs(), ", ") + " (or a first author), or all."
	if len(args) > 0 && (args[0] == "--list" || args[0] == "-list") && len(args) == 1 {
		papers.WriteList(stdout, papers.All())
		return exitOK
	}
	name, code, done := argAndFlags(fs, args, usage, "a paper: "+strings.Join(papers.IDs(), ", ")+" or all (quicbench reproduce --list describes them)", stdout, stderr)
	if done {
		return code
	}
	if *list {
		papers.WriteList(stdout, papers.All())
		return exitOK
	}
	repros, err := reproductions(name, *scaleText, *out, time.Now())
	if err != nil {
		fmt.Fprintln(stderr, "quicbench reproduce:", err)
		return exitUsage
	}
	for _, r := range repros {
		if err := checkReproduction(r, binaries.values()); err != nil {
			fmt.Fprintln(stderr, "quicbench reproduce:", err)
			return exitUsage
		}
	}
	for _, r := range repros {
		if code := reproduce(ctx, r, binaries.values(), *verbose, stdout, stderr); code != exitOK {
			return code
		}
	}
	return exitOK
}

// reproductions resolves the command line into the reproductions to run.
func reproductions(name, scaleText, out string, now time.Time) ([]reproduction, error) {
	scale, err := papers.ParseScale(scaleText)
	if err != nil {
		return nil, fmt.Errorf("--scale: %v", err)
	}
	var ps []papers.Paper
	if strings.EqualFold(name, "all") {
		ps = papers.All()
	} else {
		p, err := papers.Lookup(name)
		if err != nil {
			return nil, err
		}
		ps = []papers.Paper{p}
	}
	root := out
	if root == "" {
		root = "runs/reproduce-" + strings.ToLower(name) + "-" + now.Format("20060102-150405")
	}
	var repros []reproduction
	for _, p := range ps {
		r := reproduction{paper: p, scale: scale, dir: root,
			command: fmt.Sprintf("quicbench reproduce %s --scale %s --out %s", strings.ToLower(name), scale, root)}
		if len(ps) > 1 {
			r.dir = filepath.Join(root, p.ID)
		}
		for _, file := range p.Specs[scale] {
			s, err := exampleSpec(file)
			if err != nil {
				return nil, err
			}
			r.specs = append(r.specs, s)
		}
		repros = append(repros, r)
	}
	return repros, nil
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

// checkReproduction refuses, before anything runs, a reproduction whose
// clients are missing or whose directory holds another paper's runs.
func checkReproduction(r reproduction, binaries map[factor.Client]string) error {
	for _, s := range r.specs {
		if err := checkPrerequisites(s, binaries, filepath.Join(r.dir, s.DirName())); err != nil {
			return err
		}
		store, err := results.OpenRunOf(filepath.Join(r.dir, s.DirName()), s.Name)
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

// reproduce runs one paper's specs, reports each run and prints the
// claims.
func reproduce(ctx context.Context, r reproduction, binaries map[factor.Client]string, verbose bool, stdout, stderr io.Writer) int {
	fmt.Fprintf(stdout, "Reproducing %s, %q, at %s scale in %s\n", r.paper.Cite(), r.paper.Title, r.scale, r.dir)
	if r.scale == papers.Full {
		adviseSlurm(stdout, r)
	}
	for _, s := range r.specs {
		if code := runReproductionSpec(ctx, r, s, binaries, verbose, stdout, stderr); code != exitOK {
			return code
		}
	}
	var claims *report.Claims
	for _, s := range r.specs {
		rep, err := reportRun(ctx, filepath.Join(r.dir, s.DirName()), r.paper.Metric)
		if err != nil {
			fmt.Fprintf(stderr, "quicbench reproduce: report of %s: %v\n", s.Name, err)
			return interruptedOr(ctx, exitFailure)
		}
		fmt.Fprintf(stdout, "report of %s: %s\n", s.Name, filepath.Join(r.dir, s.DirName(), "report", "index.html"))
		if claims == nil {
			claims = rep.Analysis.Claims
		}
	}
	if claims == nil {
		fmt.Fprintf(stderr, "quicbench reproduce: the reports of %s found no claims of %s\n", r.dir, r.paper.ID)
		return exitFailure
	}
	fmt.Fprintln(stdout)
	papers.WriteTable(printable{stdout}, r.paper, claims.Rows)
	if err := writeClaimsCSV(r.dir, claims.Rows); err != nil {
		fmt.Fprintln(stderr, "quicbench reproduce:", err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "\nThe claims with the trials each used: %s\n\n", filepath.Join(r.dir, "claims.csv"))
	return exitOK
}

// adviseSlurm says how long the paper's scale takes here and how to shard
// it on a cluster instead.
func adviseSlurm(w io.Writer, r reproduction) {
	var total time.Duration
	estimates := make([]time.Duration, len(r.specs))
	for i, s := range r.specs {
		estimates[i] = plan.Build(s).Estimate(s)
		total += estimates[i]
	}
	fmt.Fprintf(w, "The paper's scale takes about %s here by the plan's estimate; it runs here, resumably, unless you stop it.\n", total.Round(time.Minute))
	fmt.Fprintln(w, "On a Slurm cluster, shard each spec instead (a job array and a merge job each), then evaluate the merged runs:")
	for i, s := range r.specs {
		shards := max(1, int(math.Ceil(estimates[i].Hours()/4)))
		fmt.Fprintf(w, "  quicbench slurm examples/%s.yaml --shards %d --out %s --submit\n", s.Name, shards, filepath.Join(r.dir, s.DirName()))
	}
	fmt.Fprintf(w, "  %s   # once the merge jobs are done: runs what the runs lack, then the claims\n\n", r.command)
}

// runReproductionSpec runs (or continues) one spec of a reproduction.
func runReproductionSpec(ctx context.Context, r reproduction, s *spec.Spec, binaries map[factor.Client]string, verbose bool, stdout, stderr io.Writer) int {
	dir := filepath.Join(r.dir, s.DirName())
	_, statErr := os.Lstat(filepath.Join(dir, results.FileName))
	p := plan.Build(s)
	printPlan(stderr, s, p)
	progress := newProgress(stderr, s, len(p.Trials))
	res, err := experiment.Run(ctx, experiment.RunConfig{
		Spec: s, Dir: dir, Resume: statErr == nil, ClientBinaries: binaries, Facts: experiment.HostFacts(s.Clients(), binaries, Version),
		Log: newLogger(stderr, verbose), OnTrial: progress.update,
	})
	progress.finish()
	switch {
	case err != nil && ctx.Err() != nil:
		fmt.Fprintf(stderr, "quicbench reproduce: interrupted; every completed trial is kept: continue with %s\n", r.command)
		return exitInterrupted
	case err != nil && isUserError(err):
		fmt.Fprintln(stderr, "quicbench reproduce:", err)
		return exitUsage
	case err != nil:
		fmt.Fprintf(stderr, "quicbench reproduce: %s: %v; every completed trial is kept: %scontinue with %s\n", s.Name, err, freeSpace(err), r.command)
		return exitFailure
	case res.Failed > 0 && res.Failed == res.Done:
		fmt.Fprintf(stderr, "quicbench reproduce: every trial of %s failed, so it has no answer: see the attempts table of %s\n", s.Name, dir)
		return exitFailure
	}
	fmt.Fprintf(stdout, "%s: %d of %d trials recorded (%d failed), %d in this run, in %s\n", s.Name, res.Done, res.Total, res.Failed, res.Ran, res.Elapsed.Round(time.Second))
	return exitOK
}

// reportRun writes the report of the run in dir by the paper's metric;
// its analysis holds the claims.
func reportRun(ctx context.Context, dir, metric string) (*report.Report, error) {
	store, err := results.OpenReadOnly(filepath.Join(dir, results.FileName))
	if err != nil {
		return nil, err
	}
	defer store.Close()
	r, err := report.Build(ctx, store, "", report.Options{Metric: metric, Seed: 1})
	if err != nil {
		return nil, err
	}
	if _, err := report.WriteFiles(filepath.Join(dir, "report"), r.Page, r.Analysis, r.Figures); err != nil {
		return nil, err
	}
	return r, nil
}

// writeClaimsCSV writes the claims table into the reproduction's
// directory.
func writeClaimsCSV(dir string, rows []papers.Row) error {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.WriteAll(papers.CSVRows(rows))
	if err := w.Error(); err != nil {
		return err
	}
	return safefs.WriteFile(dir, "claims.csv", buf.Bytes(), 0o644)
}
