package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/quicbench/quicbench/internal/experiment"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/papers"
	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/reproduce"
)

// sequentialOptions are reproduce --sequential's: the pilot's loads a
// cell, and how long the rounds after it may load pages (0: no limit but
// the design's repetitions).
type sequentialOptions struct {
	pilot  int
	budget time.Duration
}

// sequentialReproduction runs r's design sequentially (reproduce.Design):
// the pilot, then rounds for the undecided claims, each cell at most its
// spec's repetitions, until no round can add anything or the time budget
// ends. A resumed reproduction makes the same rounds again from the same
// loads, so an interrupted round is continued, not begun anew; a pilot or
// round an earlier version of the design planned grows to the design's
// cells (experiment.RunConfig.Grow).
func sequentialReproduction(ctx context.Context, r reproduce.Reproduction, o sequentialOptions, binaries map[factor.Client]string, verbose bool, stdout, stderr io.Writer) int {
	start := time.Now()
	d, err := reproduce.NewDesign(r, o.pilot, r.Specs[0].Seed)
	if err != nil {
		fmt.Fprintln(stderr, "quicbench reproduce:", err)
		return exitUsage
	}
	st := d.Start()
	pilotTime, budgetTime := estimates(r, st)
	fmt.Fprintf(stdout, "Sequential: the design's %d loads are the budget (about %s here); the pilot gives %d (about %s: %s a cell each claim reads, a share claim a sample of its settings), leaving out %d cells no claim reads\n",
		d.Budget(), budgetTime.Round(time.Minute), st.Loads(), pilotTime.Round(time.Minute), perCellText(st), d.Unread())
	if err := reproduce.WriteSample(r.Dir, d.Sample(st)); err != nil {
		fmt.Fprintln(stderr, "quicbench reproduce:", err)
		return exitFailure
	}
	if code := runPilot(ctx, r, st, binaries, verbose, stdout, stderr); code != exitOK {
		return code
	}
	budgetCtx, cancel := budgetContext(ctx, o.budget)
	defer cancel()
	for round := 0; ; round++ {
		rows, err := r.RowsThrough(ctx, papers.Options{Seed: 1, Sample: d.Sample(st), Spend: true}, round)
		if err != nil {
			fmt.Fprintln(stderr, "quicbench reproduce:", err)
			return interruptedOr(ctx, exitFailure)
		}
		next, after, err := d.Next(rows, st)
		if err != nil {
			fmt.Fprintln(stderr, "quicbench reproduce:", err)
			return exitFailure
		}
		if next.Loads() == 0 || budgetCtx.Err() != nil {
			printSequentialEnd(stdout, d, st, round, rows, time.Since(start), budgetCtx.Err() != nil)
			return exitOK
		}
		fmt.Fprintf(stdout, "Sequential round %d: %d more loads for %s; expected in all about %d of the %d (the undecided claims' needs at the spread observed)\n",
			round+1, next.Loads(), strings.Join(next.Claims, ", "), d.Expected(rows, st), d.Budget())
		st = after
		if err := reproduce.WriteSample(r.Dir, d.Sample(st)); err != nil {
			fmt.Fprintln(stderr, "quicbench reproduce:", err)
			return exitFailure
		}
		exts, err := r.RoundExtensions(next, round+1)
		if code := runExtensions(budgetCtx, ctx, r, exts, err, "reproduce --sequential", binaries, verbose, stdout, stderr); code != exitOK {
			return code
		}
	}
}

// estimates are the plan's durations of the pilot st gives and of the
// specs' whole designs, with this machine's overheads.
func estimates(r reproduce.Reproduction, st reproduce.State) (pilot, whole time.Duration) {
	o := experiment.MachineOverheads(time.Now())
	for _, s := range r.Specs {
		p := plan.Build(s)
		whole += p.EstimateOn(s, o)
		if cells := st.Cells(s.Name); len(cells) > 0 {
			pilot += p.Only(cells).EstimateOn(s, o)
		}
	}
	return pilot, whole
}

// perCellText says the loads st gives a cell: "5" or "2 to 5".
func perCellText(st reproduce.State) string {
	lo, hi := st.PerCell()
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}

// budgetContext is ctx ended after budget (0: never).
func budgetContext(ctx context.Context, budget time.Duration) (context.Context, context.CancelFunc) {
	if budget <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, budget)
}

// runPilot runs the pilot: each spec's own run, of the cells st gives
// loads.
func runPilot(ctx context.Context, r reproduce.Reproduction, st reproduce.State, binaries map[factor.Client]string, verbose bool, stdout, stderr io.Writer) int {
	for _, s := range r.Specs {
		cells := st.Cells(s.Name)
		if len(cells) == 0 {
			continue
		}
		if code := runReproductionSpec(ctx, r, s, cells, binaries, verbose, stdout, stderr); code != exitOK {
			return code
		}
	}
	return exitOK
}

// runExtensions runs a round's decide runs, planned by plan (the
// command's name in its error).
func runExtensions(budgetCtx, ctx context.Context, r reproduce.Reproduction, exts []reproduce.Extension, planErr error, command string, binaries map[factor.Client]string, verbose bool, stdout, stderr io.Writer) int {
	if planErr != nil {
		fmt.Fprintf(stderr, "quicbench %s: %v\n", command, planErr)
		return exitFailure
	}
	for _, e := range exts {
		if code := runExtension(budgetCtx, ctx, r, e, binaries, verbose, stdout, stderr); code != exitOK {
			return code
		}
	}
	return exitOK
}

// printSequentialEnd says what the sequential reproduction loaded against
// its budget, and why it stopped.
func printSequentialEnd(w io.Writer, d *reproduce.Design, st reproduce.State, rounds int, rows []papers.Row, took time.Duration, outOfTime bool) {
	why := "every claim decided or at its budget"
	if outOfTime {
		why = "the time budget ended"
	}
	undecided := 0
	for _, r := range rows {
		if r.Verdict == papers.Inconclusive {
			undecided++
		}
	}
	fmt.Fprintf(w, "Sequential: %d of the design's %d loads given (%.0f %%), in the pilot and %d rounds; stopped with %s (%d claims inconclusive), in %s\n\n",
		st.Loads(), d.Budget(), 100*float64(st.Loads())/float64(d.Budget()), rounds, why, undecided, took.Round(time.Second))
}

// replaySequential replays the sequential design on the fixed runs in
// r.Dir and prints, per claim, both designs' verdicts and loads.
func replaySequential(ctx context.Context, r reproduce.Reproduction, pilot int, stdout, stderr io.Writer) int {
	d, err := reproduce.NewDesign(r, pilot, r.Specs[0].Seed)
	if err != nil {
		fmt.Fprintln(stderr, "quicbench reproduce:", err)
		return exitUsage
	}
	got, err := r.ReplaySequential(ctx, d, 1)
	if err != nil {
		fmt.Fprintln(stderr, "quicbench reproduce --replay-sequential:", err)
		return interruptedOr(ctx, exitUsage)
	}
	fmt.Fprintf(stdout, "The sequential design (pilot of %s a cell) replayed on the fixed runs in %s: %d of their %d loads (%.0f %%), in the pilot (%d loads) and %d rounds; expected after the pilot: %d\n\n",
		perCellText(d.Start()), r.Dir, got.SequentialLoads, got.FixedLoads, 100*float64(got.SequentialLoads)/float64(max(got.FixedLoads, 1)), got.PilotLoads, got.Rounds, got.Expected)
	tw := tabwriter.NewWriter(printable{stdout}, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "claim\tfixed\tloads\tsequential\tloads\tround\tagreement")
	for i, f := range got.Fixed {
		s := got.Sequential[i]
		fmt.Fprintf(tw, "%s\t%s %s\t%d\t%s %s\t%d\t%d\t%s\n", f.Claim.ID, f.Verdict, f.Ours(), f.Loads, s.Verdict, s.Ours(), s.Loads, s.Round, reproduce.Agree(f, s))
	}
	tw.Flush()
	return exitOK
}
