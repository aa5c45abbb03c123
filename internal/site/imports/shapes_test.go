package imports

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/har"
	"github.com/quicbench/quicbench/internal/site"
)

// text is a pointer to s, for a HAR body.
func text(s string) *string { return &s }

// A Firefox HAR of the shape of mitmproxy.org's: the document came back
// 304 with the body Firefox stored, and so did three other resources;
// the first 200 of the page is its navbar logo. The import replays the
// HTML page, not the PNG, and keeps every 304 with a stored body as a
// 200 with it.
func TestFirefoxRevalidatedDocumentIsThePage(t *testing.T) {
	page := `<html><img src="/logo-navbar.png"><script src="/app.js"></script></html>`
	h := &har.HAR{Log: har.Log{Version: "1.2", Pages: []har.Page{{ID: "page_1", Title: "mitmproxy - an interactive HTTPS proxy"}}, Entries: []har.Entry{
		harEntry("page_1", "https://www.proxy.test/", 304, text(page)),
		harEntry("page_1", "https://www.proxy.test/logo-navbar.png", 200, text("PNG"), "Content-Type", "image/png"),
		harEntry("page_1", "https://www.proxy.test/app.js", 304, text("let a = 1"), "ETag", `"x"`),
		harEntry("page_1", "https://www.proxy.test/a.css", 304, text("p{}")),
		harEntry("page_1", "https://www.proxy.test/b.css", 304, text("b{}")),
	}}}
	h.Log.Entries[1].Response.Content.MimeType = "image/png"
	h.Log.Entries[2].Response.Content.MimeType = "text/javascript"
	h.Log.Entries[3].Response.Content.MimeType = "text/css"
	h.Log.Entries[4].Response.Content.MimeType = "text/css"
	a, rep, err := importHAR(context.Background(), h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Document != "https://www.proxy.test/" || rep.Revalidated != 4 || rep.NoBody != 0 {
		t.Errorf("document %s, report %+v: want the 304 HTML page, four 304s kept with their bodies", a.Document, rep)
	}
	for _, ex := range a.Exchanges {
		if ex.Status != 200 || len(ex.Body) == 0 {
			t.Errorf("%s replays as %d with %d bytes, want 200 with its stored body", ex.URL, ex.Status, len(ex.Body))
		}
	}
	if !strings.Contains(rep.String(), "4 304 responses whose body the recording browser stored kept as 200") {
		t.Errorf("report:\n%s", rep)
	}
	// A page whose only answered GET is an image is not taken silently.
	h.Log.Entries = h.Log.Entries[1:2]
	if _, _, err := importHAR(context.Background(), h, Options{}); err == nil || !strings.Contains(err.Error(), "not an HTML page: name the page with --document URL") {
		t.Errorf("a page whose document would be a PNG: %v", err)
	}
}

// A HAR of the shape TracerBench writes: every startedDateTime empty and
// each method only in the :method pseudo-header. It imports, taking the
// methods from the pseudo-headers, and says so.
func TestTracerBenchHARImports(t *testing.T) {
	doc := `{"log":{"version":"1.2","creator":{"name":"TracerBench"},"pages":[],"entries":[
	{"startedDateTime":"","request":{"method":"","url":"https://www.bench.test/","headers":[{"name":":method","value":"GET"},{"name":":path","value":"/"}]},
	 "response":{"status":200,"headers":[{"name":"content-type","value":"text/html"}],"content":{"size":30,"mimeType":"text/html","text":"<html><img src=/a.png></html>"}}},
	{"startedDateTime":"","request":{"method":"","url":"https://www.bench.test/a.png","headers":[{"name":":method","value":"GET"}]},
	 "response":{"status":200,"headers":[{"name":"content-type","value":"image/png"}],"content":{"size":3,"mimeType":"image/png","text":"UE5H","encoding":"base64"}}}]}}`
	h, err := har.Parse([]byte(doc))
	if err != nil {
		t.Fatalf("a TracerBench HAR: %v", err)
	}
	a, rep, err := importHAR(context.Background(), h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Document != "https://www.bench.test/" || len(a.Exchanges) != 2 || rep.PseudoMethods != 2 || a.Exchanges[0].Method != "GET" {
		t.Errorf("document %s, %d exchanges, report %+v", a.Document, len(a.Exchanges), rep)
	}
	if !strings.Contains(rep.String(), "2 entries without a method but for the :method pseudo-header took it from there") {
		t.Errorf("report:\n%s", rep)
	}
}

// TracerBench's own fixture has an entry with no method at all, not even
// in a pseudo-header, and one empty header, yet a whole response (issue
// 77): it was refused ("method \"\" is not an HTTP method"); it imports as
// the GET it was, and the import says so.
func TestAnEntryWithNoMethodImportsAsGET(t *testing.T) {
	doc := `{"log":{"version":"1.2","creator":{"name":"TracerBench"},"pages":[],"entries":[
	{"startedDateTime":"","request":{"method":"","url":"https://www.bench.test/","headers":[{"name":":method","value":"GET"}]},
	 "response":{"status":200,"headers":[{"name":"content-type","value":"text/html"}],"content":{"size":47,"mimeType":"text/html","text":"<html><link rel=stylesheet href=/a.css></html>"}}},
	{"startedDateTime":"","request":{"method":"","url":"https://www.bench.test/a.css","headers":[{"name":"","value":""}]},
	 "response":{"status":200,"headers":[{"name":"content-type","value":"text/css"}],"content":{"size":8,"mimeType":"text/css","text":"p{top:0}"}}}]}}`
	h, err := har.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	a, rep, err := importHAR(context.Background(), h, Options{})
	if err != nil {
		t.Fatalf("an entry with no method: %v", err)
	}
	if len(a.Exchanges) != 2 || a.Exchanges[1].Method != "GET" || rep.NoMethods != 1 ||
		!strings.Contains(rep.String(), "1 entries with no method at all but a whole response imported as GET") {
		t.Errorf("%d exchanges, report:\n%s", len(a.Exchanges), rep)
	}
}

// HARs as browsers write them (issue 77): Firefox writes a response it
// served from its cache with status 0 but its header fields and body
// (filamentgroup.com's shape), and an image without its body and size
// (mitmproxy.org's); httpVersion may be empty, "h3" or "unknown". The
// cached response imports as the 200 it was; the bodiless image is kept
// empty; both are counted; a status 0 without a body is still no response.
func TestHARShapesBrowsersWrite(t *testing.T) {
	doc := `{"log":{"version":"1.2","creator":{"name":"Firefox"},"pages":[],"entries":[
	{"startedDateTime":"2023-03-29T23:58:59Z","request":{"method":"GET","url":"https://www.fg.test/","headers":[]},
	 "response":{"status":200,"httpVersion":"h3","headers":[{"name":"content-type","value":"text/html"}],"content":{"size":47,"mimeType":"text/html","text":"<html><link rel=stylesheet href=/a.css></html>"}}},
	{"startedDateTime":"2023-03-29T23:58:59Z","request":{"method":"GET","url":"https://www.fg.test/a.css","headers":[]},
	 "response":{"status":0,"statusText":"","httpVersion":"","headers":[{"name":"Content-Type","value":"text/css"}],"content":{"size":8,"mimeType":"text/css","text":"p{top:0}"}}},
	{"startedDateTime":"2023-03-29T23:58:59Z","request":{"method":"GET","url":"https://www.fg.test/logo.png","headers":[]},
	 "response":{"status":200,"httpVersion":"unknown","headers":[{"name":"Content-Type","value":"image/png"}],"content":{"mimeType":"image/png"}}},
	{"startedDateTime":"2023-03-29T23:58:59Z","request":{"method":"GET","url":"https://www.fg.test/blocked.js","headers":[]},
	 "response":{"status":0,"httpVersion":"","headers":[],"content":{"size":0,"mimeType":""}}}]}}`
	h, err := har.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	a, rep, err := importHAR(context.Background(), h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	statuses := map[string]int{}
	for _, ex := range a.Exchanges {
		statuses[ex.URL] = ex.Status
	}
	if statuses["https://www.fg.test/a.css"] != 200 || statuses["https://www.fg.test/logo.png"] != 200 || len(a.Exchanges) != 3 {
		t.Errorf("exchanges %v, want the cached CSS and the bodiless image as 200s, the blocked script left out", statuses)
	}
	if rep.NoStatus != 1 || rep.BodilessImages != 1 || rep.NoResponse != 1 ||
		!strings.Contains(rep.String(), "1 responses of status 0 with their header fields and body") || !strings.Contains(rep.String(), "1 images without their body") {
		t.Errorf("report %+v:\n%s", rep, rep)
	}
}

// A HAR of a page over plain http (harviewer's Firefox HAR's shape): the
// error names --upgrade-http, the fix, not another page.
func TestPlainHTTPDocumentSaysUpgrade(t *testing.T) {
	h := &har.HAR{Log: har.Log{Version: "1.2", Pages: []har.Page{{ID: "p"}}, Entries: []har.Entry{
		harEntry("p", "http://www.viewer.test/page.html", 200, text("<html></html>")),
	}}}
	_, _, err := importHAR(context.Background(), h, Options{})
	if err == nil || !strings.Contains(err.Error(), "import again with --upgrade-http") || strings.Contains(err.Error(), "name another page") {
		t.Errorf("a page over plain http: %v", err)
	}
	if a, _, err := importHAR(context.Background(), h, Options{UpgradeHTTP: true}); err != nil || a.Document != "https://www.viewer.test/page.html" {
		t.Errorf("with --upgrade-http: %v", err)
	}
}

// A recording of a www. host that sent the phone to m. (aliexpress's and
// yelp's shape), with no page named: the import picks the m. page and
// starts the replay at the www. URL the recorded load began with, through
// a second hop, so the load pays both redirects.
func TestRedirectChainIsReplayedFirst(t *testing.T) {
	empty := ""
	h := &har.HAR{Log: har.Log{Version: "1.2", Entries: []har.Entry{
		harEntry("", "https://shop.test/", 301, &empty, "Location", "https://www.shop.test/"),
		harEntry("", "https://www.shop.test/", 302, &empty, "Location", "//m.shop.test/?from=www"),
		harEntry("", "https://m.shop.test/?from=www", 200, text("<html>m</html>"), "Content-Type", "text/html"),
		harEntry("", "https://m.shop.test/a.css", 200, text("a{}"), "Content-Type", "text/css"),
	}}}
	h.Log.Entries[3].Response.Content.MimeType = "text/css"
	a, rep, err := importHAR(context.Background(), h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Document != "https://shop.test/" || rep.Redirects != 2 || !strings.Contains(rep.String(), `2 recorded redirects replayed before the document`) {
		t.Errorf("document %s, report %+v:\n%s", a.Document, rep, rep)
	}
	// --document names the page as given: no chain.
	if a, _, err := importHAR(context.Background(), h, Options{Document: "https://m.shop.test/?from=www"}); err != nil || a.Document != "https://m.shop.test/?from=www" {
		t.Errorf("--document: %v, %v", a, err)
	}
}

// screenHAR is a phone's recording (a Pixel 2's User-Agent, 2.625 px per
// CSS px) of a page that offers two images in srcsets and a background in
// a stylesheet's image-set, each at the densities offered, of which it
// holds the fetched ones.
func screenHAR(offered string, fetched ...string) *har.HAR {
	page := `<html><link rel=stylesheet href="/s.css"><img srcset="/a.png 1x, /a@2x.png 2x` + offered + `"><img src="/b.png" srcset='/b@2x.png 2x, /b@3x.png 3x'></html>`
	css := `div{background-image:image-set(url("/c.png") 1x, url("/c@2x.png") 2x)}`
	h := &har.HAR{Log: har.Log{Version: "1.2", Entries: []har.Entry{
		harEntry("", "https://www.yelp.test/", 200, text(page), "Content-Type", "text/html"),
		harEntry("", "https://www.yelp.test/s.css", 200, text(css), "Content-Type", "text/css"),
	}}}
	h.Log.Entries[1].Response.Content.MimeType = "text/css"
	for _, f := range fetched {
		e := harEntry("", "https://www.yelp.test/"+f, 200, text("PNG"), "Content-Type", "image/png")
		e.Response.Content.MimeType = "image/png"
		h.Log.Entries = append(h.Log.Entries, e)
	}
	for i := range h.Log.Entries {
		h.Log.Entries[i].Request.Headers = []har.NameValue{{Name: "User-Agent", Value: "Mozilla/5.0 (Linux; Android 8.0.0; Pixel 2) Mobile Safari/537.36"}}
	}
	return h
}

// TestWidthDescribedImagesDecideTheScreen: srcsets of widths (320w, 640w)
// say the screen through the slot their sizes give at the viewport's
// width (100vw without sizes; a lazy loader's data-srcset and data-sizes
// alike): a phone's recording that fetched what a 1x screen fetches
// replays at 1x, one that fetched what 2.625 fetches keeps the
// User-Agent's; a sizes with a media condition needs the layout and says
// nothing.
func TestWidthDescribedImagesDecideTheScreen(t *testing.T) {
	page := `<html><img srcset="/w320.png 320w, /w640.png 640w, /w1080.png 1080w" alt=x>
<div class=lazyload data-sizes="50vw" data-srcset='/h200.png 200w, /h400.png 400w, /h600.png 600w'></div>
<img sizes="(min-width: 600px) 50vw, 100vw" srcset="/m1.png 100w, /m2.png 2000w"></html>`
	har := func(fetched ...string) *har.HAR {
		h := screenHAR("")
		h.Log.Entries = h.Log.Entries[:1]
		h.Log.Entries[0].Response.Content.Text = &page
		ua := h.Log.Entries[0].Request.Headers
		for _, f := range append(fetched, "m1.png") {
			e := harEntry("", "https://www.yelp.test/"+f, 200, text("PNG"), "Content-Type", "image/png")
			e.Response.Content.MimeType, e.Request.Headers = "image/png", ua
			h.Log.Entries = append(h.Log.Entries, e)
		}
		return h
	}
	a, _, err := importHAR(context.Background(), har("w640.png", "h400.png"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Viewport.Scale != 1 || !strings.Contains(a.ViewportSource, "2 of its 2 image choices at several densities fetched what a 1x screen fetches") {
		t.Errorf("fetched what 1x fetches: viewport %v, source %q", a.Viewport, a.ViewportSource)
	}
	a, _, _ = importHAR(context.Background(), har("w1080.png", "h600.png"), Options{})
	if a.Viewport.Scale != 2.625 || !strings.Contains(a.ViewportSource, "as 2 of the recording's 2 image choices") {
		t.Errorf("fetched what 2.625 fetches: viewport %v, source %q", a.Viewport, a.ViewportSource)
	}
	if w, ok := slotWidth("(min-width: 600px) 50vw, 100vw", 411); ok {
		t.Errorf("a media condition read as %g px", w)
	}
	for sizes, want := range map[string]float64{"": 411, "50vw": 205.5, " 120px ": 120} {
		if w, ok := slotWidth(sizes, 411); !ok || math.Abs(w-want) > 1e-9 {
			t.Errorf("sizes %q: %g, %v; want %g", sizes, w, ok, want)
		}
	}
}

// TestTheRecordingsImagesDecideTheScreen: a phone's recording whose own
// requests fetched the 1x candidates (yelp's shape: emulated at 1x, an
// img's src the 1x of its srcset of 2x) replays at 1x, and the archive
// says why; one that fetched the 3x candidate a 2.625 screen fetches keeps
// the User-Agent's screen, confirmed; a single choice the User-Agent's
// screen picks decides nothing, one it cannot pick decides; --viewport
// wins over all.
func TestTheRecordingsImagesDecideTheScreen(t *testing.T) {
	a, _, err := importHAR(context.Background(), screenHAR("", "a.png", "b.png", "c.png"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Viewport != (factor.Viewport{Width: 411, Height: 731, Scale: 1, Mobile: true}) || !strings.Contains(a.ViewportSource, "the recording's requests: 3 of its 3 image choices") {
		t.Errorf("fetched the 1x candidates: viewport %v, source %q", a.Viewport, a.ViewportSource)
	}
	a, _, _ = importHAR(context.Background(), screenHAR(", /a@3x.png 3x", "a@3x.png", "b@3x.png", "c@2x.png"), Options{})
	if a.Viewport.Scale != 2.625 || !strings.Contains(a.ViewportSource, "the User-Agent: Pixel 2, as 3 of the recording's 3 image choices") {
		t.Errorf("fetched what 2.625 fetches: viewport %v, source %q", a.Viewport, a.ViewportSource)
	}
	a, _, _ = importHAR(context.Background(), screenHAR(", /a@3x.png 3x", "a@3x.png"), Options{})
	if a.Viewport.Scale != 2.625 || a.ViewportSource != "the User-Agent: Pixel 2" {
		t.Errorf("one choice the User-Agent's screen picks: viewport %v, source %q", a.Viewport, a.ViewportSource)
	}
	a, _, _ = importHAR(context.Background(), screenHAR("", "a.png"), Options{})
	if a.Viewport.Scale != 1 || !strings.Contains(a.ViewportSource, "1 of its 1 image choices") {
		t.Errorf("one choice the User-Agent's screen cannot pick (netflix's shape): viewport %v, source %q", a.Viewport, a.ViewportSource)
	}
	desk := factor.DefaultViewport()
	a, _, _ = importHAR(context.Background(), screenHAR("", "a.png", "b.png", "c.png"), Options{Viewport: desk, SetViewport: true})
	if a.Viewport != desk || a.ViewportSource != "--viewport" {
		t.Errorf("--viewport: %v, %q", a.Viewport, a.ViewportSource)
	}
	dir := t.TempDir()
	a, _, _ = importHAR(context.Background(), screenHAR("", "a.png", "b.png", "c.png"), Options{})
	if err := site.WriteArchive(context.Background(), dir, a); err != nil {
		t.Fatal(err)
	}
	back, err := site.ReadArchive(dir)
	if err != nil || back.ViewportSource != a.ViewportSource || back.Viewport != a.Viewport {
		t.Errorf("read back: %v, %q, %v", err, back.ViewportSource, back.Viewport)
	}
}

// TestResolutionMediaQueriesDecideTheScreen: CSS that gives an element its
// _2x image behind a resolution media query (apple's shape: min-resolution
// 1.5dppx, 144dpi, -webkit-min-device-pixel-ratio 1.5) beside the plain
// one says the screen by which of the two the recording fetched; an image
// behind a width query alone, or one whose sibling it did not fetch either,
// says nothing.
func TestResolutionMediaQueriesDecideTheScreen(t *testing.T) {
	css := `.a{background:url("/i/hero_small.jpg")}
@media only screen and (max-width: 734px) and (-webkit-min-device-pixel-ratio: 1.5), only screen and (min-resolution: 144dpi){.a{background-image:url("/i/hero_small_2x.jpg")}}
.b{background:url(/i/logo.png)}@media (min-resolution:2dppx){.b{background:url('/i/logo@2x.png')} .c{color:red}}
@media (max-width: 734px){.d{background:url(/i/d.png)}}
.e{background:url(/i/e.png)}@media (min-resolution:2x){.e{background:url(/i/e@2x.png)}}`
	h := func(fetched ...string) *har.HAR {
		h := screenHAR("")
		h.Log.Entries[1].Response.Content.Text = &css
		for _, f := range fetched {
			e := harEntry("", "https://www.yelp.test/i/"+f, 200, text("IMG"), "Content-Type", "image/png")
			e.Response.Content.MimeType, e.Request.Headers = "image/png", h.Log.Entries[0].Request.Headers
			h.Log.Entries = append(h.Log.Entries, e)
		}
		return h
	}
	a, _, err := importHAR(context.Background(), h("hero_small.jpg", "logo.png", "d.png"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Viewport.Scale != 1 || !strings.Contains(a.ViewportSource, "2 of its 2 image choices") {
		t.Errorf("fetched the plain images: viewport %v, source %q", a.Viewport, a.ViewportSource)
	}
	a, _, _ = importHAR(context.Background(), h("hero_small_2x.jpg", "logo@2x.png", "e@2x.png"), Options{})
	if a.Viewport.Scale != 2.625 || !strings.Contains(a.ViewportSource, "as 3 of the recording's 3 image choices") {
		t.Errorf("fetched the dense images: viewport %v, source %q", a.Viewport, a.ViewportSource)
	}
	for prelude, want := range map[string]float64{
		" (min-resolution: 144dpi), (-webkit-min-device-pixel-ratio: 1.5)": 1.5,
		" (min--moz-device-pixel-ratio: 2)":                                2,
		" (min-resolution: 2dppx) and (max-width: 600px)":                  2,
		" (min-resolution: 118.11dpcm)":                                    118.11 * 2.54 / 96,
	} {
		if got, ok := resolutionThreshold(prelude); !ok || math.Abs(got-want) > 1e-9 {
			t.Errorf("%q: %g, %v; want %g", prelude, got, ok, want)
		}
	}
	if _, ok := resolutionThreshold(" (max-width: 734px)"); ok {
		t.Error("a width query read as a resolution")
	}
}
