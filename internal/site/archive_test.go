package site

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quicbench/quicbench/internal/factor"
)

// smallArchive is a recording of two origins: a document, a stylesheet
// with a query, the same path with another query, a redirect and a POST.
func smallArchive() *Archive {
	html := []Field{{"Content-Type", "text/html"}, {"Connection", "keep-alive"}, {"Content-Length", "9"}, {"Cache-Control", "max-age=60"}}
	return &Archive{Source: "test", Document: "https://www.a.test/", Exchanges: []*Exchange{
		{Method: "GET", URL: "https://www.a.test/", Status: 200, Header: html, Body: []byte("<html></html>")},
		{Method: "GET", URL: "https://cdn.b.test/s.css?v=1", Status: 200, Header: []Field{{"content-type", "text/css"}, {"content-encoding", "gzip"}}, Body: []byte{0x1f, 0x8b}},
		{Method: "GET", URL: "https://cdn.b.test/s.css?v=2", Status: 200, Header: []Field{{"content-type", "text/css"}}, Body: []byte("b{}")},
		{Method: "GET", URL: "https://www.a.test/old", Status: 301, Header: []Field{{"location", "/"}}},
		{Method: "POST", URL: "https://www.a.test/log", Status: 204},
		{Method: "GET", URL: "https://cdn.b.test/s.css?v=1", Status: 200, Body: []byte("duplicate")},
	}}
}

// TestArchiveSite: one origin per host, the document's first; one resource
// per method and target, the first recorded; header fields without
// hop-by-hop fields and length; type and encoding taken out.
func TestArchiveSite(t *testing.T) {
	a := smallArchive()
	s, err := a.Site()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"www.a.test", "cdn.b.test"}, s.Hosts()); diff != "" {
		t.Errorf("hosts (-want +got):\n%s", diff)
	}
	if !s.Recorded || s.DocumentURL() != "https://www.a.test/" || a.Duplicates() != 1 {
		t.Errorf("recorded %v, document %s, %d duplicates", s.Recorded, s.DocumentURL(), a.Duplicates())
	}
	doc := s.Lookup("www.a.test", "/")
	if doc.ContentType != "text/html" || !cmp.Equal(doc.Header, []Field{{"cache-control", "max-age=60"}}) {
		t.Errorf("document %+v", doc)
	}
	css := s.Lookup("cdn.b.test", "/s.css?v=1")
	if css == nil || css.Encoding != "gzip" || !bytes.Equal(css.Body, []byte{0x1f, 0x8b}) {
		t.Errorf("first recorded stylesheet not kept: %+v", css)
	}
	if r := s.Lookup("www.a.test", "POST /log"); r == nil || r.StatusCode() != 204 {
		t.Errorf("POST /log: %+v", r)
	}
}

// TestDocumentsAreWhereTheTabMayGo: the HTML documents and redirects a
// recording holds, without their queries; neither a stylesheet nor a
// POST.
func TestDocumentsAreWhereTheTabMayGo(t *testing.T) {
	a := smallArchive()
	a.Exchanges = append(a.Exchanges, &Exchange{Method: "GET", URL: "https://m.a.test/home?x=1", Status: 200,
		Header: []Field{{"Content-Type", "application/xhtml+xml; charset=utf-8"}}, Body: []byte("<html/>")})
	s, err := a.Site()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"https://m.a.test/home", "https://www.a.test/", "https://www.a.test/old"}
	if diff := cmp.Diff(want, s.Documents()); diff != "" {
		t.Errorf("documents (-want +got):\n%s", diff)
	}
}

// TestMatcher: exact target first, then the nearest query among the same
// method and path; other paths, hosts and methods do not match.
func TestMatcher(t *testing.T) {
	s, err := smallArchive().Site()
	if err != nil {
		t.Fatal(err)
	}
	m := NewMatcher(s)
	for _, tc := range []struct {
		host, method, path, query string
		want                      string // key, "" for unmatched
	}{
		{"cdn.b.test", "GET", "/s.css", "v=2", "/s.css?v=2"},
		{"cdn.b.test", "GET", "/s.css", "v=1", "/s.css?v=1"},
		{"cdn.b.test", "GET", "/s.css", "v=2&t=1700000000", "/s.css?v=2"},
		{"cdn.b.test", "GET", "/s.css", "", "/s.css?v=1"}, // a tie: the smaller key
		{"cdn.b.test", "HEAD", "/s.css", "v=2", "/s.css?v=2"},
		{"www.a.test", "POST", "/log", "x=1", "POST /log"},
		{"www.a.test", "GET", "/log", "", ""},
		{"www.a.test", "GET", "/s.css", "v=1", ""},
		{"cdn.b.test", "GET", "/s.cs", "", ""},
		{"other.test", "GET", "/", "", ""},
	} {
		got := ""
		r, kind := m.Match(tc.host, tc.method, tc.path, tc.query)
		if r != nil {
			got = r.Key()
		}
		if exact := r != nil && r.Target() == target(tc.path, tc.query); (r == nil) != (kind == Unmatched) || exact != (kind == Exact) {
			t.Errorf("%s %s%s?%s: kind %v for %q", tc.method, tc.host, tc.path, tc.query, kind, got)
		}
		if got != tc.want {
			t.Errorf("%s %s%s?%s matched %q, want %q", tc.method, tc.host, tc.path, tc.query, got, tc.want)
		}
	}
}

// TestArchiveCheck: what an archive may not hold.
func TestArchiveCheck(t *testing.T) {
	for name, change := range map[string]func(a *Archive){
		"plain http":        func(a *Archive) { a.Exchanges[1].URL = "http://cdn.b.test/x" },
		"other port":        func(a *Archive) { a.Exchanges[1].URL = "https://cdn.b.test:8443/x" },
		"bad method":        func(a *Archive) { a.Exchanges[1].Method = "GE T" },
		"bad status":        func(a *Archive) { a.Exchanges[1].Status = 42 },
		"header with CRLF":  func(a *Archive) { a.Exchanges[1].Header = []Field{{"x", "a\r\nb"}} },
		"bad header name":   func(a *Archive) { a.Exchanges[1].Header = []Field{{"a b", "1"}} },
		"no document":       func(a *Archive) { a.Document = "https://www.a.test/missing" },
		"bad host":          func(a *Archive) { a.Exchanges[1].URL = "https://a..test/" },
		"IP for host":       func(a *Archive) { a.Exchanges[1].URL = "https://192.0.2.1/x" },
		"no exchanges":      func(a *Archive) { a.Exchanges = nil },
		"document not GETs": func(a *Archive) { a.Exchanges[0].Method = "POST" },
	} {
		a := smallArchive()
		change(a)
		if err := a.Check(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := smallArchive().Check(); err != nil {
		t.Errorf("the small archive: %v", err)
	}
}

// TestArchiveDirectoryRoundTrip: what WriteArchive saves ReadArchive gives
// back, bodies shared by hash.
func TestArchiveDirectoryRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "site")
	a := smallArchive()
	if err := WriteArchive(context.Background(), dir, a); err != nil {
		t.Fatal(err)
	}
	got, err := ReadArchive(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, got, cmp.Comparer(func(x, y []byte) bool { return bytes.Equal(x, y) })); diff != "" {
		t.Errorf("read back (-wrote +read):\n%s", diff)
	}
	bodies, _ := os.ReadDir(filepath.Join(dir, BodiesDir))
	if len(bodies) != 5 { // six responses, two of them without a body
		t.Errorf("%d body files, want 5", len(bodies))
	}
}

// TestReadArchiveRefusesDamage: a missing manifest, a body changed or
// replaced by a link, a manifest that is a link: clear errors.
func TestReadArchiveRefusesDamage(t *testing.T) {
	write := func(t *testing.T) string {
		dir := t.TempDir()
		if err := WriteArchive(context.Background(), dir, smallArchive()); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	body := func(dir string) string {
		entries, _ := os.ReadDir(filepath.Join(dir, BodiesDir))
		return filepath.Join(dir, BodiesDir, entries[0].Name())
	}
	for name, tc := range map[string]struct {
		damage func(t *testing.T, dir string)
		want   string
	}{
		"no manifest": {func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, ArchiveFile)) }, "is not a site archive"},
		"changed body": {func(t *testing.T, dir string) {
			p := body(dir)
			data, _ := os.ReadFile(p)
			data[0] ^= 1
			os.WriteFile(p, data, 0o644)
		}, "does not have the hash"},
		"linked body": {func(t *testing.T, dir string) {
			p := body(dir)
			secret := filepath.Join(t.TempDir(), "secret")
			data, _ := os.ReadFile(p)
			os.WriteFile(secret, data, 0o644)
			os.Remove(p)
			os.Symlink(secret, p)
		}, "link"},
		"linked manifest": {func(t *testing.T, dir string) {
			p := filepath.Join(dir, ArchiveFile)
			os.Rename(p, p+".real")
			os.Symlink(p+".real", p)
		}, "link"},
		"not JSON": {func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, ArchiveFile), []byte("PK\x03\x04"), 0o644)
		}, "not a valid manifest"},
		"viewport out of bounds": {func(t *testing.T, dir string) {
			p := filepath.Join(dir, ArchiveFile)
			data, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(data, []byte(`"version": 2,`), []byte(`"version": 4, "viewport": {"width": 9, "height": 731, "scale": 2.625},`), 1), 0o644)
		}, "viewport: a side of 9"},
		"version 0": {func(t *testing.T, dir string) {
			p := filepath.Join(dir, ArchiveFile)
			data, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(data, []byte(`"version": 2,`), []byte(`"version": 0,`), 1), 0o644)
		}, "damaged or not quicbench's"},
		"a newer version": {func(t *testing.T, dir string) {
			p := filepath.Join(dir, ArchiveFile)
			data, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(data, []byte(`"version": 2,`), []byte(`"version": 99,`), 1), 0o644)
		}, "a newer quicbench wrote it"},
		"empty viewport": {func(t *testing.T, dir string) {
			p := filepath.Join(dir, ArchiveFile)
			data, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(data, []byte(`"version": 2,`), []byte(`"version": 4, "viewport": {"width": 0, "height": 0, "scale": 0},`), 1), 0o644)
		}, "viewport is empty"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := write(t)
			tc.damage(t, dir)
			_, err := ReadArchive(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v, want one line with %q", err, tc.want)
			}
		})
	}
}

// TestArchiveKeepsItsViewport: the recording's User-Agent and viewport
// come back from the archive directory, and reach the site replayed.
func TestArchiveKeepsItsViewport(t *testing.T) {
	a := smallArchive()
	a.UserAgent, a.Viewport = "Mozilla/5.0 (Linux; Android 8.0.0; Pixel 2) Mobile", factor.Viewport{Width: 411, Height: 731, Scale: 2.625, Mobile: true}
	dir := t.TempDir()
	if err := WriteArchive(context.Background(), dir, a); err != nil {
		t.Fatal(err)
	}
	b, err := ReadArchive(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.Site()
	if err != nil || b.UserAgent != a.UserAgent || b.Viewport != a.Viewport || s.Viewport != a.Viewport {
		t.Errorf("read back %q at %+v, site at %+v (%v)", b.UserAgent, b.Viewport, s.Viewport, err)
	}
}

// FuzzParseManifest: any bytes give a manifest or an error, never a panic.
func FuzzParseManifest(f *testing.F) {
	dir := f.TempDir()
	if err := WriteArchive(context.Background(), dir, smallArchive()); err != nil {
		f.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, ArchiveFile))
	f.Add(data)
	f.Add([]byte(`{"format":"quicbench-site-archive","version":1,"exchanges":[{"body":"zz"}]}`))
	f.Add([]byte(`{"format":"quicbench-site-archive","version":4,"user_agent":"x","viewport":{"width":411,"height":731,"scale":2.625,"mobile":true},"exchanges":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := parseManifest(data)
		if err == nil && len(a.Exchanges) > MaxExchanges {
			t.Errorf("%d exchanges accepted", len(a.Exchanges))
		}
		if err == nil && a.Viewport.Check() != nil {
			t.Errorf("viewport %+v accepted", a.Viewport)
		}
	})
}

// TestWriteArchiveReplacesAndCleansUp: writing an archive over another
// leaves only the new one's bodies; an interrupted write into a new
// directory leaves nothing, and into an archive leaves it as it was.
func TestWriteArchiveReplacesAndCleansUp(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "site")
	if err := WriteArchive(context.Background(), dir, smallArchive()); err != nil {
		t.Fatal(err)
	}
	other := &Archive{Source: "test", Document: "https://c.test/", Exchanges: []*Exchange{
		{Method: "GET", URL: "https://c.test/", Status: 200, Header: []Field{{"content-type", "text/html"}}, Body: []byte("<p>other</p>")}}}
	if err := WriteArchive(context.Background(), dir, other); err != nil {
		t.Fatal(err)
	}
	bodies, _ := os.ReadDir(filepath.Join(dir, BodiesDir))
	if len(bodies) != 1 {
		t.Errorf("%d bodies after replacing the archive, want the new one's 1", len(bodies))
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	fresh := filepath.Join(t.TempDir(), "fresh")
	if err := WriteArchive(canceled, fresh, smallArchive()); err == nil {
		t.Fatal("a canceled write succeeded")
	}
	if _, err := os.Lstat(fresh); !os.IsNotExist(err) {
		t.Errorf("a canceled write left %s", fresh)
	}
	if err := WriteArchive(canceled, dir, smallArchive()); err == nil {
		t.Fatal("a canceled write succeeded")
	}
	got, err := ReadArchive(dir)
	if err != nil || got.Document != "https://c.test/" {
		t.Errorf("the archive after a canceled write over it: %v, %v", got, err)
	}
	if bodies, _ := os.ReadDir(filepath.Join(dir, BodiesDir)); len(bodies) != 1 {
		t.Errorf("%d bodies after a canceled write, want 1", len(bodies))
	}
}

// TestUnnamedBodiesAreRemovedOnlyInTheArchive: round four's attack swapped
// the archive's bodies directory for a link to a victim's directory
// between the manifest's write and the removal of the bodies it does not
// name; the removal must not follow it.
func TestUnnamedBodiesAreRemovedOnlyInTheArchive(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "site")
	if err := WriteArchive(context.Background(), dir, smallArchive()); err != nil {
		t.Fatal(err)
	}
	victim := t.TempDir()
	for _, name := range []string{"thesis.tex", "data.csv"} {
		if err := os.WriteFile(filepath.Join(victim, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename(filepath.Join(dir, BodiesDir), filepath.Join(dir, "old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, BodiesDir)); err != nil {
		t.Fatal(err)
	}
	removeUnnamedBodies(dir, manifest{})
	if entries, _ := os.ReadDir(victim); len(entries) != 2 {
		t.Errorf("the victim's directory holds %d files after the removal, want its 2", len(entries))
	}
}
