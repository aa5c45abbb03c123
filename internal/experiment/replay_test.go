package experiment

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/chromium"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/firefox"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/site/gen"
	"github.com/quicbench/quicbench/internal/site/imports"
	"github.com/quicbench/quicbench/internal/site/sitetest"
	"github.com/quicbench/quicbench/internal/testenv"
)

// writeArchiveOf saves generated page number n as a site archive, less the
// resources drop picks, and returns its directory and request count.
// writeTestArchive writes a into a new directory name of the test's
// temporary directory and returns it.
func writeTestArchive(t *testing.T, name string, a *site.Archive) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := site.WriteArchive(context.Background(), dir, a); err != nil {
		t.Fatal(err)
	}
	return dir
}

// oneLoadSpec is a spec of one h2 load of each archive in dirs by each of
// clients ("chromium, firefox"), behind 10 ms, without netcheck.
func oneLoadSpec(clients string, dirs ...string) string {
	var pages []string
	for _, d := range dirs {
		pages = append(pages, fmt.Sprintf("%q", "archive:"+d))
	}
	return fmt.Sprintf(`repetitions: 1
retries: 0
netcheck: false
factors:
  networks: [{name: fast, rtt: 10ms}]
  pages: [%s]
  protocols: [h2]
  clients: [%s]
`, strings.Join(pages, ", "), clients)
}

func writeArchiveOf(t *testing.T, n int, drop func(*site.Exchange) bool) (string, int) {
	t.Helper()
	s, err := gen.Web2024(factor.Page{Kind: factor.PageWeb2024, Number: n, CorpusSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	a := site.ArchiveOf(s, "test")
	a.Exchanges = slices.DeleteFunc(a.Exchanges, drop)
	dir := filepath.Join(t.TempDir(), fmt.Sprintf("web2024-%d", n))
	if err := site.WriteArchive(context.Background(), dir, a); err != nil {
		t.Fatal(err)
	}
	return dir, len(a.Exchanges)
}

// TestReplayArchive replays a recording of 113 requests on 7 origins in
// Chromium over h1, h2 and h3: every request matched, every one served
// over the requested protocol, every origin used.
func TestReplayArchive(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "apt-get install chromium")
	dir, n := writeArchiveOf(t, 18, func(*site.Exchange) bool { return false })
	page, err := gen.Web2024(factor.Page{Kind: factor.PageWeb2024, Number: 18, CorpusSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	late := len(page.Late)
	t.Logf("the recording holds %d requests, %d of them late fetches", n, late)
	res, store, _ := runSpec(t, fmt.Sprintf(`repetitions: 1
retries: 0
netcheck: false
factors:
  networks: [{name: fast, rtt: 20ms, down: 50mbit, up: 10mbit}]
  pages: ["archive:%s"]
  protocols: [h1, h2, h3]
`, dir))
	if res.Done != 3 {
		t.Fatalf("result %+v", res)
	}
	for _, tr := range trialsOf(t, store) {
		if tr.Status != results.StatusOK {
			t.Errorf("%s: %s", tr.Protocol, tr.Error)
			continue
		}
		hosts := map[string]bool{}
		for _, r := range tr.resources {
			hosts[strings.Split(strings.TrimPrefix(r.URL, "https://"), "/")[0]] = true
		}
		// Every recorded request but the late fetches, which may come
		// after the servers' counts are read; all over the requested
		// protocol, or the trial would have failed.
		if tr.UnmatchedRequests != 0 || tr.ServerRequests < int64(n-late) || len(hosts) != 7 || tr.PageKind != factor.PageArchive {
			t.Errorf("%s: %d unmatched, %d of %d requests served (%d late), hosts %v, kind %s", tr.Protocol, tr.UnmatchedRequests, tr.ServerRequests, n, late, hosts, tr.PageKind)
		}
		// The servers' replay counts are the requests they served, all
		// exact (the recording is the site), and bodies were sent. The
		// counts and the replay are read one after the other: a late
		// fetch answered between the two reads is in the second only.
		if tr.ReplayExact < tr.ServerRequests || tr.ReplayExact > tr.ServerRequests+int64(late) || tr.ReplayFuzzy != 0 ||
			tr.ServedBytes < 10_000 || tr.ServedBytes > tr.PageBytes {
			t.Errorf("%s: %d exact, %d fuzzy of %d served; %d of %d bytes", tr.Protocol, tr.ReplayExact, tr.ReplayFuzzy, tr.ServerRequests, tr.ServedBytes, tr.PageBytes)
		}
		// The work up to the load event: the page's resources the browser
		// started by then, never more than it lists.
		if tr.LoadRequests < int64(n)/2 || tr.LoadRequests > int64(len(tr.resources)) || tr.LoadBytes <= 0 {
			t.Errorf("%s: %d requests (%d bytes) up to the load of %d resources listed", tr.Protocol, tr.LoadRequests, tr.LoadBytes, len(tr.resources))
		}
	}
}

// TestReplayFlagsUnmatchedRequests: a recording that lacks what the page
// asks for in every load (its style sheets) is replayed with the requests
// counted and named, and the load verified: the priming load lacked them
// too, so they are steady, whatever the tolerance (replayCheck's unit
// tests check the tolerance itself).
func TestReplayFlagsUnmatchedRequests(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "apt-get install chromium")
	dir, n := writeArchiveOf(t, 12, func(ex *site.Exchange) bool { return strings.Contains(ex.URL, "/css/") })
	res, store, _ := runSpec(t, fmt.Sprintf(`repetitions: 1
retries: 0
netcheck: false
replay: {max_unmatched: 0%%}
factors:
  networks: [{name: fast, rtt: 10ms}]
  pages: ["archive:%s"]
  protocols: [h2]
`, dir))
	if res.Done != 1 {
		t.Fatalf("result %+v", res)
	}
	tr := trialsOf(t, store)[0]
	if tr.UnmatchedRequests == 0 || len(tr.UnmatchedURLs) != int(tr.UnmatchedRequests) || !strings.Contains(tr.UnmatchedURLs[0], "/css/") ||
		tr.ReplayExact < int64(n)-5 || tr.SteadyUnmatched != tr.UnmatchedRequests || tr.Status != results.StatusOK {
		t.Errorf("%s (%s): %d unmatched %v, %d steady, %d exact of %d", tr.Status, tr.Error, tr.UnmatchedRequests, tr.UnmatchedURLs, tr.SteadyUnmatched, tr.ReplayExact, n)
	}
}

// TestReplayImportedRecordings: a recording in each format quicbench
// imports (Mahimahi, HAR, WebPageReplay) of a page of 15 requests on 3
// origins replays in Chromium with every request matched.
func TestReplayImportedRecordings(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "apt-get install chromium")
	s, err := gen.Web2024(factor.Page{Kind: factor.PageWeb2024, Number: 12, CorpusSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	src := site.ArchiveOf(s, "test")
	dir := t.TempDir()
	var archives []string
	for name, write := range map[string]func(string) error{
		"mahimahi": func(p string) error { return sitetest.WriteMahimahi(p, src, false, true) },
		"har":      func(p string) error { return sitetest.WriteHAR(p, src) },
		"wpr":      func(p string) error { return sitetest.WriteWPR(p, src) },
	} {
		recording, archive := filepath.Join(dir, name+".recording"), filepath.Join(dir, name)
		if err := write(recording); err != nil {
			t.Fatal(err)
		}
		read := map[string]func(context.Context, string, imports.Options) (*site.Archive, imports.Report, error){
			"mahimahi": imports.Mahimahi, "har": imports.HAR, "wpr": imports.WPR}[name]
		a, _, err := read(context.Background(), recording, imports.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := site.WriteArchive(context.Background(), archive, a); err != nil {
			t.Fatal(err)
		}
		archives = append(archives, archive)
	}
	res, store, _ := runSpec(t, oneLoadSpec("chromium", archives...))
	if res.Done != 3 {
		t.Fatalf("result %+v", res)
	}
	for _, tr := range trialsOf(t, store) {
		if tr.Status != results.StatusOK || tr.UnmatchedRequests != 0 || tr.ServerRequests < 14 {
			t.Errorf("%s: %s, %d unmatched, %d requests served", tr.Page, tr.Error, tr.UnmatchedRequests, tr.ServerRequests)
		}
	}
}

// TestDeterministicPages: a recorded page whose script requests a URL
// made of Math.random() and Date.now() replays with every request matched
// only when time and randomness are deterministic.
func TestDeterministicPages(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "apt-get install chromium")
	// The URL the page's script makes under client.DeterministicJS: the
	// first xorshift32 number of its seed and the first clock reading.
	x := uint32(0x2545f491)
	x ^= x << 13
	x ^= x >> 17
	x ^= x << 5
	path := fmt.Sprintf("/r/%d-%d", int64(float64(x)/4294967296*1e9), int64(1_700_000_000_000))
	doc := `<!doctype html><html><head><link rel=icon href="data:,"></head><body><script>
const img = new Image(); img.src = '/r/' + Math.floor(Math.random() * 1e9) + '-' + Date.now(); document.body.appendChild(img);
</script></body></html>`
	png := site.ArchiveOf(mustSynthetic(t), "test").Exchanges[1]
	a := &site.Archive{Source: "test", Document: "https://www.news.test/", Exchanges: []*site.Exchange{
		{Method: "GET", URL: "https://www.news.test/", Status: 200, Header: []site.Field{{Name: "content-type", Value: "text/html"}}, Body: []byte(doc)},
		{Method: "GET", URL: "https://www.news.test" + path, Status: 200, Header: png.Header, Body: png.Body},
	}}
	dir := filepath.Join(t.TempDir(), "news")
	if err := site.WriteArchive(context.Background(), dir, a); err != nil {
		t.Fatal(err)
	}
	for _, deterministic := range []bool{true, false} {
		_, store, _ := runSpec(t, fmt.Sprintf("repetitions: 1\nretries: 0\nnetcheck: false\ndeterministic: %v\nfactors:\n  networks: [{rtt: 10ms}]\n  pages: [%q]\n  protocols: [h2]\n", deterministic, "archive:"+dir))
		tr := trialsOf(t, store)[0]
		// Without determinism the image's URL is new on every load: the
		// priming load lacked it too, so it is steady, and the load counts.
		if matched := tr.UnmatchedRequests == 0; matched != deterministic || tr.Status != results.StatusOK ||
			tr.SteadyUnmatched != tr.UnmatchedRequests || tr.BrokenImagesUnserved != tr.UnmatchedRequests {
			t.Errorf("deterministic %v: status %s, %d unmatched, %d steady, %d broken images unserved (%s)",
				deterministic, tr.Status, tr.UnmatchedRequests, tr.SteadyUnmatched, tr.BrokenImagesUnserved, tr.Error)
		}
	}
}

// mustSynthetic is a synthetic page of one 1 KB image.
func mustSynthetic(t *testing.T) *site.Site {
	s, err := gen.Synthetic(factor.Page{Kind: factor.PageSynthetic, Objects: 1, ObjectBytes: 1000}, []string{"www.news.test"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAPageThatLeavesItselfIsNamed: a recorded page whose script sends the
// tab to a page the recording lacks (as Google's new tab page does outside
// Chrome's own new tab) stays on the page as recorded, in Chromium and
// Firefox: the browser holds the navigation before it starts, and the
// load is verified with the navigation held and named; in Chromium, one
// whose script sends it to a page the recording holds
// (as www.bbc.co.uk sends a browser outside the UK to www.bbc.com) is that
// page's load, and the trial says where it landed; one an import started
// at its recorded redirect chain (www. → m.) follows it and lands on the
// page the chain ends at.
func TestAPageThatLeavesItselfIsNamed(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "apt-get install chromium")
	testenv.RequireFile(t, firefox.DefaultPath, "make deps")
	html := []site.Field{{Name: "Content-Type", Value: "text/html"}}
	leaving := func(name, to string, also ...*site.Exchange) string {
		doc := "https://www." + name + ".test/newtab?ie=UTF-8"
		a := &site.Archive{Source: "test", Document: doc, Exchanges: append([]*site.Exchange{{Method: "GET", URL: doc, Status: 200, Header: html,
			Body: []byte(`<!doctype html><title>ntp</title><script>location.replace('` + to + `')</script>`)}}, also...)}
		return writeTestArchive(t, name, a)
	}
	left := leaving("left", "/webhp?ie=UTF-8&rct=j")
	moved := leaving("moved", "/home", &site.Exchange{Method: "GET", URL: "https://www.moved.test/home", Status: 200, Header: html, Body: []byte("<p>home</p>")})
	// An import that found a recorded redirect chain (www. → m.) starts
	// the page at its first URL: the load follows the 301 to the other
	// host, as the recorded one did, and lands on the m. page.
	redirected := writeTestArchive(t, "redirected", &site.Archive{Source: "test", Document: "https://www.shop.test/", Exchanges: []*site.Exchange{
		{Method: "GET", URL: "https://www.shop.test/", Status: 301, Header: []site.Field{{Name: "Location", Value: "https://m.shop.test/"}}},
		{Method: "GET", URL: "https://m.shop.test/", Status: 200, Header: html, Body: []byte("<!doctype html><p>m</p>")}}})
	// Firefox holds the navigation away by the same script; where a page
	// lands is read alike in both browsers, so Chromium alone loads those
	_, store, _ := runSpec(t, oneLoadSpec("chromium, firefox", left))
	trials := trialsOf(t, store)
	_, store, _ = runSpec(t, oneLoadSpec("chromium", moved, redirected))
	trials = append(trials, trialsOf(t, store)...)
	if len(trials) != 4 {
		t.Fatalf("%d trials, want 4: left in both browsers, moved and redirected in Chromium", len(trials))
	}
	for _, tr := range trials {
		switch filepath.Base(tr.Page) {
		case "left":
			held := slices.Index(tr.UnmatchedURLs, "GET https://www.left.test/webhp?ie=UTF-8&rct=j")
			if tr.Status != results.StatusOK || tr.LandedURL != "" || tr.HeldNavigations != 1 || held < 0 ||
				len(tr.UnmatchedCauses) != len(tr.UnmatchedURLs) || tr.UnmatchedCauses[held] != results.CauseNavigation {
				t.Errorf("left, %s: %s (%s), landed on %q, unmatched %q (%q): want a verified load that stayed, its navigation held",
					tr.Client, tr.Status, tr.Error, tr.LandedURL, tr.UnmatchedURLs, tr.UnmatchedCauses)
			}
		case "moved":
			if tr.Status != results.StatusOK || tr.LandedURL != "https://www.moved.test/home" {
				t.Errorf("moved, %s: %s (%s), landed on %q, want a verified load that landed on /home", tr.Client, tr.Status, tr.Error, tr.LandedURL)
			}
		case "redirected":
			if tr.Status != results.StatusOK || tr.LandedURL != "https://m.shop.test/" || tr.ServerRequests < 2 {
				t.Errorf("redirected, %s: %s (%s), landed on %q, %d requests served: want a verified load through the recorded 301 to m.shop.test", tr.Client, tr.Status, tr.Error, tr.LandedURL, tr.ServerRequests)
			}
		}
	}
}

// TestReplayAtTheRecordingsViewportWithVariants: a page recorded in a
// phone's browser replays at the phone's viewport (its script reports
// what it sees), and an image it asks for at a size the recording holds
// only at another is served that variant, in Chromium and Firefox: no
// broken image, no unmatched image, one variant.
func TestReplayAtTheRecordingsViewportWithVariants(t *testing.T) {
	testenv.RequireRoot(t)
	png := site.ArchiveOf(mustSynthetic(t), "test").Exchanges[1]
	doc := `<!doctype html><meta name=viewport content="width=device-width"><title>phone</title><img src="/ic/960x540/p1.png" width=40 height=20>
<script>fetch('/vp?w=' + innerWidth + '&r=' + devicePixelRatio).catch(() => {})</script>`
	a := &site.Archive{Source: "test", Document: "https://www.phone.test/", Viewport: factor.Viewport{Width: 411, Height: 731, Scale: 2.625, Mobile: true},
		Exchanges: []*site.Exchange{
			{Method: "GET", URL: "https://www.phone.test/", Status: 200, Header: []site.Field{{Name: "Content-Type", Value: "text/html"}}, Body: []byte(doc)},
			{Method: "GET", URL: "https://www.phone.test/ic/480x270/p1.png", Status: 200, Header: png.Header, Body: png.Body},
		}}
	dir := filepath.Join(t.TempDir(), "phone")
	if err := site.WriteArchive(context.Background(), dir, a); err != nil {
		t.Fatal(err)
	}
	_, store, _ := runSpec(t, fmt.Sprintf(`repetitions: 1
retries: 0
netcheck: false
replay: {max_unmatched: 100%%}
factors:
  networks: [{name: fast, rtt: 10ms}]
  pages: ["archive:%s"]
  protocols: [h2]
  clients: [chromium, firefox]
`, dir))
	for _, tr := range trialsOf(t, store) {
		if tr.Status != results.StatusOK || tr.ReplayVariant != 1 || tr.BrokenImagesUnserved+tr.BrokenImagesRecorded != 0 {
			t.Errorf("%s: %s (%s): %d variants, %d+%d broken images", tr.Client, tr.Status, tr.Error, tr.ReplayVariant, tr.BrokenImagesRecorded, tr.BrokenImagesUnserved)
		}
		if want := (results.Strings{"GET https://www.phone.test/ic/960x540/p1.png /ic/480x270/p1.png"}); !slices.Equal(tr.VariantURLs, want) {
			t.Errorf("%s: variants listed %q, want %q", tr.Client, tr.VariantURLs, want)
		}
		if want := "GET https://www.phone.test/vp?w=411&r=2.625"; !slices.Contains(tr.UnmatchedURLs, want) {
			t.Errorf("%s: the page saw %v, want %s", tr.Client, tr.UnmatchedURLs, want)
		}
		// Firefox's WebDriver BiDi has no mobile layout: its viewport is
		// the phone's size and ratio alone, and says so.
		if tr.ViewportWidth != 411 || tr.ViewportHeight != 731 || tr.ViewportScale != 2.625 || tr.ViewportMobile != (tr.Client == factor.ClientChromium) {
			t.Errorf("%s: viewport recorded as %d@%g mobile %v", tr.Client, tr.ViewportWidth, tr.ViewportScale, tr.ViewportMobile)
		}
	}
}

// TestFirefoxNamesADocumentItCouldNotShow: a recorded document whose
// header fields do not fit its body (a Content-Encoding its body does not
// have) fails in Firefox with Firefox's own name of the failure and what
// to do, not with its navigation's error page alone.
func TestFirefoxNamesADocumentItCouldNotShow(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, firefox.DefaultPath, "make deps")
	dir := writeTestArchive(t, "broken", &site.Archive{Source: "test", Document: "https://www.broken.test/", Exchanges: []*site.Exchange{
		{Method: "GET", URL: "https://www.broken.test/", Status: 200,
			Header: []site.Field{{Name: "Content-Type", Value: "text/html"}, {Name: "Content-Encoding", Value: "gzip"}},
			Body:   []byte("<!doctype html><p>not gzip</p>")},
	}})
	_, store, _ := runSpec(t, oneLoadSpec("firefox", dir))
	trials := trialsOf(t, store)
	want := "Firefox failed the page's document with NS_ERROR_INVALID_CONTENT_ENCODING (the recorded response's header fields do not fit its body"
	if len(trials) != 1 || trials[0].Status != results.StatusFailed || !strings.Contains(trials[0].Error, want) {
		for _, tr := range trials {
			t.Errorf("%s: %q", tr.Status, tr.Error)
		}
		t.Errorf("%d trials, want one failed naming %q", len(trials), want)
	}
}
