package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/quicbench/quicbench/internal/results"
)

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
