package experiment

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"image/png"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/chromium"
	"github.com/quicbench/quicbench/internal/firefox"
	"github.com/quicbench/quicbench/internal/har"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/site/imports"
	"github.com/quicbench/quicbench/internal/testenv"
)

// liveSiteStart is when the live-site HAR says its page was recorded.
var liveSiteStart = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)

// liveSiteDocument is a shop's home page as live sites make them: a
// manifest the recording never had and no favicon link (the browser asks
// /favicon.ico), lazy images below the fold that never load, an image
// broken in the recording itself, a URL time-stamped by Date.now(), a
// beacon carrying Math.random() and an image from a host the recording
// never had.
const liveSiteDocument = `<!doctype html><html><head><link rel=manifest href="/manifest.json"></head><body>
<img src="/img/hero.png" width=64 height=64><img src="/img/broken.png" width=8 height=8>
<img src="https://cdn.unrecorded.test/ad/1.png" width=8 height=8>
<div style="height:8000px"></div>
<img loading=lazy src="/img/lazy-1.png" width=64 height=64><img loading=lazy src="/img/lazy-2.png" width=64 height=64>
<script>
for (const u of ['/ts.png?t=' + Date.now(), '/beacon.png?r=' + Math.random() + '&v=2']) {
  const img = new Image(); img.width = 1; img.src = u; document.body.appendChild(img);
}
</script></body></html>`

// writeLiveSiteHAR writes the shop's page as a browser exports it: the
// entries above, the timestamped one at the page's start, the beacon with
// another random number, a WebSocket (101), a data: URL and a plain http
// request.
func writeLiveSiteHAR(t *testing.T) string {
	t.Helper()
	var pngBody bytes.Buffer
	if err := png.Encode(&pngBody, image.NewRGBA(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	pngText := base64.StdEncoding.EncodeToString(pngBody.Bytes())
	entry := func(url string, status int, mime, text, encoding string) har.Entry {
		e := har.Entry{Pageref: "page_1", StartedDateTime: liveSiteStart}
		e.Request = har.Request{Method: "GET", URL: url, HTTPVersion: "h2"}
		e.Response = har.Response{Status: status, HTTPVersion: "h2", Headers: []har.NameValue{{Name: "content-type", Value: mime}},
			Content: har.Content{Size: int64(len(text)), MimeType: mime, Text: &text, Encoding: encoding}}
		return e
	}
	h := har.New("test", "1")
	h.Log.Pages = []har.Page{{ID: "page_1", StartedDateTime: liveSiteStart, Title: "shop"}}
	h.Log.Entries = []har.Entry{
		entry("https://www.shop.test/", 200, "text/html", liveSiteDocument, ""),
		entry("https://www.shop.test/img/hero.png", 200, "image/png", pngText, "base64"),
		entry("https://www.shop.test/img/broken.png", 200, "image/png", "<html>not found</html>", ""),
		entry(fmt.Sprintf("https://www.shop.test/ts.png?t=%d", liveSiteStart.UnixMilli()), 200, "image/png", pngText, "base64"),
		entry("https://www.shop.test/beacon.png?r=0.7315&v=2", 200, "image/png", pngText, "base64"),
		entry("wss://www.shop.test/live", 101, "", "", ""),
		entry("data:image/png;base64,"+pngText, 200, "image/png", pngText, "base64"),
		entry("http://tracker.test/p.gif", 200, "image/gif", pngText, "base64"),
	}
	path := filepath.Join(t.TempDir(), "shop.har")
	if err := h.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReplayLiveSiteHAR: a HAR of a live site with each thing that failed
// real recordings imports without --document, leaving out and counting
// the WebSocket, data: and http entries, and replays in Chromium and in
// Firefox over h1, h2 and h3 with every load verified: the browser's own
// requests the recording lacks are counted apart, lazy images are not
// broken, the image broken in the recording is excused and counted, the
// time-stamped URL matches exactly (the clock starts at the HAR's page
// start) and the random beacon matches by its nearest query. The image
// from a host the recording lacks never reaches a server: the browser
// lists it, it is unmatched, and steady after the priming load.
func TestReplayLiveSiteHAR(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "apt-get install chromium")
	dir := liveSiteArchive(t)
	t.Run("chromium", func(t *testing.T) { replayLiveSite(t, dir, "chromium") })
	t.Run("firefox", func(t *testing.T) {
		testenv.RequireFile(t, firefox.DefaultPath, "apt-get install firefox-esr libnss3-tools")
		replayLiveSite(t, dir, "firefox")
	})
}

// liveSiteArchive imports the live site's HAR into an archive directory.
func liveSiteArchive(t *testing.T) string {
	t.Helper()
	a, rep, err := imports.HAR(context.Background(), writeLiveSiteHAR(t), imports.Options{})
	if err != nil || a.Document != "https://www.shop.test/" || rep.OtherSchemes != 2 || rep.PlainHTTP != 1 || !a.RecordedAt.Equal(liveSiteStart) {
		t.Fatalf("import: %v, document %v, report %+v", err, a, rep)
	}
	dir := filepath.Join(t.TempDir(), "shop")
	if err := site.WriteArchive(context.Background(), dir, a); err != nil {
		t.Fatal(err)
	}
	return dir
}

// replayLiveSite replays the archive in dir with client over each protocol.
func replayLiveSite(t *testing.T, dir, client string) {
	res, store, _ := runSpec(t, fmt.Sprintf("repetitions: 1\nretries: 0\nnetcheck: false\nclient: %s\nreplay: {max_unmatched: 0%%}\n"+
		"factors:\n  networks: [{rtt: 10ms}]\n  pages: [%q]\n  protocols: [h1, h2, h3]\n", client, "archive:"+dir))
	if res.Done != 3 {
		t.Fatalf("result %+v", res)
	}
	for _, tr := range trialsOf(t, store) {
		checkLiveSiteLoad(t, tr.Trial)
	}
}

// checkLiveSiteLoad checks one verified load of the live-site page.
func checkLiveSiteLoad(t *testing.T, tr results.Trial) {
	t.Helper()
	if tr.Status != results.StatusOK {
		t.Errorf("%s: %s", tr.Protocol, tr.Error)
		return
	}
	unknownHost := "GET https://cdn.unrecorded.test/ad/1.png"
	for _, u := range tr.UnmatchedURLs {
		if !strings.Contains(u, "/favicon.ico") && !strings.Contains(u, "/manifest.json") && u != unknownHost {
			t.Errorf("%s: %s unmatched; only the browser's own requests and the unknown host's may be", tr.Protocol, u)
		}
	}
	if !slices.Contains(tr.UnmatchedURLs, unknownHost) || tr.SteadyUnmatched != 1 {
		t.Errorf("%s: unmatched %v, %d steady; want %s steady", tr.Protocol, tr.UnmatchedURLs, tr.SteadyUnmatched, unknownHost)
	}
	if tr.BrowserOwnUnmatched+tr.SteadyUnmatched != tr.UnmatchedRequests {
		t.Errorf("%s: %d unmatched %v, %d of them the browser's own, %d steady", tr.Protocol, tr.UnmatchedRequests, tr.UnmatchedURLs,
			tr.BrowserOwnUnmatched, tr.SteadyUnmatched)
	}
	// hero, broken, ts exact; the beacon fuzzy; lazy images not asked.
	// Up to the load: the four images the page shows and the one from the
	// unknown host (both browsers give a failed fetch a Resource Timing
	// entry), not the manifest the browser fetches on its own (in Resource
	// Timing in some loads).
	if tr.ReplayFuzzy != 1 || tr.ReplayExact != 4 || tr.BrokenImagesRecorded != 1 || tr.BrokenImagesUnserved != 1 || tr.LoadRequests != 5 {
		t.Errorf("%s: %d exact, %d fuzzy, broken images %d recorded and %d unserved, %d requests to the load", tr.Protocol, tr.ReplayExact,
			tr.ReplayFuzzy, tr.BrokenImagesRecorded, tr.BrokenImagesUnserved, tr.LoadRequests)
	}
}
