package firefox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/trust"
)

// A fresh Firefox profile makes Firefox build its start-up caches, its
// add-on and places databases first: about 1.8 s of a 2 s start here. So
// every profile starts from a template that one Firefox made by starting
// once and quitting: the entries of templateEntries, none of which holds
// network state (no HTTP cache, no cookies, no TLS or QUIC state, no HSTS
// or Alt-Svc knowledge: the template's browser never loaded a page), and
// the NSS database, to which each run adds its CA. A fresh profile from
// the template still starts with empty caches for the page.
//
// Making a template takes a browser's start and quit (about 5 s here), so
// the template without a CA is kept in the user's cache, one per Firefox
// build and template preferences (templateKey), and each run's testbeds
// copy it and add their CA.

// templateQuitTimeout bounds the template browser's quitting.
const templateQuitTimeout = 15 * time.Second

// templatesCacheDir holds the kept templates below the user's cache
// directory, one directory per templateKey.
const templatesCacheDir = "quicbench/firefox-templates"

// templateRecipe is part of every template's key: change it whenever what
// a template is made of changes otherwise than through its preferences
// (templateEntries, how it is made), so that no older template is used.
const templateRecipe = "2"

// keptTemplateAge is how long a kept template of another key (another
// Firefox build), or a half-made one, stays before a new template's
// making removes it.
const keptTemplateAge = time.Hour

// templateEntries are the files and directories a profile takes from the
// template: Firefox's compiled start-up scripts, its add-on registry, an
// empty history, search and window settings, and the NSS database.
func templateEntries() []string {
	return []string{"startupCache", "extensions.json", "addonStartup.json.lz4", "compatibility.ini", "times.json",
		"places.sqlite", "favicons.sqlite", "search.json.mozlz4", "xulstore.json",
		"cert9.db", "key4.db", "pkcs11.txt"}
}

// templateRequest is what the template's browser is started for: the
// preferences of an h2 load, with no hosts.
func templateRequest() client.Request { return client.Request{Protocol: factor.H2} }

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
		return "", fmt.Errorf("firefox: template profile: %w", err)
	}
	f.template, f.templateCA = dir, req.CAFile
	return dir, nil
}

// makeTemplate makes a template profile that trusts the CA in caFile: a
// copy of the template without a CA this Firefox build made
// (baseTemplate), the CA added to its NSS database.
func (f *Firefox) makeTemplate(ctx context.Context, caFile string) (string, error) {
	base, done, err := f.baseTemplate(ctx)
	if err != nil {
		return "", err
	}
	defer done()
	dir, err := os.MkdirTemp(f.ProfileDir, "template-")
	if err != nil {
		return "", err
	}
	err = copyEntries(base, dir, templateEntries())
	if err == nil {
		err = addCA(ctx, dir, caFile)
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// baseTemplate returns a template without a CA made by this Firefox
// build: the one kept in the user's cache (made and kept there on first
// use), or, where there is no cache of the user's own to keep one in,
// one made for this run alone; done removes what is this run's alone.
func (f *Firefox) baseTemplate(ctx context.Context) (dir string, done func(), err error) {
	cache, cerr := safefs.OwnCacheDir(templatesCacheDir)
	key, kerr := f.templateKey()
	if cerr != nil || kerr != nil {
		dir, err := f.makeBaseTemplate(ctx, f.ProfileDir)
		return dir, func() { os.RemoveAll(dir) }, err
	}
	kept := filepath.Join(cache, key)
	if info, err := os.Lstat(kept); err == nil && info.IsDir() {
		return kept, func() {}, nil
	}
	made, err := f.makeBaseTemplate(ctx, cache)
	if err != nil {
		return "", nil, err
	}
	if err := os.Rename(made, kept); err != nil {
		os.RemoveAll(made)
		if info, lerr := os.Lstat(kept); lerr != nil || !info.IsDir() {
			return "", nil, err
		}
		// Another run kept the same template first.
	}
	pruneTemplates(cache, key, time.Now())
	return kept, func() {}, nil
}

// pruneTemplates removes from the cache what is not key's and was last
// changed over keptTemplateAge before now: the templates of Firefox
// builds no longer run, and half-made ones an interruption left.
// The cache is the user's own and nobody else can write it
// (safefs.OwnCacheDir); os.RemoveAll follows no link inside.
func pruneTemplates(cache, key string, now time.Time) {
	entries, err := os.ReadDir(cache)
	if err != nil {
		return
	}
	for _, e := range entries {
		info, err := e.Info()
		if e.Name() != key && err == nil && now.Sub(info.ModTime()) > keptTemplateAge {
			os.RemoveAll(filepath.Join(cache, e.Name()))
		}
	}
}

// makeBaseTemplate makes a template without a CA in a new directory in
// parent: a Firefox starts on it once and quits, and what is not in
// templateEntries is removed.
func (f *Firefox) makeBaseTemplate(ctx context.Context, parent string) (string, error) {
	dir, err := os.MkdirTemp(parent, "making-")
	if err != nil {
		return "", err
	}
	fail := func(err error) (string, error) {
		os.RemoveAll(dir)
		return "", err
	}
	if err := makeCertDB(ctx, dir, ""); err != nil {
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
	if err := writeProfile(run, templateRequest()); err != nil {
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

// templateKey names the template this Firefox build makes: a hash of the
// recipe, the template's preferences, and the identity (path, size,
// change times, inode) of the binary and of the files beside it that
// make a build (omni.ja, application.ini, libxul.so), so that an updated
// Firefox makes a new one.
func (f *Firefox) templateKey() (string, error) {
	path := f.Path
	if path == "" {
		path = DefaultPath
	}
	path, err := trust.Executable(path)
	if err != nil {
		return "", err
	}
	prefs, err := prefsFor(templateRequest())
	if err != nil {
		return "", err
	}
	return templateKeyOf(path, prefs)
}

// templateKeyOf is templateKey's hash for the binary at path and prefs.
func templateKeyOf(path string, prefs []byte) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "recipe %s\nprefs %x\n", templateRecipe, sha256.Sum256(prefs))
	dir := filepath.Dir(path)
	for i, name := range []string{path, filepath.Join(dir, "omni.ja"), filepath.Join(dir, "application.ini"), filepath.Join(dir, "libxul.so")} {
		var st syscall.Stat_t
		err := syscall.Stat(name, &st)
		if err != nil && (i == 0 || !errors.Is(err, syscall.ENOENT)) {
			return "", fmt.Errorf("firefox build %s: %w", name, err)
		}
		fmt.Fprintf(h, "%s %d %d %d.%d %d.%d\n", name, st.Size, st.Ino, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
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
