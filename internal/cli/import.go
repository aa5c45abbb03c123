package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/quicbench/quicbench/internal/site"
)

// importers read each recording format into a site archive.
var importers = map[string]func(path, document string) (*site.Archive, site.ImportReport, error){
	"mahimahi": site.ImportMahimahi,
	"har":      site.ImportHAR,
	"wpr":      site.ImportWPR,
}

// runImport turns a recording into a site archive and prints what it holds.
func runImport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	to := fs.String("to", "", "the site archive `directory` to write (new, empty, or an archive to replace)")
	document := fs.String("document", "", "the page's `URL` (default: the HAR's first page, or the recording's one HTML page)")
	const usage = "Usage: quicbench import mahimahi|har|wpr PATH --to DIR [--document URL]\n\n" +
		"Reads a recording (a Mahimahi mm-webrecord directory, a HAR 1.2 file with bodies, or a\n" +
		"WebPageReplay .wprgo archive) into a site archive that specs and --page replay as\n" +
		"archive:DIR, and prints its origins, responses and bytes by type and what it left out."
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		code, _ := parseFlags(fs, []string{"-h"}, usage, stdout, stderr)
		if len(args) == 0 {
			fmt.Fprintln(stderr, "quicbench import: give the format (mahimahi, har or wpr), the recording and --to DIR")
			return exitUsage
		}
		return code
	}
	format := args[0]
	read, ok := importers[format]
	if !ok {
		fmt.Fprintf(stderr, "quicbench import: format %.40q is not supported: use mahimahi, har or wpr\n", format)
		return exitUsage
	}
	path, code, done := argAndFlags(fs, args[1:], usage, "the recording to import", stdout, stderr)
	if done {
		return code
	}
	if *to == "" {
		fmt.Fprintln(stderr, "quicbench import: give --to DIR, the site archive directory to write")
		return exitUsage
	}
	if err := checkArchiveTarget(*to); err != nil {
		fmt.Fprintln(stderr, "quicbench import:", err)
		return exitUsage
	}
	a, rep, err := read(path, *document)
	if err != nil {
		fmt.Fprintln(stderr, "quicbench import:", err)
		return exitUsage
	}
	if err := site.WriteArchive(*to, a); err != nil {
		fmt.Fprintln(stderr, "quicbench import:", err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "%s: %s\n%s", *to, a.Document, a.Summary())
	if left := rep.String(); left != "" {
		fmt.Fprint(stdout, "of the recording's exchanges:\n", left)
	}
	fmt.Fprintf(stdout, "replay it with --page archive:%s, or archive:%s in a spec's pages\n", *to, *to)
	return exitOK
}

// checkArchiveTarget accepts a new or empty directory, or an archive.
func checkArchiveTarget(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) || (err == nil && len(entries) == 0) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--to %s: %w", dir, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, site.ArchiveFile)); err != nil {
		return fmt.Errorf("--to %s holds other files than a site archive: choose a new or empty directory", dir)
	}
	return nil
}
