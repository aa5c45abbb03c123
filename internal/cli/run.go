package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/experiment"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/report"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/spec"
)

// specAndFlags parses "SPEC [flags]" or "[flags] SPEC" and returns SPEC.
func specAndFlags(fs *flag.FlagSet, args []string, usage string, stdout, stderr io.Writer) (string, int, bool) {
	return argAndFlags(fs, args, usage, "a spec file, such as examples/seed001-quick.yaml", stdout, stderr)
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
	return arg, 0, false
}

// runPlan prints a spec's plan: its factors, size and estimated duration.
func runPlan(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	list := fs.Bool("list", false, "also list every trial in run order")
	pilot := fs.String("pilot", "", "a pilot run's `directory`: print, per compared setting, the repetitions that find --detect at α = 0.01 with --power, and the plan's size and duration at the most of them")
	detect := fs.Float64("detect", 5, "with --pilot: the difference to find, in `percent` of the median (5: a ratio of 1.05)")
	power := fs.Float64("power", 0.8, "with --pilot: the `probability` of finding it")
	shards := fs.Int("shards", 0, "also print the plan split into `N` shards (run --shard I/N): each shard's trials, testbeds and estimate")
	path, code, done := specAndFlags(fs, args, "Usage: quicbench plan SPEC [flags]\n\nPrints the plan of a spec file: its factors, the number of trials and an estimate of its duration.", stdout, stderr)
	if done {
		return code
	}
	s, err := spec.Load(path)
	if err != nil {
		fmt.Fprintln(stderr, "quicbench plan:", err)
		return exitUsage
	}
	var rows []report.PowerRow
	if *pilot != "" && (!(*detect > 0) || !(*power > 0 && *power < 1)) {
		fmt.Fprintf(stderr, "quicbench plan: --detect %g and --power %g: give a difference above 0 percent (such as 5) and a power between 0 and 1 (such as 0.8)\n", *detect, *power)
		return exitUsage
	}
	if *pilot != "" {
		if rows, err = readPilot(*pilot, 1+*detect/100, *power); err != nil {
			fmt.Fprintln(stderr, "quicbench plan: --pilot:", err)
			return exitUsage
		}
	}
	p := plan.Build(s)
	printPlan(stdout, s, p)
	if *pilot != "" {
		printPowerPlan(stdout, s, rows, *pilot, *detect, *power)
	}
	if *shards != 0 {
		if *shards < 1 || *shards > plan.MaxShards {
			fmt.Fprintf(stderr, "quicbench plan: --shards %d is outside 1 to %d\n", *shards, plan.MaxShards)
			return exitUsage
		}
		printShards(stdout, s, p, *shards)
	}
	if *list {
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "seq\ttrial\tnetwork\tpage\torigins\tstack\tserver\tquic\tprotocol\tvisit\tcache\tvisual")
		for _, t := range p.Trials {
			c := t.Cell
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.Seq, t.ID, c.Network.Name, c.Page, c.Origins, c.Stack, c.Server, c.QUIC, c.Protocol, c.Visit, c.Cache, c.Visual)
		}
		tw.Flush()
	}
	return exitOK
}

func printPlan(w io.Writer, s *spec.Spec, p plan.Plan) {
	fmt.Fprintf(w, "%s: %d networks × %d pages × %d protocols × %d stacks × %d servers × %d QUIC stacks × %d visits × %d cache × %d visual × %d origins = %d cells\n",
		s.Name, len(s.Networks), len(s.Pages), len(s.Protocols), len(s.Stacks), len(s.Servers), len(s.QUIC), len(s.Visits), len(s.Cache), len(s.Visual), len(s.Origins), p.Cells)
	fmt.Fprintf(w, "%d cells × %d repetitions = %d trials on %d testbeds, client %s, seed %d\n", p.Cells, s.Repetitions, len(p.Trials), p.Setups, s.Client, s.Seed)
	fmt.Fprintf(w, "estimated duration: %s (a rough model of each load plus the client's overhead, testbed set-ups and netchecks)\n", p.Estimate(s).Round(time.Second))
	if u := s.Until; u != nil {
		fmt.Fprintf(w, "at most: each setting stops once its answer is known, after %d to %d repetitions (ratio's 95%% CI within ±%g%%, or a sequential verdict)\n",
			u.Min, s.Repetitions, 100*u.CIRatio)
	}
}

// runRun runs a spec's plan into a run directory.
func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	out := fs.String("out", "", "run `directory` (default runs/<spec name>-<time>)")
	resume := fs.Bool("resume", false, "continue the run in --out: skip the recorded trials; refused if the spec changed")
	retryFailed := fs.Bool("retry-failed", false, "with --resume: run the failed trials again (their earlier attempts are kept)")
	chromium := fs.String("chromium", client.DefaultChromiumPath, "Chromium `binary`")
	verbose := fs.Bool("verbose", false, "log what the run does to stderr")
	shardText := fs.String("shard", "", "run only shard `I/N` of the plan: whole testbed groups balanced by the plan's estimate (quicbench plan --shards N); merge the shards' directories with quicbench merge")
	path, code, done := specAndFlags(fs, args, "Usage: quicbench run SPEC [flags]\n\nRuns every trial of a spec file's plan and records each in DIR/results.db the moment it ends.", stdout, stderr)
	if done {
		return code
	}
	s, err := spec.Load(path)
	if err != nil {
		fmt.Fprintln(stderr, "quicbench run:", err)
		return exitUsage
	}
	var shard plan.ShardID
	if *shardText != "" {
		if shard, err = plan.ParseShard(*shardText); err != nil {
			fmt.Fprintln(stderr, "quicbench run: --shard:", err)
			return exitUsage
		}
	}
	if *resume && *out == "" {
		fmt.Fprintln(stderr, "quicbench run: --resume needs --out DIR, the run directory to continue")
		return exitUsage
	}
	if *retryFailed && !*resume {
		fmt.Fprintln(stderr, "quicbench run: --retry-failed continues a run: add --resume --out DIR")
		return exitUsage
	}
	dir := *out
	if dir == "" {
		dir = "runs/" + s.DirName() + "-" + time.Now().Format("20060102-150405")
		if shard.N > 0 {
			dir += fmt.Sprintf("-shard%dof%d", shard.I, shard.N)
		}
	}
	if err := checkPrivileges(); err != nil {
		fmt.Fprintln(stderr, "quicbench run:", err)
		return exitUsage
	}
	if err := checkPrerequisites(s, *chromium); err != nil {
		fmt.Fprintln(stderr, "quicbench run:", err)
		return exitUsage
	}
	p := plan.Build(s).Shard(s, shard)
	printPlan(stderr, s, p)
	progress := newProgress(stderr, s, len(p.Trials))
	res, err := experiment.Run(ctx, experiment.RunConfig{
		Spec: s, Dir: dir, Resume: *resume, RetryFailed: *retryFailed, ChromiumPath: *chromium, Facts: experiment.HostFacts(*chromium, Version),
		Log: newLogger(stderr, *verbose), OnTrial: progress.update, Shard: shard,
	})
	progress.finish()
	if res == nil {
		fmt.Fprintln(stderr, "quicbench run:", err)
		if isUserError(err) {
			return exitUsage
		}
		return exitFailure
	}
	fmt.Fprintf(stdout, "%d of %d trials recorded (%d failed), %d in this run, in %s; results in %s/results.db\n",
		res.Done, res.Total, res.Failed, res.Ran, res.Elapsed.Round(time.Second), dir)
	if res.Skipped > 0 {
		fmt.Fprintf(stdout, "%d trials left out: their settings' answers were known (repetitions until; quicbench report says when and why)\n", res.Skipped)
	}
	switch {
	case err != nil && ctx.Err() != nil:
		fmt.Fprintf(stderr, "quicbench run: interrupted; every completed trial is kept: continue with quicbench run %s --out %s --resume\n", path, dir)
		return exitInterrupted
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
func isUserError(err error) bool {
	var in *experiment.InputError
	return errors.As(err, &in)
}

// progress shows a bar on a terminal and a line per trial otherwise.
type progress struct {
	// levels names the trial's levels of the factors that vary.
	levels func(results.Trial) string
	w      io.Writer
	bar    *progressbar.ProgressBar
	total  int
}

func newProgress(w io.Writer, s *spec.Spec, total int) *progress {
	p := &progress{w: w, total: total, levels: varyingLevels(s)}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
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
// more than one level.
func varyingLevels(s *spec.Spec) func(results.Trial) string {
	var parts []func(results.Trial) string
	add := func(n int, f func(results.Trial) string) {
		if n > 1 {
			parts = append(parts, f)
		}
	}
	add(len(s.Origins), func(t results.Trial) string { return fmt.Sprintf("%d origins", t.Origins) })
	add(len(s.Stacks), func(t results.Trial) string { return string(t.Stack) })
	add(len(s.Servers), func(t results.Trial) string { return string(t.Server) + " server" })
	add(len(s.QUIC), func(t results.Trial) string { return string(t.QUICServer) + "+" + string(t.QUICCC) })
	add(len(s.Visits), func(t results.Trial) string { return string(t.Visit) + " visit" })
	add(len(s.Cache), func(t results.Trial) string { return "cache " + string(factor.CacheOf(t.Cache)) })
	add(len(s.Visual), func(t results.Trial) string { return "visual " + string(factor.VisualOf(t.Visual)) })
	return func(t results.Trial) string {
		words := []string{t.Network, t.Page, string(t.Protocol)}
		for _, f := range parts {
			words = append(words, f(t))
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

// runExport writes a run's trials and resources as files.
func runExport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	format := fs.String("format", "csv", "`format`: csv, jsonl or parquet")
	to := fs.String("to", "", "output `directory` (default DIR/export)")
	dir, code, done := dirAndFlags(fs, args, "Usage: quicbench export DIR [flags]\n\nWrites the run in DIR as trials.<format> (one row per trial: factors, metrics, status) and\nresources.<format> (one row per Resource Timing entry), ready for pandas or DuckDB.", stdout, stderr)
	if done {
		return code
	}
	store, err := results.OpenReadOnly(filepath.Join(dir, results.FileName))
	if err != nil {
		fmt.Fprintln(stderr, "quicbench export:", err)
		return exitUsage
	}
	defer store.Close()
	outDir := *to
	if outDir == "" {
		outDir = filepath.Join(dir, "export")
	}
	files, err := store.Export(outDir, *format)
	if err != nil {
		fmt.Fprintln(stderr, "quicbench export:", err)
		var input *results.InputError
		if errors.As(err, &input) {
			return exitUsage
		}
		return exitFailure
	}
	for _, f := range files {
		fmt.Fprintln(stdout, f)
	}
	return exitOK
}

// readPilot reads a pilot run and plans the repetitions each of its
// compared settings needs to find ratio with probability power.
func readPilot(dir string, ratio, power float64) ([]report.PowerRow, error) {
	store, err := results.OpenReadOnly(filepath.Join(dir, results.FileName))
	if err != nil {
		return nil, err
	}
	defer store.Close()
	var trials []results.Trial
	if err := store.EachTrial(func(t results.Trial) error { trials = append(trials, t); return nil }); err != nil {
		return nil, err
	}
	return report.PowerPlan(trials, report.Options{}, ratio, power)
}

// printPowerPlan prints the repetitions a pilot run says each compared
// setting needs, and s's plan at the most of them.
func printPowerPlan(stdout io.Writer, s *spec.Spec, rows []report.PowerRow, pilotDir string, detectPct, power float64) {
	fmt.Fprintf(stdout, "\nFrom the pilot %s: repetitions per protocol to find a %.1f %% difference of median PLT at α = 0.01 with power %.2f\n", pilotDir, detectPct, power)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "setting\tpilot loads\tσ of log PLT\trepetitions")
	most := 0
	for _, r := range rows {
		need := "too few pilot loads"
		if r.Needed > 0 {
			need = strconv.Itoa(r.Needed)
			most = max(most, r.Needed)
		}
		fmt.Fprintf(tw, "%s\t%d + %d\t%.3f\t%s\n", r.Setting, r.Baseline, r.Compare, r.SDLog, need)
	}
	tw.Flush()
	fmt.Fprintln(stdout, "σ is the pooled spread of the pilot's two protocols; from a few loads it is itself uncertain, so pilot 10 or more per protocol for a firm figure.")
	if most > 0 {
		sized := *s
		sized.Repetitions = min(most, spec.MaxRepetitions)
		p := plan.Build(&sized)
		fmt.Fprintf(stdout, "At %d repetitions (the most above): %d trials, estimated %s.\n", sized.Repetitions, len(p.Trials), p.Estimate(&sized).Round(time.Second))
	}
}

// printShards prints the plan's n shards and how even they are.
func printShards(w io.Writer, s *spec.Spec, p plan.Plan, n int) {
	est := p.ShardEstimates(s, n)
	var sum, most time.Duration
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "shard\ttrials\ttestbeds\testimate")
	for i, e := range est {
		sh := p.Shard(s, plan.ShardID{I: i + 1, N: n})
		fmt.Fprintf(tw, "%d/%d\t%d\t%d\t%s\n", i+1, n, len(sh.Trials), sh.Setups, e.Round(time.Second))
		sum, most = sum+e, max(most, e)
	}
	tw.Flush()
	mean := sum / time.Duration(n)
	fmt.Fprintf(w, "largest shard %s, mean %s (%+.1f %%)\n", most.Round(time.Second), mean.Round(time.Second), 100*(float64(most)/float64(mean)-1))
}
