package imports

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/har"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/site/sitetest"
)

func TestRewriteHTTP(t *testing.T) {
	hosts := map[string]bool{"a.test": true, "cdn.a.test": true}
	for _, tc := range []struct {
		in, want string
		n        int
	}{
		{`<img src="http://a.test/x.png">`, `<img src="https://a.test/x.png">`, 1},
		{`url(HTTP://CDN.A.test/f.woff)`, `url(https://cdn.a.test/f.woff)`, 1},
		{`{"u":"http:\/\/a.test\/y.js"}`, `{"u":"https:\/\/a.test\/y.js"}`, 1},
		{`http://a.test:80/z http://a.test:8080/z`, `https://a.test/z http://a.test:8080/z`, 1},
		{`http://a.test.example/ http://b.test/ http://xa.test/`, `http://a.test.example/ http://b.test/ http://xa.test/`, 0},
		{`see http://a.test. and http://a.test`, `see https://a.test. and https://a.test`, 2},
		{`https://a.test/ //a.test/ http:/a.test http://`, `https://a.test/ //a.test/ http:/a.test http://`, 0},
	} {
		got, n := rewriteHTTP([]byte(tc.in), hosts)
		if string(got) != tc.want || n != tc.n {
			t.Errorf("rewriteHTTP(%q) = %q, %d; want %q, %d", tc.in, got, n, tc.want, tc.n)
		}
	}
}

// upgradeHAR is a page recorded before its site moved to HTTPS: an http
// document that redirects, a gzip-coded stylesheet naming an http image,
// an image also recorded over https, and one on port 8080.
func upgradeHAR(t *testing.T) string {
	t.Helper()
	text := func(s string) *string { return &s }
	entry := func(url string, status int, mime, body string, header ...har.NameValue) har.Entry {
		e := har.Entry{Pageref: "page_1", StartedDateTime: time.Date(2011, 7, 8, 6, 40, 0, 0, time.UTC)}
		e.Request = har.Request{Method: "GET", URL: url, HTTPVersion: "HTTP/1.1"}
		header = append(header, har.NameValue{Name: "Content-Type", Value: mime})
		e.Response = har.Response{Status: status, HTTPVersion: "HTTP/1.1", Headers: header,
			Content: har.Content{Size: int64(len(body)), MimeType: mime, Text: text(body)}}
		return e
	}
	h := har.New("test", "1")
	h.Log.Pages = []har.Page{{ID: "page_1", StartedDateTime: time.Date(2011, 7, 8, 6, 40, 0, 0, time.UTC)}}
	h.Log.Entries = []har.Entry{
		entry("http://a.test/", 200, "text/html", `<link rel=stylesheet href="http://cdn.a.test/s.css"><img src="http://a.test:8080/p.png"><a href="http://elsewhere.test/">`),
		entry("http://a.test/old", 301, "text/html", "", har.NameValue{Name: "Location", Value: "http://a.test/"}),
		entry("http://cdn.a.test/s.css", 200, "text/css", `body{background:url(http://cdn.a.test/i.png)}`, har.NameValue{Name: "Content-Encoding", Value: "gzip"}),
		entry("http://cdn.a.test/i.png", 200, "image/png", "\x89PNG\r\n\x1a\nhttp://a.test/"),
		entry("https://cdn.a.test/i.png", 200, "image/png", "\x89PNG\r\n\x1a\nnative"),
		entry("http://a.test:8080/p.png", 200, "image/png", "\x89PNG\r\n\x1a\n"),
	}
	path := filepath.Join(t.TempDir(), "old.har")
	if err := h.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestImportUpgradeHTTP(t *testing.T) {
	path := upgradeHAR(t)
	_, rep, err := HAR(context.Background(), path, Options{})
	if err == nil || !strings.Contains(err.Error(), "--upgrade-http") || rep.PlainHTTP != 5 {
		t.Fatalf("without --upgrade-http: %v, report %+v; want an error naming --upgrade-http", err, rep)
	}
	a, rep, err := HAR(context.Background(), path, Options{UpgradeHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	// Kept: the document, the redirect, the stylesheet and the native
	// image; left out: the http image recorded over https too, and 8080.
	if a.Document != "https://a.test/" || len(a.Exchanges) != 4 || rep.Upgraded != 3 || rep.PlainHTTP != 2 || a.Upgraded != 3 {
		t.Fatalf("document %s, %d exchanges, report %+v", a.Document, len(a.Exchanges), rep)
	}
	byURL := map[string]*site.Exchange{}
	for _, ex := range a.Exchanges {
		byURL[ex.URL] = ex
	}
	doc := string(byURL["https://a.test/"].Body)
	if !strings.Contains(doc, `href="https://cdn.a.test/s.css"`) || !strings.Contains(doc, "http://a.test:8080/p.png") || !strings.Contains(doc, "http://elsewhere.test/") {
		t.Errorf("document body %q: want cdn.a.test upgraded, port 8080 and other hosts as recorded", doc)
	}
	if loc := site.Get(byURL["https://a.test/old"].Header, "location"); loc != "https://a.test/" {
		t.Errorf("redirect Location %q, want https://a.test/", loc)
	}
	css := byURL["https://cdn.a.test/s.css"]
	decoded, err := site.DecodeContent(site.Get(css.Header, "content-encoding"), css.Body)
	if err != nil || string(decoded) != `body{background:url(https://cdn.a.test/i.png)}` {
		t.Errorf("stylesheet, gzip-coded again: %q, %v", decoded, err)
	}
	if img := byURL["https://cdn.a.test/i.png"]; img == nil || !strings.HasSuffix(string(img.Body), "native") {
		t.Errorf("the image recorded over https is not the one kept: %+v", img)
	}
	if rep.RewrittenBodies != 2 || rep.RewrittenURLs != 2 || !strings.Contains(rep.String(), "2 http:// URLs") {
		t.Errorf("report %+v says:\n%s", rep, rep)
	}
	checkUpgradedArchive(t, a)
}

// checkUpgradedArchive writes a and reads it back: version 5, the count
// kept.
func checkUpgradedArchive(t *testing.T, a *site.Archive) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "archive")
	if err := site.WriteArchive(context.Background(), dir, a); err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile(filepath.Join(dir, site.ArchiveFile))
	if err != nil || !strings.Contains(string(manifest), `"version": 5,`) || !strings.Contains(string(manifest), `"upgraded_http": 3,`) {
		t.Fatalf("manifest (%v) lacks version 5 (a viewport_source) and upgraded_http: %.300s", err, manifest)
	}
	back, err := site.ReadArchive(dir)
	if err != nil || back.Upgraded != 3 {
		t.Fatalf("read back: %v, upgraded %d", err, back.Upgraded)
	}
}

// FuzzRewriteHTTP: rewriting is idempotent (a rewritten URL is https and
// is not rewritten again), rewrites only what it counts, and leaves a
// body without such URLs as it was.
func FuzzRewriteHTTP(f *testing.F) {
	f.Add([]byte(`<a href="http://a.test/">http:\/\/A.TEST:80/x http://a.test:8080/ http://a.test.</a>`))
	f.Fuzz(func(t *testing.T, text []byte) {
		hosts := map[string]bool{"a.test": true, "b": true}
		out, n := rewriteHTTP(text, hosts)
		if n == 0 && !bytes.Equal(out, text) {
			t.Fatalf("nothing counted, yet %q became %q", text, out)
		}
		if again, m := rewriteHTTP(out, hosts); m != 0 || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %q then %q (%d more)", out, again, m)
		}
		if got := bytes.Count(bytes.ToLower(out), []byte("https")) - bytes.Count(bytes.ToLower(text), []byte("https")); got < n {
			t.Fatalf("%d rewritten but %d more https in %q", n, got, out)
		}
	})
}

// TestUpgradeGzipBombIsRefused: round four's Mahimahi recording over http
// whose gzip-coded stylesheets each decode to more than 256 MiB (40 of
// them, 10 MB on disk) took 57 s and 1.78 GB with --upgrade-http; the
// import's decoded bytes have a budget, and it stops once they pass it.
func TestUpgradeGzipBombIsRefused(t *testing.T) {
	var bomb bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	zeros := make([]byte, 1<<20)
	for range site.MaxDecodedBytes>>20 + 1 {
		gz.Write(zeros)
	}
	gz.Close()
	a := &site.Archive{Source: "test", Document: "http://a.test/", Exchanges: []*site.Exchange{
		{Method: "GET", URL: "http://a.test/", Status: 200, Header: []site.Field{{Name: "content-type", Value: "text/html"}}, Body: []byte(`<link rel=stylesheet href="http://a.test/0.css">`)}}}
	for i := range 40 {
		a.Exchanges = append(a.Exchanges, &site.Exchange{Method: "GET", URL: fmt.Sprintf("http://a.test/%d.css", i), Status: 200,
			Header: []site.Field{{Name: "content-type", Value: "text/css"}, {Name: "content-encoding", Value: "gzip"}}, Body: bomb.Bytes()})
	}
	dir := filepath.Join(t.TempDir(), "recording")
	if err := sitetest.WriteMahimahi(dir, a, false, false); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, _, err := Mahimahi(context.Background(), dir, Options{UpgradeHTTP: true})
	t.Logf("40 bodies of %d KB each: %v after %v", bomb.Len()>>10, err, time.Since(start))
	if err == nil || !strings.Contains(err.Error(), "decompression bomb") || !strings.Contains(err.Error(), "without --upgrade-http") {
		t.Fatalf("error %v, want the decoded budget's refusal", err)
	}
	if _, _, err := Mahimahi(context.Background(), dir, Options{}); err == nil || !strings.Contains(err.Error(), "--upgrade-http") {
		t.Fatalf("without --upgrade-http: %v, want the plain-http refusal that names it", err)
	}
}

// TestUpgradeStopsWhenCanceled: the rewrite loop stops between exchanges.
func TestUpgradeStopsWhenCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ex := &site.Exchange{Method: "GET", URL: "https://a.test/", Status: 200, Header: []site.Field{{Name: "content-type", Value: "text/html"}}, Body: []byte("http://a.test/")}
	c := collector{ctx: ctx, archive: &site.Archive{Exchanges: []*site.Exchange{ex}},
		upgraded: upgrades{exchanges: map[*site.Exchange]bool{ex: true}, hosts: map[string]bool{"a.test": true}}}
	cancel()
	if err := c.applyUpgrades(); !errors.Is(err, context.Canceled) {
		t.Errorf("applyUpgrades with a canceled context: %v", err)
	}
}

// TestImportOfRequestsWithoutResponsesSaysSo: a HAR whose entries all have
// status 0 (requests that failed while recorded) was said to hold no
// "https response on port 443"; it holds no response at all.
func TestImportOfRequestsWithoutResponsesSaysSo(t *testing.T) {
	h := har.New("test", "1")
	for i := range 3 {
		h.Log.Entries = append(h.Log.Entries, har.Entry{StartedDateTime: time.Date(2026, 11, 27, 0, 0, i, 0, time.UTC),
			Request: har.Request{Method: "GET", URL: fmt.Sprintf("https://a.test/%d", i), HTTPVersion: "h2"}, Response: har.Response{Status: 0}})
	}
	path := filepath.Join(t.TempDir(), "failed.har")
	if err := h.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	_, _, err := HAR(context.Background(), path, Options{})
	if err == nil || !strings.Contains(err.Error(), "none of the recording's 3 requests has a response") || strings.Contains(err.Error(), "port 443") {
		t.Errorf("error %v, want it to say the requests have no response", err)
	}
}
