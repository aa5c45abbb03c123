package imports

import (
	"context"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/har"
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
