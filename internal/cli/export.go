package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/trust"
)

// runExport writes a run's trials and resources as files.
func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	format := fs.String("format", "csv", "`format`: csv, jsonl or parquet")
	to := fs.String("to", "", "output `directory` (default DIR/export)")
	dir, code, done := dirAndFlags(fs, args, "Usage: quicbench export DIR [flags]\n\nWrites the run in DIR as trials.<format> (one row per trial: factors, metrics, status),\nresources.<format> (one row per Resource Timing entry), connections.<format> (one row per\nconnection a server saw), samples.<format> (each load's CPU and link bytes every 100 ms) and\nlosses.<format> (every packet the link dropped in a load, and every wait for lost data),\nready for pandas or DuckDB.", stdout, stderr)
	if done {
		return code
	}
	outDir := *to
	if outDir == "" {
		outDir = filepath.Join(dir, "export")
	}
	store, code := openRun(ctx, "export", dir, outDir, "--to", stderr)
	if store == nil {
		return code
	}
	defer store.Close()
	files, err := store.Export(ctx, outDir, *format)
	if err != nil && ctx.Err() != nil {
		fmt.Fprintln(stderr, "quicbench export: interrupted; the files not finished were not written")
		return exitInterrupted
	}
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

// checkOwnOutput refuses, when quicbench runs as root, an output directory
// that another user owns or could change (trust.CheckUserPaths): the files
// root wrote there would lock that user out of their own run, or could be
// swapped under root. flag names the option that chooses another
// directory.
func checkOwnOutput(out, flag string) error {
	return trust.CheckUserPaths(trust.UserPath{Kind: trust.Output, Value: out, Name: flag})
}

// openRun opens the run in dir for command to read and write its output
// into out (chosen by flag): it refuses, with one line and the status it
// returns, an output root may not write, a database it cannot read, and
// one whose columns hold values of another type (nil store then).
func openRun(ctx context.Context, command, dir, out, flag string, stderr io.Writer) (*results.Store, int) {
	if err := checkOwnOutput(out, flag); err != nil {
		fmt.Fprintf(stderr, "quicbench %s: %v\n", command, err)
		return nil, exitUsage
	}
	store, err := results.OpenReadOnly(filepath.Join(dir, results.FileName))
	if err != nil {
		fmt.Fprintf(stderr, "quicbench %s: %v\n", command, err)
		return nil, exitUsage
	}
	if err := store.CheckTypes(ctx); err != nil {
		store.Close()
		fmt.Fprintf(stderr, "quicbench %s: %v\n", command, err)
		return nil, interruptedOr(ctx, exitUsage)
	}
	return store, 0
}
