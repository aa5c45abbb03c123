package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/experiment"
	"github.com/quicbench/quicbench/internal/trust"
)

// runMerge merges shard run directories into one run.
func runMerge(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	const usage = "Usage: quicbench merge OUT DIR...\n\nMerges the run directories of the shards of one plan (quicbench run --shard I/N) into\nthe new run directory OUT, which quicbench report and export read as one run."
	if code, done := parseFlags(fs, args, usage, stdout, stderr); done {
		return code
	}
	if fs.NArg() < 2 {
		fmt.Fprintln(stderr, "quicbench merge: give the new run directory and the shards' directories: quicbench merge OUT DIR...")
		return exitUsage
	}
	if err := trust.CheckUserPaths(argPaths("merge", fs.Args())...); err != nil {
		fmt.Fprintln(stderr, "quicbench merge:", err)
		return exitUsage
	}
	res, err := experiment.Merge(ctx, fs.Arg(0), fs.Args()[1:])
	switch {
	case err != nil && ctx.Err() != nil:
		fmt.Fprintf(stderr, "quicbench merge: interrupted; %s is as it was\n", fs.Arg(0))
		return exitInterrupted
	case err != nil:
		fmt.Fprintln(stderr, "quicbench merge:", err)
		if isUserError(err) {
			return exitUsage
		}
		return exitFailure
	}
	fmt.Fprintf(stdout, "%d shards, %d trials merged into %s in %s\n", res.Shards, res.Trials, fs.Arg(0), res.Elapsed.Round(time.Millisecond))
	if res.Artifacts > 0 || res.ArtifactsSkipped > 0 {
		fmt.Fprintf(stdout, "%d artifact files carried (HARs, captures, qlogs, frames)", res.Artifacts)
		if res.ArtifactsSkipped > 0 {
			fmt.Fprintf(stdout, "; %d links or special files in the shards' artifacts left out", res.ArtifactsSkipped)
		}
		fmt.Fprintln(stdout)
	}
	if len(res.Missing) > 0 {
		fmt.Fprintf(stdout, "missing shards (their trials are not in the merged run): %s\n", strings.Join(res.Missing, " "))
	}
	return exitOK
}
