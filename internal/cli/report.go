package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/report"
	"github.com/quicbench/quicbench/internal/reproduce"
	"github.com/quicbench/quicbench/internal/spec"
)

// runReport analyses a run: a summary on stdout and DIR/report/.
func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	baseline := fs.String("baseline", "", "the `protocol` compared against: "+factor.Protocols().Names()+" (default h2 if the run has it, else h1)")
	compare := fs.String("compare", "", "the `protocol` compared: "+factor.Protocols().Names()+" (default h3)")
	metric := fs.String("metric", "plt", "the `metric`: "+strings.Join(analysis.MetricNames(), ", ")+" (si, fvc, lvc and vc85/95/99 are measured in visual trials only; times in ms, Speed Index too)")
	out := fs.String("out", "", "report `directory` (default DIR/report)")
	seed := fs.Uint64("seed", 1, "`seed` of the bootstrap resampling")
	until := fs.Float64("until", 0, "for a run without a stopping rule: replay repetitions: {until: {ci_ratio: `fraction`}} on its loads, to see the trials an adaptive run would have taken")
	untilMin := fs.Int("until-min", 10, "with --until: the repetitions before the first look")
	trial := fs.String("trial", "", "draw the waterfall of this trial `ID` (default: the load nearest the first comparison's median)")
	dir, code, done := dirAndFlags(fs, args, "Usage: quicbench report DIR [flags]\n\nPrints a run's comparison (statistics, tests, verdicts) and writes DIR/report/index.html, the figures\nas SVG and PNG, and the tables as CSV.", stdout, stderr)
	if done {
		return code
	}
	opts := analysis.Options{Baseline: factor.Protocol(*baseline), Compare: factor.Protocol(*compare), Metric: *metric, Seed: *seed, WaterfallTrial: *trial}
	if err := setReplayUntil(&opts, *until, *untilMin); err != nil {
		fmt.Fprintln(stderr, "quicbench report:", err)
		return exitUsage
	}
	outDir := *out
	if outDir == "" {
		outDir = filepath.Join(dir, "report")
	}
	store, code := openRun(ctx, "report", dir, outDir, "--out", stderr)
	if store == nil {
		return code
	}
	defer store.Close()
	r, err := reproduce.Report(ctx, store, opts)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "quicbench report: interrupted; no report was written")
			return exitInterrupted
		}
		fmt.Fprintln(stderr, "quicbench report:", err)
		return exitUsage
	}
	report.WriteText(printable{stdout}, r.Page, r.Analysis)
	written, err := report.WriteFiles(outDir, r.Page, r.Analysis, r.Figures)
	if err != nil {
		fmt.Fprintln(stderr, "quicbench report:", err)
		return exitFailure
	}
	printWritten(stdout, r, written, outDir)
	return exitOK
}

// setReplayUntil has opts replay a stopping rule on the run's loads: stop
// once the ratio's 95 % CI is within ± ciRatio, looking first after min
// repetitions; a ciRatio of 0 replays nothing.
func setReplayUntil(opts *analysis.Options, ciRatio float64, min int) error {
	if ciRatio == 0 {
		return opts.Validate()
	}
	u := spec.Until{Min: min, CIRatio: ciRatio}
	if err := u.Check(); err != nil {
		return fmt.Errorf("--until: %w", err)
	}
	opts.ReplayUntil = &analysis.Replay{Min: u.Min, CIRatio: u.CIRatio}
	return opts.Validate()
}

// printWritten says how many figures and tables of report r were written
// (the files written) into outDir, then the short answer.
func printWritten(stdout io.Writer, r *report.Report, written []string, outDir string) {
	tables := 0
	for _, path := range written {
		if strings.HasSuffix(path, ".csv") {
			tables++
		}
	}
	fmt.Fprintf(stdout, "\n%d figures (SVG and PNG) and %d tables (CSV) in %s\n\n", len(r.Figures), tables, outDir)
	index := "The report: " + filepath.Join(outDir, "index.html")
	short := report.ShortAnswer(r.Analysis, nil, index)
	if len(short) == 0 {
		short = []string{index}
	}
	fmt.Fprintln(printable{stdout}, strings.Join(short, "\n"))
}
