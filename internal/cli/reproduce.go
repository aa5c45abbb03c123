package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/experiment"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/papers"
	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/reproduce"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/spec"
)

// reproduceFlags are reproduce's flags as parsed, before validation.
type reproduceFlags struct {
	scale, out, sites                                  *string
	list, decide, sequential, replay, verbose, onSlurm *bool
	budget                                             *time.Duration
	pilot, parallel                                    *int
	seed                                               *uint64
	binaries                                           clientBinaries
	slurm                                              slurmOptions
}

// newReproduceFlags declares reproduce's flags on fs.
func newReproduceFlags(fs *flag.FlagSet) *reproduceFlags {
	f := &reproduceFlags{
		scale:      fs.String("scale", string(papers.Quick), "`quick`: a slice of the design with every claim's cells, under half an hour each here; paper: the paper's whole design (hours to days: it says how to shard it on Slurm)"),
		out:        fs.String("out", "", "`directory` of the reproduction: a run per spec in DIR/<spec>/ (DIR/<paper>/<spec>/ for all), continued where it stopped if it exists (default runs/reproduce-<paper>-<time>)"),
		list:       fs.Bool("list", false, "name the papers and their claims, and run nothing"),
		decide:     fs.Bool("decide", false, "then add loads to the cells of the inconclusive claims, round after round, until each is decided or --budget is spent (runs OUT/<spec>-decide-<round>/)"),
		budget:     fs.Duration("budget", time.Hour, "with --decide: how long its rounds may load pages, such as 2h (with --sequential: no limit unless given)"),
		sequential: fs.Bool("sequential", false, "the specs' repetitions become a budget: a pilot of --pilot loads a cell each claim reads (a share claim a random sample of its settings), then rounds for the undecided claims, each cell at most its repetitions; cells no claim reads are left out (docs/reproduce.md#sequential-the-repetitions-as-a-budget)"),
		replay:     fs.Bool("replay-sequential", false, "load nothing: replay --sequential on the fixed runs in --out, and print each claim's verdict and loads both ways"),
		pilot:      fs.Int("pilot", 0, "with --sequential: the `loads` a cell gets first (default 5, or a third of a spec's repetitions where that is fewer, at least 2)"),
		seed:       fs.Uint64("seed", 0, "the specs' seed instead of their own (other loss draws and trial order, the same pages): a second reproduction, in another --out, shows whether the verdicts hold"),
		sites:      fs.String("sites", "", "`directory` of recorded sites (site archives, Mahimahi recording directories, .har or .wprgo files): the paper's claims about pages are also evaluated on them, imported into OUT/sites/, each verdict on real pages beside the one on generated pages"),
		binaries:   newClientBinaries(fs),
		verbose:    fs.Bool("verbose", false, "log what the runs do to stderr"),
		parallel:   fs.Int("parallel", 0, "run each spec as this `many` shards side by side on this machine, each on CPUs of its own (the CPUs shared out), merged into the spec's run (see quicbench run --parallel)"),
		onSlurm:    fs.Bool("slurm", false, "submit each spec whose run is not in --out yet to Slurm instead of running it here: a job array sized by the plan and --nodes (a task per shard, resumed where it stopped) and a merge job into the spec's run directory; says the expected wall time first; run the same command without --slurm once the merges are done to evaluate the claims"),
	}
	fs.IntVar(&f.slurm.nodes, "nodes", 1, "with --slurm: the `number` of nodes the jobs share (one shard a node at a time), for the shards and the expected wall time")
	fs.StringVar(&f.slurm.partition, "partition", "", "with --slurm: the Slurm `partition` to run in (default: the cluster's)")
	fs.StringVar(&f.slurm.time, "time", "", "with --slurm: each array task's time `limit`, as sbatch takes it, such as 12:00:00 (default: the partition's)")
	return f
}

// reproduceUsage is reproduce's usage text.
func reproduceUsage() string {
	return "Usage: quicbench reproduce PAPER [--scale quick|paper] [--out DIR] [--seed N] [--sites DIR] [--decide [--budget 2h] | --sequential [--pilot 5]]\n       quicbench reproduce PAPER --out DIR --replay-sequential [--scale …] [--pilot N]\n       quicbench reproduce PAPER --slurm [--nodes N] [--partition P] [--time T] [--scale …] [--out DIR] [--seed N]\n       quicbench reproduce --list\n\n" +
		"Runs a paper's design (its example specs), then prints one row per claim of the paper: its figure, ours with its\n" +
		"95 % interval, and agrees, disagrees or inconclusive at the paper's significance level. PAPER is one of\n" +
		strings.Join(papers.IDs(), ", ") + " (or a first author), or all."
}

// check says what is wrong with the flags' combination, nil if nothing.
func (f *reproduceFlags) check() error {
	switch {
	case *f.budget <= 0:
		return fmt.Errorf("--budget %v: give a positive duration, such as 2h", *f.budget)
	case *f.onSlurm:
		if err := f.slurm.check(roundsFlag(*f.decide, *f.sequential)); err != nil {
			return err
		}
	}
	switch {
	case *f.pilot != 0 && *f.pilot < papers.MinLoads:
		return fmt.Errorf("--pilot %d is below %d: a cell's comparison needs %d loads a side", *f.pilot, papers.MinLoads, papers.MinLoads)
	case *f.replay && (*f.out == "" || *f.sequential || *f.decide || *f.onSlurm):
		return fmt.Errorf("--replay-sequential reads the fixed runs in --out DIR and loads nothing: give --out, and no --sequential, --decide or --slurm")
	case *f.sequential && (*f.decide || *f.parallel > 0):
		return fmt.Errorf("--sequential decides its claims round by round already: leave out --decide and --parallel")
	case *f.parallel < 0 || *f.parallel == 1 || (*f.parallel > 0 && *f.onSlurm):
		return fmt.Errorf("--parallel %d: give 2 or more shards, and not with --slurm (whose nodes run the shards)", *f.parallel)
	}
	return nil
}

// resolve finds the reproductions the paper's name and the flags ask for,
// reseeded if --seed says so, after checking the flags.
func (f *reproduceFlags) resolve(name string) ([]reproduce.Reproduction, error) {
	repros, err := reproduce.Resolve(name, *f.scale, *f.out, time.Now())
	if err == nil {
		err = f.check()
	}
	for i := range repros {
		if err == nil && *f.seed != 0 {
			err = repros[i].Reseed(*f.seed)
		}
	}
	return repros, err
}

// rounds are the rounds of loads after the runs the flags ask for: the
// sequential design's options (nil without --sequential) and --decide's
// budget (0 without it).
func (f *reproduceFlags) rounds(fs *flag.FlagSet) (*sequentialOptions, time.Duration) {
	var seq *sequentialOptions
	if *f.sequential {
		seq = &sequentialOptions{pilot: *f.pilot}
		if flagGiven(fs, "budget") {
			seq.budget = *f.budget
		}
	}
	if !*f.decide {
		return seq, 0
	}
	return seq, *f.budget
}

// runReproduce runs a paper's specs at a scale and sets its claims beside
// the measurement.
func runReproduce(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("reproduce", flag.ContinueOnError)
	f := newReproduceFlags(fs)
	if len(args) > 0 && (args[0] == "--list" || args[0] == "-list") && len(args) == 1 {
		papers.WriteList(stdout, papers.All())
		return exitOK
	}
	name, code, done := argAndFlags(fs, args, reproduceUsage(), "a paper: "+strings.Join(papers.IDs(), ", ")+" or all (quicbench reproduce --list describes them)", stdout, stderr)
	if done {
		return code
	}
	if *f.list {
		papers.WriteList(stdout, papers.All())
		return exitOK
	}
	repros, err := f.resolve(name)
	if err != nil {
		fmt.Fprintln(stderr, "quicbench reproduce:", err)
		return exitUsage
	}
	if *f.sites != "" {
		if code := useSites(ctx, repros, *f.sites, stdout, stderr); code != exitOK {
			return code
		}
	}
	if *f.onSlurm {
		return submitReproductions(repros, f.slurm, stdout, stderr)
	}
	return reproduceHere(ctx, fs, f, repros, stdout, stderr)
}

// reproduceHere checks the reproductions' designs and prerequisites, then
// replays or runs each on this machine.
func reproduceHere(ctx context.Context, fs *flag.FlagSet, f *reproduceFlags, repros []reproduce.Reproduction, stdout, stderr io.Writer) int {
	for _, r := range repros {
		if err := r.CheckDesign(*f.sequential); err != nil {
			fmt.Fprintln(stderr, "quicbench reproduce:", err)
			return exitUsage
		}
	}
	if *f.replay {
		for _, r := range repros {
			if code := replaySequential(ctx, r, *f.pilot, stdout, stderr); code != exitOK {
				return code
			}
		}
		return exitOK
	}
	for _, r := range repros {
		if err := checkReproduction(ctx, r, f.binaries.values()); err != nil {
			fmt.Fprintln(stderr, "quicbench reproduce:", err)
			return exitUsage
		}
	}
	seq, budget := f.rounds(fs)
	side := sideBySide{shards: *f.parallel, flags: userFlags(fs, "scale", "out", "list", "decide", "budget", "seed", "sites", "slurm", "nodes", "partition", "time", "parallel", "sequential", "pilot")}
	for _, r := range repros {
		if code := runReproduction(ctx, r, f.binaries.values(), budget, seq, *f.verbose, side, stdout, stderr); code != exitOK {
			return code
		}
	}
	return exitOK
}

// roundsFlag names the flag that asks for rounds of loads after the
// runs, "" for none.
func roundsFlag(decide, sequential bool) string {
	switch {
	case sequential:
		return "--sequential"
	case decide:
		return "--decide"
	}
	return ""
}

// useSites imports the recordings of dir into each reproduction's
// directory and adds its real-pages run, saying which could not be
// imported and why.
func useSites(ctx context.Context, repros []reproduce.Reproduction, dir string, stdout, stderr io.Writer) int {
	for i := range repros {
		r := &repros[i]
		if err := checkOwnOutput(r.Dir, "--out"); err != nil {
			fmt.Fprintln(stderr, "quicbench reproduce:", err)
			return exitUsage
		}
		sites, err := reproduce.ImportSites(ctx, dir, r.Dir)
		if err == nil {
			err = r.UseSites(dir, sites)
		}
		if err != nil {
			fmt.Fprintln(stderr, "quicbench reproduce:", err)
			return interruptedOr(ctx, exitUsage)
		}
		out := printable{stdout}
		fmt.Fprintf(out, "%s: %d recorded sites from %s, imported into %s", r.Paper.ID, len(r.Real.Pages), dir, filepath.Join(r.Dir, reproduce.SitesDir))
		for _, s := range sites {
			if s.Err != nil {
				fmt.Fprintf(out, "; %s left out: %v", s.Name, s.Err)
			}
		}
		fmt.Fprintln(out)
	}
	return exitOK
}

// checkReproduction refuses, before anything runs, a reproduction whose
// clients are missing or whose directory holds another paper's runs.
func checkReproduction(ctx context.Context, r reproduce.Reproduction, binaries map[factor.Client]string) error {
	for _, s := range r.AllSpecs() {
		if err := checkPrerequisites(ctx, s, binaries, r.RunDir(s)); err != nil {
			return err
		}
	}
	return r.CheckRuns()
}

// continueCommand is base (a reproduction's command) with the rounds it
// was asked for, sequential (seq) or deciding within budget (none: 0): the
// command an interrupted reproduction says continues it.
func continueCommand(base string, budget time.Duration, seq *sequentialOptions) string {
	switch {
	case seq != nil:
		base += " --sequential"
		if seq.pilot > 0 {
			base += " --pilot " + strconv.Itoa(seq.pilot)
		}
		if seq.budget > 0 {
			base += " --budget " + seq.budget.String()
		}
	case budget > 0:
		base += " --decide --budget " + budget.String()
	}
	return base
}

// runReproduction runs one paper's specs (sequentially with seq, else
// each whole), decides its inconclusive claims within budget (none: 0),
// reports each run and prints the claims.
func runReproduction(ctx context.Context, r reproduce.Reproduction, binaries map[factor.Client]string, budget time.Duration, seq *sequentialOptions, verbose bool, side sideBySide, stdout, stderr io.Writer) int {
	fmt.Fprintf(stdout, "Reproducing %s, %q, at %s scale in %s\n", r.Paper.Cite(), r.Paper.Title, r.Scale, r.Dir)
	r.Command = continueCommand(r.Command, budget, seq)
	if r.Scale == papers.Full && seq == nil {
		r.AdviseSlurm(stdout)
	}
	whole := r.AllSpecs()
	if seq != nil {
		if code := sequentialReproduction(ctx, r, *seq, binaries, verbose, stdout, stderr); code != exitOK {
			return code
		}
		whole = whole[len(r.Specs):] // the real pages' spec, if any
	}
	for _, s := range whole {
		sideBySide := false
		if side.shards > 0 { // a spec whose run is there already goes on as that run
			held, err := holdsRun(r.RunDir(s))
			if err != nil {
				return runOutcome(ctx, nil, err, s.Name, r.RunDir(s), r.Command, stderr)
			}
			sideBySide = !held
		}
		var code int
		if sideBySide {
			code = runReproductionSpecSideBySide(ctx, r, s, side, stdout, stderr)
		} else {
			code = runReproductionSpec(ctx, r, s, nil, binaries, verbose, stdout, stderr)
		}
		if code != exitOK {
			return code
		}
	}
	if budget > 0 {
		if code := decideReproduction(ctx, r, binaries, budget, verbose, stdout, stderr); code != exitOK {
			return code
		}
	}
	ev, err := r.Evaluate(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "quicbench reproduce:", err)
		return interruptedOr(ctx, exitFailure)
	}
	for i, s := range r.AllSpecs() {
		fmt.Fprintf(stdout, "report of %s: %s\n", s.Name, ev.Reports[i])
	}
	fmt.Fprintln(stdout)
	fmt.Fprint(printable{stdout}, ev.Claims.Table)
	fmt.Fprintf(stdout, "\nThe claims with the trials each used: %s\n\n", ev.ClaimsCSV)
	return exitOK
}

// runOutcome says why a run of a reproduction's spec named name, in dir,
// that ended with res and err has no answer, and returns the exit status
// (exitOK, and nothing said, when it has one); continueWith is the
// command that continues it.
func runOutcome(ctx context.Context, res *experiment.RunResult, err error, name, dir, continueWith string, stderr io.Writer) int {
	switch {
	case err != nil && ctx.Err() != nil:
		fmt.Fprintf(stderr, "quicbench reproduce: interrupted; every completed trial is kept: continue with %s\n", continueWith)
		return exitInterrupted
	case err != nil && isUserError(err):
		fmt.Fprintln(stderr, "quicbench reproduce:", err)
		return exitUsage
	case err != nil:
		fmt.Fprintf(stderr, "quicbench reproduce: %s: %v; every completed trial is kept: %scontinue with %s\n", name, err, freeSpace(err), continueWith)
		return exitFailure
	case res.Failed > 0 && res.Failed == res.Done:
		fmt.Fprintf(stderr, "quicbench reproduce: every trial of %s failed, so it has no answer: see the attempts table of %s\n", name, dir)
		return exitFailure
	}
	return exitOK
}

// runReproductionSpec runs (or continues) one spec of a reproduction:
// the cells given (cell ID → loads, a sequential reproduction's pilot),
// or all of them for none.
func runReproductionSpec(ctx context.Context, r reproduce.Reproduction, s *spec.Spec, cells map[string]int, binaries map[factor.Client]string, verbose bool, stdout, stderr io.Writer) int {
	dir := r.RunDir(s)
	resume, err := holdsRun(dir)
	if err != nil {
		return runOutcome(ctx, nil, err, s.Name, dir, r.Command, stderr)
	}
	p := plan.Build(s).Only(cells)
	printPlan(stderr, s, p)
	progress := newProgress(stderr, s, len(p.Trials), verbose)
	res, err := experiment.Run(ctx, experiment.RunConfig{
		Spec: s, Dir: dir, Resume: resume, ClientBinaries: binaries, Facts: experiment.HostFacts(s.Clients(), binaries, Version),
		Log: newLogger(stderr, verbose), OnTrial: progress.update, Cells: cells, Grow: len(cells) > 0,
	})
	progress.finish()
	if code := runOutcome(ctx, res, err, s.Name, dir, r.Command, stderr); code != exitOK {
		return code
	}
	fmt.Fprintf(stdout, "%s: %d of %d trials recorded (%d failed), %d in this run, in %s\n", s.Name, res.Done, res.Total, res.Failed, res.Ran, res.Elapsed.Round(time.Second))
	return exitOK
}

// sideBySide is reproduce --parallel: how many shards a spec runs in side
// by side (0: one run), and the flags each shard's run is given.
type sideBySide struct {
	shards int
	flags  []string
}

// runReproductionSpecSideBySide runs one spec of a reproduction whose run
// is not there yet as side.shards runs side by side (run --parallel), from
// the spec as the reproduction runs it (--seed included) in
// OUT/parallel/<spec>/, merged into the spec's run directory.
func runReproductionSpecSideBySide(ctx context.Context, r reproduce.Reproduction, s *spec.Spec, side sideBySide, stdout, stderr io.Writer) int {
	rel := filepath.Join(parallelDir, s.DirName())
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		fmt.Fprintln(stderr, "quicbench reproduce:", err)
		return exitFailure
	}
	if err := safefs.WriteFile(r.Dir, filepath.Join(rel, "spec.yaml"), s.Source, 0o644); err != nil {
		fmt.Fprintf(stderr, "quicbench reproduce: %s: %v\n", s.Name, err)
		return exitFailure
	}
	dir := filepath.Join(r.Dir, rel)
	printPlan(stderr, s, plan.Build(s))
	return runParallel(ctx, parallelRun{path: filepath.Join(dir, "spec.yaml"), spec: s, dir: dir, merged: r.RunDir(s), shards: side.shards, resume: true,
		flags: side.flags, command: "reproduce", again: fmt.Sprintf("%s --parallel %d", r.Command, side.shards)}, stdout, stderr)
}

// holdsRun says whether dir holds a run's results database already (a
// run to resume rather than begin); a name that is a link counts as there
// (the run then refuses it), and an error is one of reading dir.
func holdsRun(dir string) (bool, error) {
	_, err := os.Lstat(filepath.Join(dir, results.FileName))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading run directory %s: %w", dir, err)
	}
	return true, nil
}

// parallelDir is the directory of a reproduction (below its own) that
// holds each spec's side-by-side shards, in parallelDir/<spec>/.
const parallelDir = "parallel"
