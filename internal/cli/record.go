package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/quicbench/quicbench/internal/chromium"
	"github.com/quicbench/quicbench/internal/site"
)

// runRecord loads pages in Chromium on this machine's network and saves
// each as a site archive.
func runRecord(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("record", flag.ContinueOnError)
	to := fs.String("to", "", "the site archive `directory` (with several URLs, one archive per page below it: 01-HOST, 02-HOST, …)")
	settle := fs.Duration("settle", chromium.DefaultSettle, "how long to go on recording after the load event, for what scripts fetch late")
	timeout := fs.Duration("timeout", time.Minute, "limit for one page's load")
	binary := fs.String("chromium", chromium.DefaultChromiumPath, "Chromium `binary`")
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
	if err := chromium.Executable().Check(*binary); err != nil {
		fmt.Fprintln(stderr, "quicbench record:", err)
		return exitUsage
	}
	c := &chromium.Chromium{Path: *binary, Timeout: *timeout}
	if os.Geteuid() == 0 {
		// A live site's pages reach the browser: not as root, and sandboxed.
		var err error
		if c.RunAs, err = unprivilegedUser(); err != nil {
			fmt.Fprintln(stderr, "quicbench record:", err)
			return exitUsage
		}
	}
	for i, u := range urls {
		dir := *to
		if len(urls) > 1 {
			host, _ := url.Parse(u)
			dir = filepath.Join(*to, fmt.Sprintf("%02d-%s", i+1, host.Hostname()))
		}
		a, rep, err := c.Record(ctx, chromium.RecordRequest{URL: u, Settle: *settle})
		if err == nil {
			err = site.WriteArchive(ctx, dir, a)
		}
		if err != nil {
			fmt.Fprintln(stderr, "quicbench record:", err)
			if ctx.Err() != nil {
				return exitInterrupted
			}
			return exitFailure
		}
		fmt.Fprintf(stdout, "%s: %s\n%s%s", dir, a.Document, a.Summary(), rep)
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

// unprivilegedUser is the user root's record runs Chromium as: nobody.
func unprivilegedUser() (*syscall.Credential, error) {
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, fmt.Errorf("as root, record runs Chromium as the user nobody, and there is none here: add it, or run record as an ordinary user")
	}
	uid, uerr := strconv.ParseUint(u.Uid, 10, 32)
	gid, gerr := strconv.ParseUint(u.Gid, 10, 32)
	if uerr != nil || gerr != nil || uid == 0 {
		return nil, fmt.Errorf("the user nobody has uid %s, gid %s: record needs an unprivileged user to run Chromium as", u.Uid, u.Gid)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}
