package reproduce

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/papers"
	"github.com/quicbench/quicbench/internal/report"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/testenv"
)

// pagesRun writes a run of the spec named name into root/name: h1 and h3
// loads, cache off on first visits and on on repeat visits, two of each
// per page; h3 is faster on the pages
// in h3Wins, and every load of a page in failed failed with its error.
func pagesRun(t *testing.T, root, name string, pages []string, h3Wins map[string]bool, failed map[string]string) {
	t.Helper()
	store := newRun(t, root, name, name)
	defer store.Close()
	for i, page := range pages {
		for _, cache := range []bool{false, true} {
			for _, proto := range []factor.Protocol{"h1", "h3"} {
				for rep := int64(1); rep <= 2; rep++ {
					ms := 1000.0 + float64(rep)
					if (proto == "h3") == h3Wins[page] {
						ms -= 100
					}
					visit := factor.FirstVisit // the paper's cache off: a first visit; cache on: a repeat visit
					if cache {
						visit = factor.RepeatVisit
					}
					tr := results.Trial{ID: fmt.Sprintf("p%d-%v-%s-r%d", i, cache, proto, rep), Rep: rep,
						Levels:  results.Levels{Network: "nepomuceno2018-rtt20-loss0", Page: page, Origins: 1, Protocol: proto, Visit: visit, Cache: cache},
						Outcome: results.Outcome{Status: results.StatusOK}, Metrics: results.Metrics{PLT: results.F(ms), OnLoad: results.F(ms), DCL: results.F(ms / 2)}}
					if msg, ok := failed[page]; ok {
						tr.Outcome = results.Outcome{Status: results.StatusFailed, Error: msg}
						tr.Metrics = results.Metrics{}
					}
					if err := store.AddTrial(tr, nil, nil); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
}

// TestClaimsOnRealPagesSitBesideTheGeneratedOnes: with a real-pages run
// beside a reproduction's run, the claims about pages (Nepomuceno C1)
// carry a second verdict from the recorded sites, which names the sites
// it used and those it left out with why (every load failed; an import
// that failed, from sites.csv); the claims not about pages (C5) have none;
// the table, claims.csv and the HTML say so.
func TestClaimsOnRealPagesSitBesideTheGeneratedOnes(t *testing.T) {
	root := t.TempDir()
	var generated []string
	for i := 1; i <= 20; i++ {
		generated = append(generated, fmt.Sprintf("web2024:%d", i))
	}
	pagesRun(t, root, "nepomuceno2018-quick", generated, map[string]bool{"web2024:3": true}, nil)
	archive := func(name string) string { return "archive:" + filepath.Join(root, SitesDir, name) }
	real := []string{archive("a.har"), archive("b.mahimahi"), archive("c.har"), archive("d.har"), archive("e.har")}
	pagesRun(t, root, "nepomuceno2018-pages-quick-real", real,
		map[string]bool{real[0]: true, real[1]: true, real[2]: true}, map[string]string{real[4]: "replay: 40 % of requests unmatched"})
	sites := []Site{{Name: "a.har", Archive: "x"}, {Name: "f.har", Err: fmt.Errorf("no page in the HAR")}}
	if err := writeSitesList(root, sites); err != nil {
		t.Fatal(err)
	}
	rep, err := buildRun(t, filepath.Join(root, "nepomuceno2018-quick"))
	if err != nil {
		t.Fatal(err)
	}
	cl := rep.Page.Claims
	c1, c5 := rowOf(t, cl, "C1"), rowOf(t, cl, "C5")
	if c1.Verdict != string(papers.Agrees) || !strings.HasPrefix(c1.Real, "inconclusive: 75 % [") || c5.Real != "" {
		t.Errorf("C1 %s, on real pages %q; C5 on real pages %q; want C1 agreeing on 1 of 20 generated pages and 3 of 4 sites on real pages, C5 none", c1.Verdict, c1.Real, c5.Real)
	}
	for _, want := range []string{"4 sites", "2 left out", "e.har: fewer than 2 successful loads at each level compared (4 of 4 loads failed): replay: 40 % of requests unmatched",
		"f.har: failed to import: no page in the HAR"} {
		if !strings.Contains(c1.Real, want) {
			t.Errorf("C1 on real pages %q lacks %q", c1.Real, want)
		}
	}
	if !strings.Contains(cl.Table, "real pages") || !strings.Contains(cl.Table, "Real pages: 4 recorded sites: a.har, b.mahimahi, c.har, d.har.") {
		t.Errorf("the claims table:\n%s", cl.Table)
	}
	header, c1Row := cl.CSV[0], cl.CSV[1]
	col := func(name string) string {
		for i, h := range header {
			if h == name {
				return c1Row[i]
			}
		}
		t.Fatalf("claims.csv has no column %s", name)
		return ""
	}
	if col("real_verdict") != "inconclusive" || col("real_value") != "0.75" || col("real_sites") != "a.har b.mahimahi c.har d.har" || !strings.Contains(col("real_left_out"), "e.har: ") {
		t.Errorf("claims.csv's C1: %v", c1Row)
	}
	out := t.TempDir()
	if _, err := report.WriteFiles(out, rep.Page, rep.Analysis, nil); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(out, "index.html"))
	if err != nil || !bytes.Contains(page, []byte("on real pages: inconclusive: 75 %")) {
		t.Errorf("the HTML does not give C1's verdict on real pages (%v)", err)
	}
}

// TestSitesImportEveryKindOfRecording: ImportSites reads a directory made
// as a user would bring it, of recordings others made (two Chrome HARs, a
// Mahimahi recording, a site archive), beside a README, a link and a
// broken HAR: each recording becomes an archive in OUT/sites, the broken
// one is listed with its error, the rest is passed over; a second import
// keeps what the first wrote; UseSites runs the paper's real-pages spec on
// the archives, and a paper without claims about pages is refused.
func TestSitesImportEveryKindOfRecording(t *testing.T) {
	shared := testenv.SharedRecordings(t)
	in, out := t.TempDir(), t.TempDir()
	copyTo := func(name string) {
		t.Helper()
		if err := os.CopyFS(filepath.Join(in, name), os.DirFS(filepath.Join(shared, name))); err != nil {
			t.Fatal(err)
		}
	}
	copyTo("www.cbsnews.com.mahimahi")
	for _, name := range []string{"www.nghttp2.org.har", "www.kernel.org.har"} {
		data, err := os.ReadFile(filepath.Join(shared, name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(in, name), data, 0o644)
	}
	os.WriteFile(filepath.Join(in, "README.md"), []byte("recordings"), 0o644)
	os.WriteFile(filepath.Join(in, "broken.har"), []byte("{not json"), 0o644)
	os.Symlink(filepath.Join(shared, "www.ny.gov.mahimahi"), filepath.Join(in, "link.mahimahi"))
	// a site archive, as quicbench import writes one
	first, err := ImportSites(context.Background(), in, filepath.Join(out, "first"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(out, "first", SitesDir, "www.kernel.org.har"), filepath.Join(in, "kernel-archive")); err != nil {
		t.Fatal(err)
	}
	sites, err := ImportSites(context.Background(), in, out)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range sites {
		names = append(names, s.Name)
		if (s.Err != nil) != (s.Name == "broken.har") {
			t.Errorf("%s: %v", s.Name, s.Err)
		}
	}
	if got := strings.Join(names, " "); got != "broken.har kernel-archive www.cbsnews.com.mahimahi www.kernel.org.har www.nghttp2.org.har" {
		t.Errorf("sites %s", got)
	}
	if len(first) != 4 {
		t.Errorf("the first import read %d recordings, want 4", len(first))
	}
	left, err := unreadSites(out)
	if err != nil || len(left) != 1 || left[0].Site != "broken.har" || !strings.HasPrefix(left[0].Cause, "failed to import: ") {
		t.Errorf("sites.csv's failures: %+v, %v", left, err)
	}
	manifest := filepath.Join(out, SitesDir, "www.nghttp2.org.har", "archive.json")
	before, err := os.Stat(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ImportSites(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	if after, err := os.Stat(manifest); err != nil || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("a second import wrote the archive again (%v)", err)
	}
	repros, err := Resolve("nepomuceno2018", "quick", out, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	r := repros[0]
	if err := r.UseSites(in, sites); err != nil {
		t.Fatal(err)
	}
	if r.Real.Name != "nepomuceno2018-pages-quick-real" || len(r.Real.Pages) != 4 || r.Real.LevelsOf(factor.IDServer)[0] != "caddy" || len(r.AllSpecs()) != 2 ||
		!strings.HasSuffix(r.Command, " --sites "+in) {
		t.Errorf("the real-pages spec: %s, %d pages, servers %v; the command to continue %q", r.Real.Name, len(r.Real.Pages), r.Real.LevelsOf(factor.IDServer), r.Command)
	}
	cook, _ := Resolve("cook2017", "quick", out, time.Now())
	if err := cook[0].UseSites(in, sites); err == nil || !strings.Contains(err.Error(), "makes no claim about pages") {
		t.Errorf("cook2017 with sites: %v", err)
	}
}

// TestSitesSkipWhatNoArchiveCanTake: one odd recording failed the whole
// --sites (a directory named sites.csv: "exists and is not a regular
// file"; a name with a line break: the spec failed to re-parse after
// everything was imported); and as root, a recording another user owns
// in root's directory was read. Each is now left out and named, and the
// others are imported.
func TestSitesSkipWhatNoArchiveCanTake(t *testing.T) {
	testenv.RequireRoot(t)
	shared := testenv.SharedRecordings(t)
	in, out := t.TempDir(), t.TempDir()
	data, err := os.ReadFile(filepath.Join(shared, "www.kernel.org.har"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"good.har", "line\nbreak.har", "theirs.har"} {
		if err := os.WriteFile(filepath.Join(in, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(filepath.Join(in, "theirs.har"), 4242, 4242); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(in, sitesFile), 0o755); err != nil {
		t.Fatal(err)
	}
	sites, err := ImportSites(context.Background(), in, out)
	if err != nil {
		t.Fatalf("one odd recording failed them all: %v", err)
	}
	want := map[string]string{"good.har": "", "line\nbreak.har": "line break", sitesFile: "the list of sites", "theirs.har": "uid 4242"}
	for _, s := range sites {
		w, ok := want[s.Name]
		switch {
		case !ok:
			t.Errorf("unexpected site %q", s.Name)
		case w == "" && s.Err != nil:
			t.Errorf("%q: %v", s.Name, s.Err)
		case w != "" && (s.Err == nil || !strings.Contains(s.Err.Error(), w)):
			t.Errorf("%q: %v, want it left out saying %q", s.Name, s.Err, w)
		}
		delete(want, s.Name)
	}
	if len(want) > 0 {
		t.Errorf("not listed: %v", want)
	}
	repros, err := Resolve("nepomuceno2018", "quick", out, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := repros[0].UseSites(in, sites); err != nil || len(repros[0].Real.Pages) != 1 {
		t.Errorf("the real-pages spec of the one good site: %v", err)
	}
}
