package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/site/imports"
	"github.com/quicbench/quicbench/internal/spec"
)

// importers read each recording format into a site archive.
var importers = map[string]func(ctx context.Context, path string, opts imports.Options) (*site.Archive, imports.Report, error){
	"mahimahi": imports.Mahimahi,
	"har":      imports.HAR,
	"wpr":      imports.WPR,
}

// runImport turns a recording into a site archive and prints what it holds.
func runImport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	// What it prints holds the recording's URLs and hosts: a stranger's text.
	stdout, stderr = printable{stdout}, printable{stderr}
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	to := fs.String("to", "", "the site archive `directory` to write (new, empty, or an archive to replace)")
	document := fs.String("document", "", "the page's `URL` (default: the HAR's first page, else the HTML page at path / of the most requested host that has one, else the import lists the likeliest pages)")
	upgrade := fs.Bool("upgrade-http", false, "keep exchanges over http:// (port 80) as https:// and rewrite their hosts' http:// URLs in text bodies and redirects, for a page recorded before its site moved to HTTPS (bodies then differ from the recording's by a byte per URL)")
	viewport := fs.String("viewport", "", "the `viewport` the page replays at, WIDTHxHEIGHT[@SCALE][,mobile] in CSS pixels, or desktop for the default 1366x768@1 (default: the one the recording's User-Agent implies: a phone's for a phone's browser, else desktop)")
	const usage = "Usage: quicbench import mahimahi|har|wpr PATH --to DIR [--document URL] [--upgrade-http] [--viewport V]\n\n" +
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
	opts, err := importOptions(*to, *document, *upgrade, *viewport)
	if err != nil {
		fmt.Fprintln(stderr, "quicbench import:", err)
		return exitUsage
	}
	a, rep, err := read(ctx, path, opts)
	if err == nil {
		err = site.WriteArchive(ctx, *to, a)
	}
	switch {
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "quicbench import: interrupted; %s is as it was\n", *to)
		return exitInterrupted
	case err != nil && a == nil:
		fmt.Fprintln(stderr, "quicbench import:", err)
		return exitUsage
	case err != nil:
		fmt.Fprintln(stderr, "quicbench import:", err)
		return exitFailure
	}
	printImported(stdout, *to, a, rep, opts.SetViewport)
	return exitOK
}

// importOptions checks --to (the archive to write) and turns the other
// flags into the importers' options.
func importOptions(to, document string, upgrade bool, viewport string) (imports.Options, error) {
	opts := imports.Options{Document: document, UpgradeHTTP: upgrade}
	if to == "" {
		return opts, errors.New("give --to DIR, the site archive directory to write")
	}
	if err := checkArchiveTarget(to); err != nil {
		return opts, err
	}
	if viewport != "" {
		var err error
		if opts.Viewport, err = spec.ParseViewport(viewport); err != nil {
			return opts, fmt.Errorf("--viewport: %w", err)
		}
		opts.SetViewport = true
	}
	return opts, nil
}

// printImported prints what the archive a written to dir holds, what the
// importer left out (rep) and how to replay it; setViewport says the
// viewport was --viewport's.
func printImported(w io.Writer, dir string, a *site.Archive, rep imports.Report, setViewport bool) {
	fmt.Fprintf(w, "%s: %s\n%s", dir, a.Document, a.Summary())
	if !a.RecordedAt.IsZero() {
		fmt.Fprintf(w, "recorded %s: deterministic replays start the page's clock there\n", a.RecordedAt.UTC().Format(time.RFC3339))
	}
	printViewport(w, a, setViewport)
	if left := rep.String(); left != "" {
		fmt.Fprint(w, "of the recording's exchanges:\n", left)
	}
	fmt.Fprintf(w, "replay it with --page archive:%s, or archive:%s in a spec's pages\n", dir, dir)
}

// printViewport says at which viewport archive a replays, and why.
func printViewport(w io.Writer, a *site.Archive, set bool) {
	vp := a.Viewport.OrDefault()
	switch _, device := factor.ViewportOfUserAgent(a.UserAgent); {
	case set:
		fmt.Fprintf(w, "replays at the viewport %v (--viewport)\n", vp)
	case a.ViewportSource != "" && a.ViewportSource != "the default":
		fmt.Fprintf(w, "replays at the viewport %v, decided by %s, so that the page asks for the images recorded (--viewport desktop replays at %v)\n",
			vp, a.ViewportSource, factor.DefaultViewport())
	case device != "":
		fmt.Fprintf(w, "recorded in a mobile browser (%s): replays at its viewport %v, so that the page asks for the images recorded (--viewport desktop replays at %v)\n",
			device, vp, factor.DefaultViewport())
	default:
		fmt.Fprintf(w, "replays at the viewport %v (--viewport sets another)\n", vp)
	}
}

// checkArchiveTarget accepts a new or empty directory, or an archive (its
// manifest and bodies, nothing else), before anything is read: not a link,
// not another kind of file, and, as root, none another user owns or could
// change (checkOwnOutput, as for --out).
func checkArchiveTarget(dir string) error {
	if err := checkOwnOutput(dir, "--to"); err != nil {
		return fmt.Errorf("--to %s: %w", dir, err)
	}
	info, err := os.Lstat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("--to %s: %w", dir, err)
	case info.Mode()&os.ModeSymlink != 0:
		return fmt.Errorf("--to %s is a symbolic link: give the directory itself", dir)
	case !info.IsDir():
		return fmt.Errorf("--to %s is not a directory: give a new or empty directory, or an archive to replace", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("--to %s: %w", dir, err)
	}
	for _, e := range entries {
		if e.Name() != site.ArchiveFile && !(e.Name() == site.BodiesDir && e.IsDir()) {
			return fmt.Errorf("--to %s holds other files than a site archive (%.60q): choose a new or empty directory", dir, e.Name())
		}
	}
	if len(entries) > 0 {
		if _, err := os.Lstat(filepath.Join(dir, site.ArchiveFile)); err != nil {
			return fmt.Errorf("--to %s holds a bodies directory but no %s: choose a new or empty directory", dir, site.ArchiveFile)
		}
	}
	return nil
}
