package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/quicbench/quicbench/internal/experiment"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/papers"
	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/reproduce"
)

// decideReproduction adds loads to the cells of r's inconclusive claims,
// round after round (reproduce.Extensions), until every claim that more
// loads can decide is decided or budget is spent, then prints each
// claim's verdict before and after.
func decideReproduction(ctx context.Context, r reproduce.Reproduction, binaries map[factor.Client]string, budget time.Duration, verbose bool, stdout, stderr io.Writer) int {
	start := time.Now()
	rows, err := r.Rows(ctx, 1)
	round, rerr := r.Rounds()
	if err = errors.Join(err, rerr); err != nil {
		fmt.Fprintln(stderr, "quicbench reproduce --decide:", err)
		return interruptedOr(ctx, exitFailure)
	}
	before := rows
	budgetCtx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	for {
		undecided := reproduce.Undecided(rows)
		if len(undecided) == 0 || budgetCtx.Err() != nil {
			break
		}
		round++
		printRound(stdout, round, undecided)
		exts, err := r.Extensions(rows, round)
		if code := runExtensions(budgetCtx, ctx, r, exts, err, "reproduce --decide", binaries, verbose, stdout, stderr); code != exitOK {
			return code
		}
		if rows, err = r.Rows(ctx, 1); err != nil {
			fmt.Fprintln(stderr, "quicbench reproduce --decide:", err)
			return interruptedOr(ctx, exitFailure)
		}
	}
	printDecided(stdout, before, rows, time.Since(start), budget)
	return exitOK
}

// printRound says what a round adds loads for, and which claims wait
// for a later round (reproduce.ThisRound).
func printRound(w io.Writer, round int, undecided []papers.Row) {
	now, later := reproduce.ThisRound(undecided)
	describe := func(rows []papers.Row) string {
		var parts []string
		for _, r := range rows {
			parts = append(parts, fmt.Sprintf("%s (%s)", r.Claim.ID, r.ToDecide()))
		}
		return strings.Join(parts, "; ")
	}
	fmt.Fprintf(w, "Deciding, round %d: %s\n", round, describe(now))
	if len(later) > 0 {
		fmt.Fprintf(w, "  waiting while a round can decide others (more than %d loads a cell): %s\n", reproduce.FarPerCell, describe(later))
	}
}

// runExtension runs one decide run, its progress on stderr as a run's (a
// line a load); the budget's end (budgetCtx) stops it as an end, not a
// failure, while ctx's end is an interruption.
func runExtension(budgetCtx, ctx context.Context, r reproduce.Reproduction, e reproduce.Extension, binaries map[factor.Client]string, verbose bool, stdout, stderr io.Writer) int {
	resume, err := holdsRun(e.Dir)
	if err != nil {
		return runOutcome(ctx, nil, err, e.Spec.Name, e.Dir, r.Command, stderr)
	}
	progress := newProgress(stderr, e.Spec, len(plan.Build(e.Spec).Only(e.Cells).Trials), verbose)
	res, err := experiment.Run(budgetCtx, experiment.RunConfig{
		Spec: e.Spec, Dir: e.Dir, Cells: e.Cells, Resume: resume, Grow: true, ClientBinaries: binaries,
		Facts: experiment.HostFacts(e.Spec.Clients(), binaries, Version), Log: newLogger(stderr, verbose),
		OnTrial: progress.update,
	})
	progress.finish()
	if err != nil && ctx.Err() == nil && budgetCtx.Err() != nil {
		fmt.Fprintf(stdout, "%s: the budget ended the round; its completed loads count\n", e.Spec.Name)
		return exitOK
	}
	if code := runOutcome(ctx, res, err, e.Spec.Name, e.Dir, r.Command, stderr); code != exitOK {
		return code
	}
	fmt.Fprintf(stdout, "%s: %d loads in %d cells (%d to %d a cell) for %s: %d recorded (%d failed) in %s\n", e.Spec.Name, res.Total, len(e.Cells),
		slices.Min(slices.Collect(maps.Values(e.Cells))), e.Spec.Repetitions, strings.Join(e.Claims, ", "), res.Done, res.Failed, res.Elapsed.Round(time.Second))
	return exitOK
}

// printDecided sets each claim's verdict after deciding beside the one
// before.
func printDecided(w io.Writer, before, after []papers.Row, took, budget time.Duration) {
	fmt.Fprintf(w, "\nDecided in %s of the %s budget:\n", took.Round(time.Second), budget)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "claim\tbefore\tloads\tafter\tloads\tstill to decide")
	for i, a := range after {
		b := before[i]
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%s\n", a.Claim.ID, b.Verdict, b.Loads, a.Verdict, a.Loads, a.ToDecide())
	}
	tw.Flush()
	fmt.Fprintln(w)
}
