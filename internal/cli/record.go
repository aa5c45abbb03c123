package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/recording"
)

// runRecord loads pages in Chromium on this machine's network and saves
// each as a site archive.
func runRecord(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("record", flag.ContinueOnError)
	to := fs.String("to", "", "the site archive `directory` (with several URLs, one archive per page below it: 01-HOST, 02-HOST, …)")
	settle := fs.Duration("settle", recording.DefaultSettle, "how long to go on recording after the load event, for what scripts fetch late")
	timeout := fs.Duration("timeout", time.Minute, "limit for one page's load")
	browser := recording.Browser()
	binary := fs.String(browser.Flag, browser.Default, browser.Name+" `binary`")
	const usage = "Usage: quicbench record URL... --to DIR [flags]\n\n" +
		"Loads each page in a fresh headless Chromium on this machine's network and saves every\n" +
		"response it received (status, header fields, body as sent) as a site archive that specs and\n" +
		"--page replay as archive:DIR. Pages are https URLs."
	var urls []string
	for len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		urls, args = append(urls, args[0]), args[1:]
	}
	if code, done := parseFlags(fs, args, usage, stdout, stderr); done {
		return code
	}
	urls = append(urls, fs.Args()...)
	if err := checkRecordArgs(urls, *to, *settle, *timeout); err != nil {
		fmt.Fprintln(stderr, "quicbench record:", err)
		return exitUsage
	}
	rec, err := recording.New(recording.Config{URLs: urls, To: *to, Settle: *settle, Timeout: *timeout, Binary: *binary})
	if err != nil {
		fmt.Fprintln(stderr, "quicbench record:", err)
		return exitUsage
	}
	err = rec.Record(ctx, func(r recording.Recorded) {
		fmt.Fprintf(stdout, "%s: %s\n%s%s", r.Dir, r.Archive.Document, r.Archive.Summary(), r.Report)
	})
	if err != nil {
		fmt.Fprintln(stderr, "quicbench record:", err)
		if ctx.Err() != nil {
			return exitInterrupted
		}
		return exitFailure
	}
	return exitOK
}

// checkRecordArgs validates the pages and flags of record.
func checkRecordArgs(urls []string, to string, settle, timeout time.Duration) error {
	switch {
	case len(urls) == 0:
		return fmt.Errorf("give at least one page URL, such as https://example.org/")
	case to == "":
		return fmt.Errorf("give --to DIR, the site archive directory to write")
	case settle < 0 || timeout <= 0:
		return fmt.Errorf("--settle %v and --timeout %v: give a settle time of 0 or more and a positive timeout", settle, timeout)
	}
	for _, u := range urls {
		p, err := url.Parse(u)
		if err != nil || p.Scheme != "https" || p.Hostname() == "" {
			return fmt.Errorf("page %.200q is not an https URL: the testbed replays https only", u)
		}
		if port := p.Port(); port != "" {
			if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
				return fmt.Errorf("page %.200q: port %.20q is outside 1 to 65535", u, port)
			}
		}
	}
	return checkArchiveTarget(to)
}
