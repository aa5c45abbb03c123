package reproduce

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/papers"
	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/site/imports"
	"github.com/quicbench/quicbench/internal/trust"
)

// RealSuffix ends the name of a paper's real-pages run: its RealPages spec
// with recorded sites for pages, in OUT/<spec name>-real/.
const RealSuffix = papers.RealRunSuffix

// SitesDir is the directory of a reproduction's recorded sites, imported
// as site archives: OUT/sites/<recording's name>/. sitesFile in it lists
// every recording with where it went or why it could not be imported.
const (
	SitesDir  = "sites"
	sitesFile = "sites.csv"
)

// Site is one recording of --sites as a reproduction replays it.
type Site struct {
	// Name is the recording's file or directory name, such as
	// "www.amazon.com.mahimahi".
	Name string
	// Archive is the site archive it was imported into; "" when it could
	// not be (Err says why).
	Archive string
	Err     error
}

// ImportSites imports each recording in dir — a site archive directory, a
// Mahimahi recording directory, a HAR (.har) or a WebPageReplay archive
// (.wprgo) — into OUT/sites/<name>/ (a recording imported there before is
// kept), and lists them in name order, with the error of each that could
// not be imported. Other files (a README, licences) are no recordings and
// are passed over; a link is never followed. It writes the list to
// OUT/sites/sites.csv.
func ImportSites(ctx context.Context, dir, out string) ([]Site, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("--sites: %w", err)
	}
	var sites []Site
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !isRecording(e) {
			continue
		}
		s := Site{Name: e.Name(), Archive: filepath.Join(out, SitesDir, e.Name())}
		if s.Err = usableSite(dir, s); s.Err == nil {
			s.Err = importSite(ctx, dir, s, e.IsDir())
		}
		if s.Err != nil {
			s.Archive = ""
		}
		sites = append(sites, s)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(sites) == 0 {
		return nil, fmt.Errorf("--sites %s holds no recordings: give a directory of site archives, Mahimahi recording directories, .har or .wprgo files", dir)
	}
	return sites, writeSitesList(out, sites)
}

// usableSite refuses, for that site alone, a recording whose name no
// archive can take (the list's own name, or one a spec cannot hold, such
// as a name with a line break) or that the ownership rule refuses (as
// root, one another user owns or could change: trust.CheckUserPaths).
func usableSite(dir string, s Site) error {
	if s.Name == sitesFile {
		return fmt.Errorf("its name is that of the list of sites (%s): rename it", sitesFile)
	}
	if err := (factor.Page{Kind: factor.PageArchive, Archive: s.Archive}).Validate(); err != nil {
		return fmt.Errorf("its name cannot be a site archive's (a line break or a path too long): rename it")
	}
	return trust.CheckUserPaths(trust.UserPath{Kind: trust.Input, Value: filepath.Join(dir, s.Name), Name: "--sites recording"})
}

// isRecording says whether a directory entry of --sites is a recording:
// a directory (a site archive or a Mahimahi recording) or a regular file
// imports.ReaderFor reads; never a link or a hidden entry.
func isRecording(e fs.DirEntry) bool {
	if e.Type()&fs.ModeSymlink != 0 || strings.HasPrefix(e.Name(), ".") || !e.IsDir() && !e.Type().IsRegular() {
		return false
	}
	_, ok := imports.ReaderFor(e.Name(), e.IsDir())
	return ok
}

// importSite writes the recording s.Name of dir (a directory if isDir)
// as the site archive s.Archive, unless an archive is there already.
func importSite(ctx context.Context, dir string, s Site, isDir bool) error {
	if _, err := site.ReadArchive(s.Archive); err == nil {
		return nil
	}
	if err := os.RemoveAll(s.Archive); err != nil { // an import cut short
		return err
	}
	src := filepath.Join(dir, s.Name)
	if isDir {
		if _, err := os.Lstat(filepath.Join(src, site.ArchiveFile)); err == nil {
			return copyArchive(ctx, dir, s)
		}
	}
	read, _ := imports.ReaderFor(s.Name, isDir)
	a, _, err := read(ctx, src, imports.Options{})
	if err != nil {
		return err
	}
	return site.WriteArchive(ctx, s.Archive, a)
}

// copyArchive copies the site archive s.Name of dir into s.Archive,
// following no link, and checks that it reads.
func copyArchive(ctx context.Context, dir string, s Site) error {
	if _, _, err := safefs.CopyTree(ctx, dir, filepath.Dir(s.Archive), s.Name); err != nil {
		return err
	}
	_, err := site.ReadArchive(s.Archive)
	return err
}

// writeSitesList writes OUT/sites/sites.csv: each site's name, archive
// and error.
func writeSitesList(out string, sites []Site) error {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write([]string{"site", "archive", "error"})
	for _, s := range sites {
		msg := ""
		if s.Err != nil {
			msg = s.Err.Error()
		}
		w.Write([]string{s.Name, s.Archive, msg})
	}
	w.Flush()
	return safefs.WriteFile(out, filepath.Join(SitesDir, sitesFile), buf.Bytes(), 0o644)
}

// unreadSites are the sites of OUT/sites/sites.csv that could not be
// imported, as claims on real pages leave them out; none without the file.
func unreadSites(out string) ([]papers.LeftOut, error) {
	data, err := safefs.ReadIn(filepath.Join(out, SitesDir), sitesFile, 16<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(out, SitesDir, sitesFile), err)
	}
	var left []papers.LeftOut
	for _, row := range rows[min(1, len(rows)):] {
		if len(row) == 3 && row[2] != "" {
			left = append(left, papers.LeftOut{Site: row[0], Cause: "failed to import: " + row[2]})
		}
	}
	return left, nil
}

// UseSites adds to r the run of its paper's RealPages spec on the sites
// imported from dir (Real), named with RealSuffix; a paper without claims
// about pages has none.
func (r *Reproduction) UseSites(dir string, sites []Site) error {
	file := r.Paper.RealPages[r.Scale]
	if file == "" {
		return fmt.Errorf("--sites: %s makes no claim about pages to test on recorded sites (those that do: %s)", r.Paper.ID, strings.Join(papersWithRealPages(), ", "))
	}
	s, err := exampleSpec(file)
	if err != nil {
		return err
	}
	d := *s
	d.Name += RealSuffix
	d.Pages = nil
	for _, site := range sites {
		if site.Err == nil {
			d.Pages = append(d.Pages, factor.Page{Kind: factor.PageArchive, Archive: site.Archive})
		}
	}
	if len(d.Pages) == 0 {
		var why []string
		for _, s := range sites[:min(3, len(sites))] {
			why = append(why, s.Name+": "+s.Err.Error())
		}
		return fmt.Errorf("--sites: none of the %d recordings could be imported (%s; all in %s)", len(sites), strings.Join(why, "; "), filepath.Join(r.Dir, SitesDir, sitesFile))
	}
	if r.Real, err = reparse(&d); err != nil {
		return fmt.Errorf("--sites: %w", err)
	}
	r.Sites = sites
	r.Command += " --sites " + dir
	return nil
}

// papersWithRealPages lists the papers with claims about pages.
func papersWithRealPages() []string {
	var ids []string
	for _, p := range papers.All() {
		if len(p.RealPages) > 0 {
			ids = append(ids, p.ID)
		}
	}
	return ids
}

// realRun is the name of the real-pages run beside the run of the spec
// named name, and true if name is one of paper p's specs at a scale with
// a RealPages spec.
func realRun(p papers.Paper, name string) (string, bool) {
	for scale, files := range p.Specs {
		if file := p.RealPages[scale]; file != "" && slices.Contains(files, name+".yaml") {
			return strings.TrimSuffix(file, ".yaml") + RealSuffix, true
		}
	}
	return "", false
}

// withRealPages sets the claims about pages of rows beside the loads of
// the real-pages run in dir beside a run of spec base, if there is one.
func withRealPages(ctx context.Context, p papers.Paper, rows []papers.Row, dir, base string, seed uint64) error {
	name, ok := realRun(p, base)
	if !ok {
		return nil
	}
	srcs, err := runAndDecideRuns(ctx, dir, name, "")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	unread, err := unreadSites(dir)
	if err != nil {
		return err
	}
	papers.EvaluateSites(p, rows, srcs, unread, papers.Options{Seed: seed})
	return nil
}
