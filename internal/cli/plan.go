package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/experiment"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/spec"
)

// runPlan prints a spec's plan: its factors, size and estimated duration.
func runPlan(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	list := fs.Bool("list", false, "also list every trial in run order")
	pilot := fs.String("pilot", "", "a pilot run's `directory`: print, per compared setting, the repetitions that find --detect at α = 0.01 with --power, and the plan's size and duration at the most of them")
	detect := fs.Float64("detect", 5, "with --pilot: the difference to find, in `percent` of the median (5: a ratio of 1.05)")
	power := fs.Float64("power", 0.8, "with --pilot: the `probability` of finding it")
	measure := fs.Bool("measure-overheads", false, "first load a tiny page a few times with each of the spec's kinds of client (about a minute with Firefox), so that the estimate charges this machine's overheads a load (a run stores them too)")
	binaries := newClientBinaries(fs)
	shards := fs.Int("shards", 0, "also print the plan split into `N` shards (run --shard I/N): each shard's trials, testbeds and estimate")
	path, code, done := specAndFlags(fs, args, "Usage: quicbench plan SPEC [flags]\n\nPrints the plan of a spec file: its factors, the number of trials and an estimate of its duration.", stdout, stderr)
	if done {
		return code
	}
	s, err := spec.Load(path)
	if err == nil {
		err = experiment.CheckArchives(s) // what run would refuse, plan refuses
	}
	if err != nil {
		fmt.Fprintln(stderr, "quicbench plan:", err)
		return exitUsage
	}
	var rows []analysis.PowerRow
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
	if *measure {
		if err := experiment.MeasureOverheads(ctx, s, binaries.values(), newLogger(stderr, false)); err != nil {
			return failedToStart(ctx, "plan", err, stderr)
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
		printTrials(stdout, p)
	}
	return exitOK
}

// printTrials lists the plan's trials in run order with their level of
// every setup and cell factor.
func printTrials(w io.Writer, p plan.Plan) {
	var fs []factor.Factor
	header := []string{"seq", "trial"}
	for _, f := range factor.Table() {
		if f.Scope != factor.ScopeRun {
			fs, header = append(fs, f), append(header, f.Column)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, t := range p.Trials {
		row := []string{strconv.Itoa(t.Seq), t.ID}
		for _, f := range fs {
			row = append(row, t.Cell.Levels.Of(f.ID))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
}

// printPlan prints the plan's size, factor by factor, and its estimate.
func printPlan(w io.Writer, s *spec.Spec, p plan.Plan) {
	var counts []string
	for _, f := range factor.Table() {
		if f.Scope != factor.ScopeRun {
			counts = append(counts, fmt.Sprintf("%d %s", len(s.LevelsOf(f.ID)), f.Plural))
		}
	}
	fmt.Fprintf(w, "%s: %s = %d cells\n", s.Name, strings.Join(counts, " × "), p.Cells)
	loads := fmt.Sprintf("%d cells × %d repetitions = %d trials", p.Cells, s.Repetitions, len(p.Trials))
	if len(p.Trials) != p.Cells*s.Repetitions {
		loads = fmt.Sprintf("%d cells, %d trials of their %d repetitions", p.Cells, len(p.Trials), s.Repetitions)
	}
	fmt.Fprintf(w, "%s on %d testbeds, clients %s, seed %d\n", loads, p.Setups, joinLevels(s.Clients()), s.Seed)
	o := experiment.MachineOverheads(time.Now())
	fmt.Fprintf(w, "estimated duration: %s (a rough model of each load plus the client's overhead, testbed set-ups and netchecks)\n", p.EstimateOn(s, o).Round(time.Second))
	if text := o.Describe(s, p); text != "" {
		fmt.Fprintf(w, "  %s\n", text)
	}
	if n, longest := p.OverTimeout(s); n > 0 {
		fmt.Fprintf(w, "warning: %d trials' loads are expected to outlast the timeout of %s (up to about %s each by the model): they will fail unless timeout is raised\n", n, s.Timeout, longest.Round(time.Second))
	}
	if u := s.Until; u != nil {
		fmt.Fprintf(w, "at most: each setting stops once its answer is known, after %d to %d repetitions (ratio's 95%% CI within ±%g%%, or a sequential verdict)\n",
			u.Min, s.Repetitions, 100*u.CIRatio)
	}
}

// readPilot reads a pilot run and plans the repetitions each of its
// compared settings needs to find ratio with probability power.
func readPilot(dir string, ratio, power float64) ([]analysis.PowerRow, error) {
	store, err := results.OpenReadOnly(filepath.Join(dir, results.FileName))
	if err != nil {
		return nil, err
	}
	defer store.Close()
	var trials []results.Trial
	if err := store.EachTrial(func(t results.Trial) error { trials = append(trials, t); return nil }); err != nil {
		return nil, err
	}
	return analysis.PowerPlan(trials, analysis.Options{}, ratio, power)
}

// printPowerPlan prints the repetitions a pilot run says each compared
// setting needs, and s's plan at the most of them.
func printPowerPlan(stdout io.Writer, s *spec.Spec, rows []analysis.PowerRow, pilotDir string, detectPct, power float64) {
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
		fmt.Fprintf(stdout, "At %d repetitions (the most above): %d trials, estimated %s.\n", sized.Repetitions, len(p.Trials), p.EstimateOn(&sized, experiment.MachineOverheads(time.Now())).Round(time.Second))
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
