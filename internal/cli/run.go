package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/quicbench/quicbench/internal/experiment"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/spec"
	"github.com/quicbench/quicbench/internal/trust"
)

// specAndFlags parses "SPEC [flags]" or "[flags] SPEC" and returns SPEC.
func specAndFlags(fs *flag.FlagSet, args []string, usage string, stdout, stderr io.Writer) (string, int, bool) {
	return argAndFlags(fs, args, usage, "a spec file, such as examples/masri-quick.yaml", stdout, stderr)
}

// dirAndFlags parses "DIR [flags]" or "[flags] DIR" and returns the run
// directory DIR.
func dirAndFlags(fs *flag.FlagSet, args []string, usage string, stdout, stderr io.Writer) (string, int, bool) {
	return argAndFlags(fs, args, usage, "the run directory of a quicbench run, such as runs/s1", stdout, stderr)
}

// argAndFlags parses a command's one positional argument, before or after
// its flags; what describes the argument in the error when it is missing.
func argAndFlags(fs *flag.FlagSet, args []string, usage, what string, stdout, stderr io.Writer) (string, int, bool) {
	var arg string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		arg, args = args[0], args[1:]
	}
	if code, done := parseFlags(fs, args, usage, stdout, stderr); done {
		return "", code, true
	}
	rest := fs.Args()
	if arg == "" && len(rest) > 0 {
		arg, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "quicbench %s: unexpected argument %q (see quicbench %s -h)\n", fs.Name(), rest[0], fs.Name())
		return "", exitUsage, true
	}
	if arg == "" {
		fmt.Fprintf(stderr, "quicbench %s: give %s\n", fs.Name(), what)
		return "", exitUsage, true
	}
	if err := trust.CheckUserPaths(argPaths(fs.Name(), []string{arg})...); err != nil {
		fmt.Fprintf(stderr, "quicbench %s: %v\n", fs.Name(), err)
		return "", exitUsage, true
	}
	return arg, 0, false
}

// runFlags are run's flags as parsed, before validation.
type runFlags struct {
	out, shardText                      *string
	resume, retryFailed, verbose, lanes *bool
	waitLock                            *time.Duration
	cores, parallel                     *int
	binaries                            clientBinaries
	// shard is --shard parsed (check).
	shard plan.ShardID
}

// newRunFlags declares run's flags on fs.
func newRunFlags(fs *flag.FlagSet) *runFlags {
	return &runFlags{
		out:         fs.String("out", "", "run `directory` (default runs/<spec name>-<time>)"),
		resume:      fs.Bool("resume", false, "continue the run in --out: skip the recorded trials; refused if the spec changed"),
		retryFailed: fs.Bool("retry-failed", false, "with --resume: run the failed trials again (their earlier attempts are kept)"),
		binaries:    newClientBinaries(fs),
		verbose:     fs.Bool("verbose", false, "log what the run does to stderr, and list each trial as it ends (on a terminal the progress is a bar otherwise)"),
		waitLock:    fs.Duration("wait-lock", experiment.DefaultWaitLock, "wait at most this `long` while another run measures on this machine (it is named); 0 waits as long as it takes"),
		lanes:       fs.Bool("lanes", true, "sample each load's CPU and the link's bytes every 100 ms for the lanes under the report's waterfalls; --lanes=false leaves the loads unwatched"),
		shardText:   fs.String("shard", "", "run only shard `I/N` of the plan: whole testbed groups balanced by the plan's estimate (quicbench plan --shards N); merge the shards' directories with quicbench merge"),
		cores:       fs.Int("cores", 0, "measure on this `many` CPUs of the run's own, beside other runs with cores of their own on the others (0: the whole machine, one run at a time)"),
		parallel:    fs.Int("parallel", 0, "run the plan as this `many` shards side by side, each on CPUs of its own (--cores each, or the CPUs shared out), into --out's shard-I/, then merge them into its merged/"),
	}
}

// check parses --shard and says what is wrong with the flags'
// combination, nil if nothing.
func (f *runFlags) check() error {
	if *f.shardText != "" {
		shard, err := plan.ParseShard(*f.shardText)
		if err != nil {
			return fmt.Errorf("--shard: %w", err)
		}
		f.shard = shard
	}
	switch {
	case *f.waitLock < 0:
		return fmt.Errorf("--wait-lock %v is negative: give a duration such as 10m, or 0 to wait as long as it takes", *f.waitLock)
	case *f.resume && *f.out == "":
		return errors.New("--resume needs --out DIR, the run directory to continue")
	case *f.cores < 0 || *f.parallel < 0 || *f.parallel == 1 || (*f.parallel > 0 && f.shard.N > 0):
		return errors.New("--cores and --parallel are counts (--parallel 2 or more, and not with --shard, which a parallel run gives its shards)")
	case *f.retryFailed && !*f.resume:
		return errors.New("--retry-failed continues a run: add --resume --out DIR")
	}
	return nil
}

// dir is the run's directory: --out, or a new one named by the spec, the
// time and the shard.
func (f *runFlags) dir(s *spec.Spec) string {
	if *f.out != "" {
		return *f.out
	}
	dir := "runs/" + s.DirName() + "-" + time.Now().Format("20060102-150405")
	if f.shard.N > 0 {
		dir += fmt.Sprintf("-shard%dof%d", f.shard.I, f.shard.N)
	}
	return dir
}

// runRun runs a spec's plan into a run directory.
func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	f := newRunFlags(fs)
	path, code, done := specAndFlags(fs, args, "Usage: quicbench run SPEC [flags]\n\nRuns every trial of a spec file's plan and records each in DIR/results.db the moment it ends.", stdout, stderr)
	if done {
		return code
	}
	s, err := spec.Load(path)
	if err == nil {
		err = f.check()
	}
	if err != nil {
		fmt.Fprintln(stderr, "quicbench run:", err)
		return exitUsage
	}
	dir := f.dir(s)
	if err := checkPrerequisites(ctx, s, f.binaries.values(), dir); err != nil {
		fmt.Fprintln(stderr, "quicbench run:", err)
		return exitUsage
	}
	if *f.parallel > 0 {
		return runParallel(ctx, parallelRun{path: path, spec: s, dir: dir, shards: *f.parallel, cores: *f.cores, resume: *f.resume,
			flags: userFlags(fs, "parallel", "out", "shard", "cores", "resume"), command: "run", again: fmt.Sprintf("quicbench run %s --parallel %d --out %s --resume", path, *f.parallel, dir)}, stdout, stderr)
	}
	p := plan.Build(s).Shard(s, f.shard)
	printPlan(stderr, s, p)
	progress := newProgress(stderr, s, len(p.Trials), *f.verbose)
	res, err := experiment.Run(ctx, experiment.RunConfig{
		Spec: s, Dir: dir, Resume: *f.resume, RetryFailed: *f.retryFailed, ClientBinaries: f.binaries.values(), WaitLock: experiment.WaitLockOf(*f.waitLock), Facts: experiment.HostFacts(s.Clients(), f.binaries.values(), Version),
		Log: newLogger(stderr, *f.verbose), OnTrial: progress.update, Shard: f.shard, NoLanes: !*f.lanes, Cores: *f.cores,
	})
	progress.finish()
	if res == nil {
		return failedToStart(ctx, "run", err, stderr)
	}
	return reportRun(ctx, res, err, path, dir, stdout, stderr)
}

// reportRun prints how the run in dir of the spec at path ended (res, and
// err its error) and returns the exit status it means.
func reportRun(ctx context.Context, res *experiment.RunResult, err error, path, dir string, stdout, stderr io.Writer) int {
	fmt.Fprintf(stdout, "%d of %d trials recorded (%d failed), %d in this run, in %s; results in %s/results.db\n",
		res.Done, res.Total, res.Failed, res.Ran, res.Elapsed.Round(time.Second), dir)
	if res.Skipped > 0 {
		fmt.Fprintf(stdout, "%d trials left out: their settings' answers were known (repetitions until; quicbench report says when and why)\n", res.Skipped)
	}
	switch {
	case err != nil && ctx.Err() != nil:
		fmt.Fprintf(stderr, "quicbench run: interrupted; every completed trial is kept: continue with quicbench run %s --out %s --resume\n", path, dir)
		return exitInterrupted
	case err != nil && isUserError(err):
		fmt.Fprintf(stderr, "quicbench run: %v (every completed trial is kept in %s)\n", err, dir)
		return exitUsage
	case err != nil:
		fmt.Fprintf(stderr, "quicbench run: %v; every completed trial is kept: %scontinue with --out %s --resume\n", err, freeSpace(err), dir)
		return exitFailure
	case res.Failed > 0 && res.Failed == res.Done:
		fmt.Fprintf(stderr, "quicbench run: every trial failed, so the run has no answer: see the attempts table; once fixed, rerun them with quicbench run %s --out %s --resume --retry-failed\n", path, dir)
		return exitFailure
	case res.Failed > 0:
		fmt.Fprintf(stderr, "quicbench run: %d trials failed; rerun them with quicbench run %s --out %s --resume --retry-failed\n", res.Failed, path, dir)
	}
	return exitOK
}

// freeSpace is the advice to free disk space first, if err says the disk
// is full.
func freeSpace(err error) string {
	if errors.Is(err, results.ErrDiskFull) {
		return "free space, then "
	}
	return ""
}

// isUserError reports errors the user fixes by changing the command.
// failedToStart prints why a run stopped before its first trial (a bad
// directory, the machine busy for longer than --wait-lock, Ctrl-C while
// waiting for it) and returns its status.
func failedToStart(ctx context.Context, command string, err error, stderr io.Writer) int {
	switch {
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "quicbench %s: interrupted before its first trial\n", command)
		return exitInterrupted
	case isUserError(err):
		fmt.Fprintf(stderr, "quicbench %s: %v\n", command, err)
		return exitUsage
	}
	fmt.Fprintf(stderr, "quicbench %s: %v\n", command, err)
	return exitFailure
}

func isUserError(err error) bool {
	var in *experiment.InputError
	return errors.As(err, &in)
}

// progress shows a bar on a terminal and a line per trial otherwise, or
// when verbose.
type progress struct {
	// levels names the trial's levels of the factors that vary.
	levels func(results.Trial) string
	w      io.Writer
	bar    *progressbar.ProgressBar
	total  int
}

func newProgress(w io.Writer, s *spec.Spec, total int, verbose bool) *progress {
	p := &progress{w: w, total: total, levels: varyingLevels(s)}
	if f, ok := fileOf(w); ok && !verbose && term.IsTerminal(int(f.Fd())) {
		p.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(false), progressbar.OptionSetWidth(30), progressbar.OptionThrottle(200*time.Millisecond))
	}
	return p
}

func (p *progress) update(pr experiment.Progress) {
	t := pr.Trial
	if p.bar != nil {
		p.bar.Describe(fmt.Sprintf("%d failed, ETA %s", pr.Failed, pr.ETA.Round(time.Second)))
		p.bar.Set(pr.Done)
		return
	}
	outcome := "PLT -"
	if t.PLT != nil {
		outcome = fmt.Sprintf("PLT %.1f ms", *t.PLT)
	}
	if t.Status != results.StatusOK {
		outcome = "FAILED after " + fmt.Sprint(t.Attempts) + " attempts: " + t.Error
	}
	fmt.Fprintf(p.w, "trial %d/%d (%d failed, ETA %s)  %s  %s: %s\n", pr.Done, pr.Total, pr.Failed, pr.ETA.Round(time.Second),
		t.ID, p.levels(t), outcome)
}

// varyingLevels returns what names a trial of s in a progress line: its
// network, page and protocol, and its level of every other factor with
// more than one level, in words ("repeat visit").
func varyingLevels(s *spec.Spec) func(results.Trial) string {
	var varying []factor.Factor
	for _, f := range factor.Table() {
		if f.ID != factor.IDNetwork && f.ID != factor.IDPage && f.ID != factor.IDProtocol && len(s.LevelsOf(f.ID)) > 1 {
			varying = append(varying, f)
		}
	}
	return func(t results.Trial) string {
		levels := t.Levels.Factors()
		words := []string{t.Network, t.Page, string(t.Protocol)}
		for _, f := range varying {
			words = append(words, f.Words(levels.Of(f.ID)))
		}
		return strings.Join(words, " ")
	}
}

func (p *progress) finish() {
	if p.bar != nil {
		p.bar.Finish()
		fmt.Fprintln(p.w)
	}
}
