package firefox

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/safefs"
)

// A fresh Firefox profile makes Firefox build its start-up caches, its
// add-on and places databases first: about 1.8 s of a 2 s start here. So
// every profile starts from a template that one Firefox made by starting
// once and quitting: the run's CA in its NSS database, and the entries of
// templateEntries, none of which holds network state (no HTTP cache, no
// cookies, no TLS or QUIC state, no HSTS or Alt-Svc knowledge: the
// template's browser never loaded a page). A fresh profile from the
// template still starts with empty caches for the page.

// templateQuitTimeout bounds the template browser's quitting.
const templateQuitTimeout = 15 * time.Second

// templateEntries are the files and directories a profile takes from the
// template: Firefox's compiled start-up scripts, its add-on registry, an
// empty history, search and window settings, and the NSS database.
func templateEntries() []string {
	return []string{"startupCache", "extensions.json", "addonStartup.json.lz4", "compatibility.ini", "times.json",
		"places.sqlite", "favicons.sqlite", "search.json.mozlz4", "xulstore.json",
		"cert9.db", "key4.db", "pkcs11.txt"}
}

// templateFor returns the template profile for req's CA, making it on
// first use.
func (f *Firefox) templateFor(ctx context.Context, req client.Request) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.template != "" && f.templateCA == req.CAFile {
		return f.template, nil
	}
	if f.template != "" {
		os.RemoveAll(f.template)
		f.template = ""
	}
	dir, err := f.makeTemplate(ctx, req.CAFile)
	if err != nil {
		return "", err
	}
	f.template, f.templateCA = dir, req.CAFile
	return dir, nil
}

// makeTemplate makes a template profile that trusts the CA in caFile: a
// Firefox starts on it once and quits, and what is not in
// templateEntries is removed.
func (f *Firefox) makeTemplate(ctx context.Context, caFile string) (string, error) {
	dir, err := os.MkdirTemp(f.ProfileDir, "template-")
	if err != nil {
		return "", fmt.Errorf("firefox: template profile: %w", err)
	}
	fail := func(err error) (string, error) {
		os.RemoveAll(dir)
		return "", fmt.Errorf("firefox: template profile: %w", err)
	}
	if err := makeCertDB(ctx, dir, caFile); err != nil {
		return fail(err)
	}
	// A run of its own on a copy, so that the browser's leaving takes
	// nothing of the template along.
	run, err := os.MkdirTemp(f.ProfileDir, "template-run-")
	if err != nil {
		return fail(err)
	}
	if err := copyEntries(dir, run, templateEntries()); err != nil {
		os.RemoveAll(run)
		return fail(err)
	}
	if err := writeProfile(run, client.Request{Protocol: factor.H2}); err != nil {
		os.RemoveAll(run)
		return fail(err)
	}
	p, err := f.startOn(ctx, run, "")
	if err != nil {
		return fail(err)
	}
	err = p.quit(ctx)
	if err == nil {
		err = copyEntries(run, dir, templateEntries())
	}
	p.Close()
	if err != nil {
		return fail(err)
	}
	return dir, nil
}

// quit asks the browser to quit, so that it writes its start-up caches, and
// waits for it.
func (p *process) quit(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, templateQuitTimeout)
	defer cancel()
	if err := p.bidi.call(ctx, "browser.close", nil, nil); err != nil {
		return err
	}
	select {
	case <-p.proc.Done():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("the browser did not quit: %w", ctx.Err())
	}
}

// copyEntries copies the regular files and the directories of regular
// files among names from src to dst; names missing from src (a Firefox
// that does not make one) are skipped, links and anything else refused.
func copyEntries(src, dst string, names []string) error {
	for _, name := range names {
		from, to := filepath.Join(src, name), filepath.Join(dst, name)
		info, err := os.Lstat(from)
		switch {
		case os.IsNotExist(err):
			continue
		case err != nil:
			return err
		case info.Mode().IsRegular():
			err = copyFile(from, dst, name)
		case info.IsDir():
			err = copyDir(from, to)
		default:
			err = fmt.Errorf("%s is neither a file nor a directory", from)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// copyDir copies the regular files of directory from into a new directory
// to; it refuses anything else in it.
func copyDir(from, to string) error {
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	if err := os.Mkdir(to, 0o700); err != nil && !os.IsExist(err) {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			return fmt.Errorf("%s holds %s, which is not a regular file", from, e.Name())
		}
		if err := copyFile(filepath.Join(from, e.Name()), to, e.Name()); err != nil {
			return err
		}
	}
	return nil
}

// copyFile copies the regular file from to name in directory dir,
// replacing it; it follows no link at either end.
func copyFile(from, dir, name string) error {
	in, err := os.OpenFile(from, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := safefs.Create(dir, name, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
