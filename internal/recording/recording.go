// Package recording records live pages as site archives: each page loaded
// in a fresh headless Chromium on this machine's network (as root, as the
// user nobody with Chromium's sandbox on), every response it received kept
// with its status, header fields and body as sent, and written with
// site.WriteArchive. The command line's record is its flags and this.
package recording

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/quicbench/quicbench/internal/chromium"
	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/site/imports"
)

// DefaultSettle is how long a recording goes on after the load event, for
// what scripts fetch late.
const DefaultSettle = chromium.DefaultSettle

// Browser is the browser that records: its binary's flag, default and
// installation.
func Browser() *client.Executable { return chromium.Executable() }

// Config is what to record and how.
type Config struct {
	// URLs are the pages, https URLs.
	URLs []string
	// To is the archive directory; with several URLs, one archive per
	// page below it: 01-HOST, 02-HOST, ….
	To string
	// Settle is how long to go on recording after the load event.
	Settle time.Duration
	// Timeout limits one page's load.
	Timeout time.Duration
	// Binary is Chromium's binary; empty: its default.
	Binary string
}

// Recorded is one page recorded and written.
type Recorded struct {
	// Dir is the page's archive directory.
	Dir     string
	Archive *site.Archive
	// Report says what the recording kept and left out.
	Report imports.Report
}

// Recorder records the pages of its Config.
type Recorder struct {
	cfg     Config
	browser *chromium.Chromium
}

// New checks what cfg needs on this machine (Chromium at cfg.Binary, and
// as root the user nobody to run it as) and returns its recorder; the
// error says what is missing and how to get it.
func New(cfg Config) (*Recorder, error) {
	if err := Browser().Check(cfg.Binary); err != nil {
		return nil, err
	}
	c := &chromium.Chromium{Path: cfg.Binary, Timeout: cfg.Timeout}
	if os.Geteuid() == 0 {
		// A live site's pages reach the browser: not as root, and sandboxed.
		var err error
		if c.RunAs, err = unprivilegedUser(); err != nil {
			return nil, err
		}
	}
	return &Recorder{cfg: cfg, browser: c}, nil
}

// Record records each page in turn and hands each to done once its
// archive is written. It stops at the first page that fails, with an
// error that names it; an error wraps ctx's once it was canceled.
func (r *Recorder) Record(ctx context.Context, done func(Recorded)) error {
	cfg, c := r.cfg, r.browser
	for i, u := range cfg.URLs {
		dir := cfg.To
		if len(cfg.URLs) > 1 {
			host, _ := url.Parse(u)
			dir = filepath.Join(cfg.To, fmt.Sprintf("%02d-%s", i+1, host.Hostname()))
		}
		a, rep, err := c.Record(ctx, chromium.RecordRequest{URL: u, Settle: cfg.Settle})
		if err == nil {
			err = site.WriteArchive(ctx, dir, a)
		}
		if err != nil {
			return err
		}
		done(Recorded{Dir: dir, Archive: a, Report: rep})
	}
	return nil
}

// unprivilegedUser is the user root's recordings run Chromium as: nobody.
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
