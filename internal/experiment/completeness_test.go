package experiment

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/site"
)

// recordedSite is a recording of a page with a manifest link, a good
// image, an image whose recorded body is HTML, an image at one size
// (480x270) on a second host and a document beside it.
func recordedSite(t *testing.T) *site.Site {
	t.Helper()
	png := site.ArchiveOf(mustSynthetic(t), "test").Exchanges[1]
	html := []site.Field{{Name: "content-type", Value: "text/html"}}
	doc := `<!doctype html><html><head><link rel="manifest" href="/app.webmanifest?v=3"><link rel=stylesheet href=/s.css></head><body></body></html>`
	a := &site.Archive{Source: "test", Document: "https://www.news.test/", Exchanges: []*site.Exchange{
		{Method: "GET", URL: "https://www.news.test/", Status: 200, Header: html, Body: []byte(doc)},
		{Method: "GET", URL: "https://www.news.test/good.png", Status: 200, Header: png.Header, Body: png.Body},
		{Method: "GET", URL: "https://www.news.test/pixel.png", Status: 200, Header: html, Body: []byte("<html>gone</html>")},
		{Method: "GET", URL: "https://img.news.test/ic/480x270/p1.jpg", Status: 200, Header: png.Header, Body: png.Body},
		{Method: "GET", URL: "https://img.news.test/ic/480x270/story.html", Status: 200, Header: html, Body: []byte("<p>story</p>")},
	}}
	s, err := a.Site()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// loadWith is a verified load of 40 requests with these unmatched.
func loadWith(unmatched ...string) *Measured {
	return &Measured{Replay: server.Replay{Exact: 40 - int64(len(unmatched)), Unmatched: int64(len(unmatched)), UnmatchedRequests: unmatched}}
}

func TestReplayCheckTolerance(t *testing.T) {
	c := newReplayCheck(recordedSite(t), 0.05)
	// The browser's own requests never count; two others are 5 %.
	m := loadWith("GET https://www.news.test/favicon.ico", "GET https://www.news.test/app.webmanifest?v=3",
		"GET https://www.news.test/beacon?t=1", "GET https://ads.news.test/x.js")
	got := c.judge(m)
	if !m.OK() || got.BrowserOwn != 2 || got.Counted != 2 || got.Steady != 0 {
		t.Fatalf("first load: %+v, failure %q", got, m.Failure)
	}
	// A third unmatched request is 7.5 %: above the tolerance, but the
	// beacon's directory was unmatched before, so only two count.
	m = loadWith("GET https://www.news.test/beacon?t=2", "GET https://www.news.test/js/a.js", "GET https://www.news.test/js/b.js")
	if got = c.judge(m); !m.OK() || got.Steady != 1 || got.Counted != 2 {
		t.Fatalf("second load: %+v, failure %q", got, m.Failure)
	}
	// The beacon is still steady, and so is the ads script, though the
	// second load did not ask for it: the recording lacks it still. Three
	// new ones count, 7.5 %, and the load fails.
	m = loadWith("GET https://www.news.test/beacon?t=3", "GET https://ads.news.test/x.js", "GET https://www.news.test/css/c.css",
		"GET https://www.news.test/img/d.png", "GET https://www.news.test/fonts/e.woff")
	if got = c.judge(m); m.OK() || got.Steady != 2 || got.Counted != 3 || !strings.Contains(m.Failure, "3 of 40 requests matched nothing in the recording (7.5 %, above the 5 % allowed") ||
		!strings.HasSuffix(m.Failure, "e.g. GET https://www.news.test/css/c.css") {
		t.Fatalf("third load: %+v, failure %q", got, m.Failure)
	}
}

func TestReplayCheckGeneratedPagesAreStrict(t *testing.T) {
	c := newReplayCheck(mustSynthetic(t), 0.05)
	m := loadWith("GET https://www.news.test/favicon.ico")
	if c.judge(m); m.OK() || !strings.Contains(m.Failure, "matched nothing in the site") {
		t.Errorf("a generated page's unmatched favicon: failure %q", m.Failure)
	}
	if c.excuseImage("https://www.news.test/gone.png") {
		t.Error("a generated page excused a broken image")
	}
}

func TestReplayCheckBrokenImages(t *testing.T) {
	c := newReplayCheck(recordedSite(t), 0.05)
	for u, want := range map[string]bool{
		"https://www.news.test/good.png":   false, // the recording has it: the load broke it
		"https://www.news.test/pixel.png":  true,  // recorded, but no image
		"https://www.news.test/gone.png":   true,  // not recorded
		"https://cdn.elsewhere.test/x.png": true,  // host not recorded
	} {
		if got := c.excuseImage(u); got != want {
			t.Errorf("excuseImage(%s) = %v, want %v", u, got, want)
		}
	}
	m := loadWith()
	m.Result = client.Result{PageMetrics: client.PageMetrics{BrokenImages: 3,
		BrokenImageURLs: []string{"https://www.news.test/pixel.png", "https://www.news.test/gone.png", "https://cdn.elsewhere.test/x.png"}}}
	got := c.judge(m)
	if got.BrokenRecorded != 1 || got.BrokenUnserved != 2 || !m.OK() {
		t.Errorf("broken images: %+v, failure %q", got, m.Failure)
	}
	if want := []string{results.BrokenNoImage, results.BrokenUnrecorded, results.BrokenUnrecorded}; !slices.Equal(got.BrokenCauses, want) || !slices.Equal(got.BrokenURLs, m.BrokenImageURLs) {
		t.Errorf("broken images %q with causes %q, want the load's with %q", got.BrokenURLs, got.BrokenCauses, want)
	}
	m = loadWith()
	m.Result = client.Result{PageMetrics: client.PageMetrics{BrokenImages: 1, BrokenImageURLs: []string{"https://www.news.test/good.png"}}}
	if got := c.judge(m); !slices.Equal(got.BrokenCauses, []string{results.BrokenHeld}) {
		t.Errorf("a broken image the recording holds: causes %q", got.BrokenCauses)
	}
}

// TestReplayCheckSiblingsAreNeverExcused: an image at another size is
// served its recorded variant (the servers never call it unmatched), so
// its breaking fails the load; an unmatched request whose recording holds
// a sibling (the same file beside another size) counts against the
// tolerance in every load, and never makes its directory steady.
func TestReplayCheckSiblingsAreNeverExcused(t *testing.T) {
	c := newReplayCheck(recordedSite(t), 0.05)
	if c.excuseImage("https://img.news.test/ic/960x540/p1.jpg") {
		t.Error("a broken image the recording holds at another size was excused")
	}
	if !c.excuseImage("https://img.news.test/ic/960x540/p2.jpg") {
		t.Error("a broken image the recording lacks at every size was not excused")
	}
	sibling := "GET https://img.news.test/ic/960x540/story.html?x=1"
	c.learn(loadWith(sibling))
	m := loadWith(sibling, "GET https://img.news.test/ic/960x540/other.html", sibling)
	got := c.judge(m)
	if got.Sibling != 2 || got.Steady != 0 || got.Counted != 3 || m.OK() {
		t.Errorf("unmatched with a sibling: %+v, failure %q", got, m.Failure)
	}
	m = loadWith("GET https://img.news.test/ic/960x540/other.html")
	if got := c.judge(m); got.Steady != 1 || got.Counted != 0 || !m.OK() {
		t.Errorf("unmatched without a sibling, unmatched before: %+v, failure %q", got, m.Failure)
	}
}

// TestEachUnmatchedRequestCarriesItsCause: every listed unmatched request
// gets its cause, in order, and the causes add up to the counts.
func TestEachUnmatchedRequestCarriesItsCause(t *testing.T) {
	c := newReplayCheck(recordedSite(t), 0.5)
	c.learn(loadWith("GET https://www.news.test/beacon?t=1"))
	m := loadWith("GET https://www.news.test/favicon.ico", "GET https://www.news.test/webhp?rct=j", "GET https://www.news.test/beacon?t=2",
		"GET https://img.news.test/ic/960x540/p1.jpg", "GET https://cdn.news.test/lib/new.js")
	m.Replay.HeldNavigations = []string{"GET https://www.news.test/webhp?rct=j"}
	got := c.judge(m)
	want := []string{results.CauseBrowserOwn, results.CauseNavigation, results.CauseSteady, results.CauseSibling, results.CauseUnrecorded}
	if !slices.Equal(got.Causes, want) || got.BrowserOwn != 1 || got.Held != 1 || got.Steady != 1 || got.Sibling != 1 || got.Counted != 2 {
		t.Errorf("causes %q, counts %+v: want %q", got.Causes, got, want)
	}
}

// TestAHeldNavigationIsNotCounted: a page whose script sends the tab to a
// page the recording lacks stayed (the browser held the navigation): the held
// navigation does not count, even on a page whose tolerance is 0, and the
// same URL requested by the page (not the tab) still does.
func TestAHeldNavigationIsNotCounted(t *testing.T) {
	c := newReplayCheck(recordedSite(t), 0)
	nav := "GET https://www.news.test/webhp?ie=UTF-8&rct=j"
	m := loadWith(nav)
	m.Replay.HeldNavigations = []string{nav}
	if got := c.judge(m); got.Held != 1 || got.Counted != 0 || !m.OK() {
		t.Errorf("a held navigation: %+v, failure %q", got, m.Failure)
	}
	m = loadWith(nav, nav)
	m.Replay.HeldNavigations = []string{nav}
	if got := c.judge(m); got.Held != 1 || got.Counted != 1 || m.OK() {
		t.Errorf("a held navigation and a fetch of its URL: %+v, failure %q; want one held and one counted, failing", got, m.Failure)
	}
}

// TestReplayCheckBeaconsInPaths: a retail page's beacons carry their
// counters in the path, and each load sends as many as its timing allows;
// a directory unmatched in an earlier load (the priming one included) is
// steady however many go there, and a request the priming load lacked
// stays steady through a load that did not ask for it.
func TestReplayCheckBeaconsInPaths(t *testing.T) {
	c := newReplayCheck(recordedSite(t), 0)
	beacons := func(from, n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("GET https://fls.news.test/1/batch/OP:137:uedata=at%%26v%%3D0.%d:0", from+i))
		}
		return out
	}
	if !c.needsPriming() {
		t.Fatal("a recorded page's first load needs no priming")
	}
	c.learn(loadWith(append(beacons(0, 2), "GET https://www.news.test/late.js")...))
	if c.needsPriming() {
		t.Fatal("still priming after a priming load")
	}
	m := loadWith(beacons(10, 5)...)
	if got := c.judge(m); got.Steady != 5 || got.Counted != 0 || !m.OK() {
		t.Fatalf("first load: %+v %q", got, m.Failure)
	}
	m = loadWith(append(beacons(20, 3), "GET https://fls.news.test/2/other", "GET https://www.news.test/late.js")...)
	if got := c.judge(m); got.Steady != 4 || got.Counted != 1 || !strings.Contains(m.Failure, "1 of 40 requests") {
		t.Fatalf("second load: %+v, %q", got, m.Failure)
	}
	if newReplayCheck(mustSynthetic(t), 0).needsPriming() {
		t.Error("a generated page needs priming")
	}
}

// TestReplayCheckLoadWork: the work up to the load event counts the
// resources started by loadEventStart, not later ones nor the browser's
// own (the manifest the document links, with its query); a recorded
// page's bytes are the bodies the servers send for them, whatever the
// browser's transfer sizes say (0 for a cross-origin response without
// Timing-Allow-Origin, as bankofamerica's every load), 0 for one they do
// not hold; a generated page's are the browser's transfer sizes.
func TestReplayCheckLoadWork(t *testing.T) {
	s := recordedSite(t)
	c := newReplayCheck(s, 0.05)
	m := loadWith()
	m.OnLoadMs = 100
	m.Resources = []client.ResourceTiming{
		{URL: "https://www.news.test/good.png", StartMs: 10, TransferBytes: 1000},
		{URL: "https://img.news.test/ic/480x270/story.html", StartMs: 20, TransferBytes: 0},
		{URL: "https://www.news.test/s.css", StartMs: 100, TransferBytes: 300},
		{URL: "https://www.news.test/app.webmanifest?v=3", StartMs: 50, TransferBytes: 200},
		{URL: "https://www.news.test/beacon?t=1", StartMs: 101, TransferBytes: 50},
	}
	png, _ := site.NewMatcher(s).Match("www.news.test", "GET", "/good.png", "")
	want := int64(len(png.Body) + len("<p>story</p>"))
	if got := c.judge(m); got.LoadRequests != 3 || got.LoadBytes != want {
		t.Errorf("work up to the load: %d requests, %d bytes; want 3 and %d, the bodies served", got.LoadRequests, got.LoadBytes, want)
	}
	generated := newReplayCheck(mustSynthetic(t), 0)
	if requests, bytes := generated.loadWork(m.Result); requests != 4 || bytes != 1500 {
		t.Errorf("a generated page's work: %d requests, %d bytes; want 4 and the transfer sizes' 1500 (it has no manifest of its own)", requests, bytes)
	}
}
