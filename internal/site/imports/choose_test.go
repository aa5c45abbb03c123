package imports

import (
	"bytes"
	"compress/gzip"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/har"
	"github.com/quicbench/quicbench/internal/site"
)

// collect adds exchanges (method, URL, status, content type) with small
// bodies to a fresh collector.
func collect(t *testing.T, entries ...[4]string) *collector {
	t.Helper()
	c := &collector{ctx: context.Background(), archive: &site.Archive{Source: "test"}}
	for _, e := range entries {
		status := map[string]int{"200": 200, "101": 101, "404": 404}[e[2]]
		h := []site.Field{{Name: "Content-Type", Value: e[3]}, {Name: "Date", Value: "Tue, 05 Mar 2019 10:20:30 GMT"}}
		if _, err := c.add(e[0], e[1], "", status, h, []byte("<html>"+e[1]+"</html>")); err != nil {
			t.Fatalf("%s: %v", e[1], err)
		}
	}
	return c
}

func TestImportChoosesTheDocument(t *testing.T) {
	html, js := "text/html; charset=utf-8", "text/javascript"
	// A retail page: beacons and frames are HTML too; the page is at "/"
	// of the host with the most requests among those with a page at "/".
	c := collect(t,
		[4]string{"GET", "https://fls.shop.test/uedata?beacon=1", "200", html},
		[4]string{"GET", "https://ads.shop.test/", "200", html},
		[4]string{"GET", "https://www.shop.test/", "200", html},
		[4]string{"GET", "https://www.shop.test/app.js", "200", js},
		[4]string{"GET", "https://www.shop.test/frame?x=1", "200", html},
		[4]string{"GET", "https://img.shop.test/1.js", "200", js},
		[4]string{"GET", "https://img.shop.test/2.js", "200", js},
		[4]string{"GET", "https://img.shop.test/3.js", "200", js},
	)
	a, _, err := c.finish("", "")
	if err != nil || a.Document != "https://www.shop.test/" {
		t.Fatalf("document %v, %v; want https://www.shop.test/", a, err)
	}
	if want := time.Date(2019, 3, 5, 10, 20, 30, 0, time.UTC); !a.RecordedAt.Equal(want) {
		t.Errorf("recorded at %v, want the document's Date %v", a.RecordedAt, want)
	}
	// No page at "/": the likeliest five, each as the flag to pass.
	c = collect(t,
		[4]string{"GET", "https://a.test/x", "200", html}, [4]string{"GET", "https://b.test/y", "200", html},
		[4]string{"GET", "https://b.test/z.js", "200", js}, [4]string{"GET", "https://c.test/1", "200", html},
		[4]string{"GET", "https://c.test/2", "200", html}, [4]string{"GET", "https://c.test/3", "200", html},
		[4]string{"GET", "https://c.test/4", "200", html},
	)
	_, _, err = c.finish("", "")
	if err == nil || !strings.Contains(err.Error(), "6 HTML pages and none at path /") ||
		strings.Count(err.Error(), "--document") != maxCandidates || !strings.Contains(err.Error(), `likeliest first: --document "https://c.test/`) {
		t.Errorf("error %v", err)
	}
}

func TestImportLeavesOutOtherSchemes(t *testing.T) {
	c := collect(t,
		[4]string{"GET", "https://www.news.test/", "200", "text/html"},
		[4]string{"GET", "wss://live.news.test/socket", "101", ""},
		[4]string{"GET", "https://live.news.test/socket", "101", ""},
		[4]string{"GET", "data:image/png;base64,iVBORw0KGgo=", "200", "image/png"},
		[4]string{"GET", "blob:https://www.news.test/6c1f", "200", "image/png"},
		[4]string{"GET", "chrome-extension://abcdef/inject.js", "200", "text/javascript"},
		[4]string{"GET", "ftp://files.news.test/a.txt", "200", "text/plain"},
		[4]string{"GET", "http://www.news.test/old.png", "200", "image/png"},
	)
	a, rep, err := c.finish("", "")
	if err != nil || len(a.Exchanges) != 1 {
		t.Fatalf("archive %v, %v", a, err)
	}
	if rep.OtherSchemes != 5 || rep.Informational != 1 || rep.PlainHTTP != 1 || !strings.Contains(rep.String(), "5 entries of other schemes") {
		t.Errorf("report %+v:\n%s", rep, rep)
	}
	if _, err := collect(t).add("GET", "not a url", "", 200, nil, nil); err == nil {
		t.Error("a URL without a scheme was accepted")
	}
}

func TestHARRecordedAt(t *testing.T) {
	start := time.Date(2021, 7, 1, 8, 0, 0, 0, time.UTC)
	h := &har.HAR{Log: har.Log{Pages: []har.Page{{StartedDateTime: start}},
		Entries: []har.Entry{{StartedDateTime: start.Add(-time.Hour)}}}}
	if got := harRecordedAt(h); !got.Equal(start) {
		t.Errorf("with a page: %v", got)
	}
	h.Log.Pages = nil
	if got := harRecordedAt(h); !got.Equal(start.Add(-time.Hour)) {
		t.Errorf("without a page: %v", got)
	}
}

func TestBrowserOwnAndImages(t *testing.T) {
	var doc bytes.Buffer
	zw := gzip.NewWriter(&doc)
	zw.Write([]byte(`<html><head><LINK REL="shortcut icon" href="//cdn.news.test/i.ico?v=2"><link rel=manifest href=m.json>` +
		`<link rel="search" type="application/opensearchdescription+xml" title="news" href="/osdd_file.xml">` +
		`<link rel=stylesheet href=a.css></head><body><link rel=icon href=/late.png></body></html>`))
	zw.Close()
	s := &site.Site{Origins: []*site.Origin{{Host: "www.news.test", Resources: map[string]*site.Resource{
		"/d/": {Path: "/d/", Encoding: "gzip", Body: doc.Bytes()}}}}, DocumentPath: "/d/"}
	got := strings.Join(s.BrowserOwn(), " ")
	if got != "https://www.news.test/favicon.ico https://cdn.news.test/i.ico https://www.news.test/d/m.json https://www.news.test/osdd_file.xml" {
		t.Errorf("browser-own URLs %q", got)
	}
	for name, c := range map[string]struct {
		r  site.Resource
		ok bool
	}{
		"png":         {site.Resource{Body: []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")}, true},
		"webp":        {site.Resource{Body: []byte("RIFF\x10\x00\x00\x00WEBPVP8 ")}, true},
		"svg":         {site.Resource{Body: []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>`)}, true},
		"truncated":   {site.Resource{Body: []byte("\x89PNG\r\n\x1a\n\x00")}, false},
		"html":        {site.Resource{Body: []byte("<html>not found</html>")}, false},
		"empty":       {site.Resource{}, false},
		"404":         {site.Resource{Status: 404, Body: []byte("GIF89a")}, false},
		"bad gzip":    {site.Resource{Encoding: "gzip", Body: []byte("GIF89a")}, false},
		"unknown zip": {site.Resource{Encoding: "zstd", Body: []byte("GIF89a")}, false},
	} {
		if got := site.ImageOK(&c.r); got != c.ok {
			t.Errorf("%s: site.ImageOK %v, want %v", name, got, c.ok)
		}
	}
}

// TestDecodeContent: each coding an archive keeps is undone (the bodies
// encode made), identity kept, broken bodies and other codings refused.
func TestDecodeContent(t *testing.T) {
	const text = "body { color: red }"
	for _, coding := range []string{"gzip", "deflate", "br"} {
		body, ok := encode([]byte(text), coding)
		if !ok {
			t.Fatalf("%s: encode refused", coding)
		}
		if got, err := site.DecodeContent(coding, body); err != nil || string(got) != text {
			t.Errorf("%s: %q, %v", coding, got, err)
		}
	}
	if got, err := site.DecodeContent("", []byte("plain")); err != nil || string(got) != "plain" {
		t.Errorf("identity: %q, %v", got, err)
	}
	for coding, body := range map[string]string{"br": "x", "gzip": "not gzip", "deflate": "not zlib", "zstd": "x"} {
		if _, err := site.DecodeContent(coding, []byte(body)); err == nil {
			t.Errorf("%s body %q was accepted", coding, body)
		}
	}
}

// harEntry is a HAR entry of page ref: GET u answered status with
// header (name, value pairs) and body (nil: none recorded).
func harEntry(ref, u string, status int, body *string, header ...string) har.Entry {
	e := har.Entry{Pageref: ref, Request: har.Request{Method: "GET", URL: u}, Response: har.Response{Status: status}}
	for i := 0; i+1 < len(header); i += 2 {
		e.Response.Headers = append(e.Response.Headers, har.NameValue{Name: header[i], Value: header[i+1]})
	}
	e.Response.Content = har.Content{MimeType: "text/html", Text: body, Size: 100}
	return e
}

// A browser's HAR of two pages: the first's document was exported without
// its body; the second was reached over plain http, which Chrome upgraded
// itself (HSTS) and wrote as a "307 Internal Redirect". The import replays
// the second page, dated by it, and leaves the made-up redirect out: kept,
// it would have redirected the upgraded URL to itself.
func TestImportHARSkipsPagesWithoutDocumentAndMadeUpRedirects(t *testing.T) {
	first := time.Date(2017, 3, 21, 21, 13, 0, 0, time.UTC)
	page, empty := "<html><link rel=stylesheet href=/s.css></html>", ""
	h := &har.HAR{Log: har.Log{
		Pages: []har.Page{{ID: "p1", StartedDateTime: first}, {ID: "p2", StartedDateTime: first.Add(4 * time.Second)}},
		Entries: []har.Entry{
			harEntry("p1", "http://plain.test/", 200, nil),
			harEntry("p2", "http://www.org.test/domains/example", 307, nil,
				"Location", "https://www.org.test/domains/example", "Non-Authoritative-Reason", "HSTS"),
			harEntry("p2", "https://www.org.test/domains/example", 302, &empty, "Location", "https://www.org.test/domains/reserved"),
			harEntry("p2", "https://www.org.test/domains/reserved", 200, &page, "Content-Type", "text/html"),
		}}}
	a, rep, err := importHAR(context.Background(), h, Options{UpgradeHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	// The replay starts where the recorded load did: at the server's 302
	// to the page (not the browser's own 307 before it), so it pays that
	// round trip too.
	if a.Document != "https://www.org.test/domains/example" || !a.RecordedAt.Equal(first.Add(4*time.Second)) || rep.Redirects != 1 {
		t.Errorf("document %s recorded %v, %d redirects; want page 2's, from its recorded 302", a.Document, a.RecordedAt, rep.Redirects)
	}
	if _, err := a.Site(); err != nil {
		t.Errorf("an archive whose document is a redirect: %v", err)
	}
	if rep.HSTSUpgrades != 1 || rep.PagesLeftAside != 1 || !strings.Contains(rep.String(), "1 HSTS upgrades the recording browser made itself") {
		t.Errorf("report %+v:\n%s", rep, rep)
	}
	for _, ex := range a.Exchanges {
		if ex.URL == "https://www.org.test/domains/example" && ex.Status != 302 {
			t.Errorf("%s replays as %d, want the server's 302", ex.URL, ex.Status)
		}
	}
	// Only pages without their document: the error names the first.
	h.Log.Entries = h.Log.Entries[:1]
	if _, _, err := importHAR(context.Background(), h, Options{}); err == nil ||
		!strings.Contains(err.Error(), `document "http://plain.test/" is over plain http`) || !strings.Contains(err.Error(), "--upgrade-http") {
		t.Errorf("no page with its document: %v", err)
	}
}

// A Chrome HAR made with an ad blocker (PerfCascade's h2o.examp1e.net has
// this shape): the extension sent an iframe to about:blank and a script to
// a data: URL ("307 Internal Redirect", Non-Authoritative-Reason:
// Delegate), and another request to an https URL elsewhere. The first two
// replay as what the page got in their place, so Firefox gets an empty
// frame, not an error page from a host the recording lacks; the third is
// left out, counted apart from HSTS upgrades.
func TestImportHARAnswersWhatAnExtensionAnswered(t *testing.T) {
	page := "<html><iframe src=https://btn.test/b.html></iframe><script src=https://ga.test/a.js></script></html>"
	h := &har.HAR{Log: har.Log{Entries: []har.Entry{
		harEntry("", "https://www.site.test/", 200, &page, "Content-Type", "text/html"),
		harEntry("", "https://btn.test/b.html", 307, nil, "Location", "about:blank", "Non-Authoritative-Reason", "Delegate"),
		harEntry("", "https://ga.test/a.js", 307, nil, "Non-Authoritative-Reason", "Delegate"),
		harEntry("", "https://ads.test/x.js", 307, nil, "Location", "https://elsewhere.test/x.js", "Non-Authoritative-Reason", "Delegate"),
	}}}
	h.Log.Entries[1].Response.StatusText = "Internal Redirect"
	h.Log.Entries[2].Response.RedirectURL = "data:application/javascript;base64,dmFyIGE9MTs="
	a, rep, err := importHAR(context.Background(), h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ contentType, body string }{
		"https://btn.test/b.html": {"text/html; charset=utf-8", ""},
		"https://ga.test/a.js":    {"application/javascript", "var a=1;"},
	}
	for _, ex := range a.Exchanges {
		w, ok := want[ex.URL]
		if ex.URL == "https://ads.test/x.js" {
			t.Errorf("%s was kept: the extension's redirect elsewhere has no server's answer", ex.URL)
		}
		if !ok {
			continue
		}
		delete(want, ex.URL)
		if ex.Status != 200 || site.Get(lowerNames(ex.Header), "content-type") != w.contentType || string(ex.Body) != w.body {
			t.Errorf("%s replays as %d %q %q, want 200 %q %q", ex.URL, ex.Status, site.Get(lowerNames(ex.Header), "content-type"), ex.Body, w.contentType, w.body)
		}
	}
	if len(want) > 0 {
		t.Errorf("not kept: %v", want)
	}
	if rep.AnsweredInBrowser != 2 || rep.BrowserMade != 1 || rep.HSTSUpgrades != 0 || !strings.Contains(rep.String(), "2 requests the recording browser's extensions sent to about:blank or a data: URL") {
		t.Errorf("report %+v:\n%s", rep, rep)
	}
}

// Data URLs decode as RFC 2397 says: base64 with or without padding,
// percent-escaped text, the default media type; a URL without its comma
// or with broken base64 is no answer.
func TestDataURL(t *testing.T) {
	for _, c := range []struct {
		rest, contentType, body string
		ok                      bool
	}{
		{"text/javascript;base64,YQ", "text/javascript", "a", true},
		{"text/javascript;base64,YQ==", "text/javascript", "a", true},
		{",a%20b", "text/plain;charset=US-ASCII", "a b", true},
		{";charset=utf-8,x", "text/plain;charset=utf-8", "x", true},
		{"image/gif;base64,!!", "", "", false},
		{"text/plain", "", "", false},
	} {
		ct, body, ok := dataURL(c.rest)
		if ok != c.ok || ct != c.contentType || string(body) != c.body {
			t.Errorf("dataURL(%q) = %q %q %v, want %q %q %v", c.rest, ct, body, ok, c.contentType, c.body, c.ok)
		}
	}
}
