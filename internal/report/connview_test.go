package report

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/har"
	"github.com/quicbench/quicbench/internal/results"
)

// h1Resources are an HTTP/1.1 load of a document and 12 images from one
// host: the document opens a connection, the first 6 images start
// together (5 open connections of their own, one waits for the
// document's), and the next 6 each start when one of those ends, over it.
func h1Resources() []results.Resource {
	f := results.F
	doc := results.Resource{URL: "https://a.test/", Protocol: "http/1.1", Navigation: true, StartMs: 0, ConnectStartMs: f(1), TLSStartMs: f(51),
		ConnectEndMs: f(101), RequestStartMs: f(101), ResponseStartMs: f(151), ResponseEndMs: 160}
	rs := []results.Resource{doc}
	for i := range 12 {
		start := 170.0
		r := results.Resource{URL: "https://a.test/" + string(rune('a'+i)) + ".png", Protocol: "http/1.1", StartMs: start}
		switch {
		case i < 5: // a connection of its own
			r.ConnectStartMs, r.TLSStartMs, r.ConnectEndMs, r.RequestStartMs = f(start), f(start+50), f(start+100), f(start+100)
		case i == 5: // the document's, idle since 160
			r.ConnectStartMs, r.ConnectEndMs, r.RequestStartMs = f(start), f(start), f(start)
		default: // after one of the first six ended
			start = 400 + float64(i)
			r.StartMs, r.ConnectStartMs, r.ConnectEndMs, r.RequestStartMs = start, f(start), f(start), f(start)
		}
		r.ResponseStartMs, r.ResponseEndMs = f(*r.RequestStartMs+50), *r.RequestStartMs+60
		rs = append(rs, r)
	}
	return rs
}

// TestTheConnectionViewFromResourceTiming: HTTP/1.1's requests are on
// six connections, those that showed a connect phase opening them, the
// others on the one idle longest… last, one at a time; h2's and h3's on
// one connection per host, with QUIC's handshake; a request whose phases
// the browser hid joins its host's only connection.
func TestTheConnectionViewFromResourceTiming(t *testing.T) {
	conns, unplaced := rtConnections(documentFirstResources(h1Resources()))
	if len(conns) != 6 || unplaced != 0 {
		t.Fatalf("%d connections (%d unplaced), want 6", len(conns), unplaced)
	}
	var counts []int
	for _, c := range conns {
		counts = append(counts, len(c.requests))
		for i := 1; i < len(c.requests); i++ {
			if c.requests[i].from < c.requests[i-1].to {
				t.Errorf("an HTTP/1.1 connection carries two requests at once: %v", c.requests)
			}
		}
		if c.protocol != "h1" || c.handshake.to-c.handshake.from != 100 || c.tlsAt-c.handshake.from != 50 {
			t.Errorf("connection %+v: want h1 with a 100 ms handshake, TLS from 50 ms", c)
		}
	}
	if !slices.Equal(counts, []int{3, 2, 2, 2, 2, 2}) {
		t.Errorf("requests per connection %v, want the document's 3 (document, the image that waited, one more) and 2 on each other", counts)
	}
	f := results.F
	h3 := []results.Resource{
		{URL: "https://a.test/", Protocol: "h3", Navigation: true, ConnectStartMs: f(1), TLSStartMs: f(1), ConnectEndMs: f(51), RequestStartMs: f(51), ResponseStartMs: f(101), ResponseEndMs: 110},
		{URL: "https://a.test/1.png", Protocol: "h3", StartMs: 120, ConnectStartMs: f(120), ConnectEndMs: f(120), RequestStartMs: f(120), ResponseStartMs: f(170), ResponseEndMs: 180},
		{URL: "https://a.test/2.png", Protocol: "h3", StartMs: 120, ConnectStartMs: f(120), ConnectEndMs: f(120), RequestStartMs: f(121), ResponseStartMs: f(171), ResponseEndMs: 185},
		{URL: "https://a.test/3.png", Protocol: "h3", StartMs: 122, ResponseEndMs: 190},  // phases hidden
		{URL: "https://cdn.test/x.js", Protocol: "h3", StartMs: 125, ResponseEndMs: 300}, // hidden, no connection seen to its host
	}
	conns, unplaced = rtConnections(h3)
	if len(conns) != 1 || len(conns[0].requests) != 4 || unplaced != 1 || conns[0].tlsAt != conns[0].handshake.to {
		t.Errorf("h3: %+v, %d unplaced: want one connection of 4 requests, its handshake QUIC's alone, and the hidden cdn.test request unplaced", conns, unplaced)
	}
	markKinds(conns, []results.Connection{{ServerName: "a.test", Handshake: results.Handshake0RTT, Requests: 4}, {ServerName: "a.test", Handshake: results.HandshakeFull}})
	if got := connLabel(1, conns[0]); got != "c1 h3 a.test 0-RTT, 4 requests" {
		t.Errorf("label %q", got)
	}
}

// TestTheWaterfallHasItsConnectionView: a Resource Timing waterfall
// draws the connection view under its request rows, its rows named, and
// says how it found them.
func TestTheWaterfallHasItsConnectionView(t *testing.T) {
	tr := results.Trial{ID: "c-r1", Levels: results.Levels{Protocol: "h1", Network: "n", Page: "p"}}
	tr.PLT = results.F(500)
	server := []results.Connection{{ServerName: "a.test", Handshake: results.HandshakeFull, Requests: 3}}
	f, err := waterfallOf(Waterfall{Trial: tr, Resources: h1Resources(), Connections: server}, "waterfall", sharedAxes{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"— 6 connections —", "c1 h1 a.test full, 3 requests", "c6 h1 a.test full, 2 requests"} {
		if !bytes.Contains(f.SVG, []byte(want)) {
			t.Errorf("the waterfall lacks %q", want)
		}
	}
	if !strings.Contains(f.Caption, "connection view") || !strings.Contains(f.Caption, "Resource Timing names no connection") || !bytes.Contains(f.SVG, []byte("(20 rows)")) {
		t.Errorf("caption %q: want the connection view told, and 20 rows drawn (13 requests, a heading, 6 connections)", f.Caption)
	}
}

// TestTheConnectionViewOfBrowsersHARs: on HARs Chromium and Firefox wrote
// of real sites (../shared/recordings), every entry with a connection ID
// is on exactly one connection row, each connection's handshake starts
// where its first request's connect phase did and lasts as long, and the
// waterfall draws the view.
func TestTheConnectionViewOfBrowsersHARs(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "..", "shared", "recordings", "*.har"))
	if len(paths) == 0 {
		t.Skip("no shared recordings here")
	}
	checked := 0
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		h, err := har.Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(path), err)
		}
		if len(h.Log.Entries) == 0 {
			continue
		}
		entries := drawnEntries(documentFirst(h))
		numbers := connectionNumbers(entries)
		view := harConnections(entries, numbers, harStart(h))
		placed, withID := 0, 0
		for _, c := range view {
			placed += len(c.requests)
			if c.handshake.to < c.handshake.from {
				t.Errorf("%s: a handshake ends before it starts: %+v", filepath.Base(path), c.handshake)
			}
		}
		for _, n := range numbers {
			if n > 0 {
				withID++
			}
		}
		if placed != withID || len(view) != slices.Max(append(numbers, 0)) {
			t.Errorf("%s: %d requests on %d connection rows, want the %d entries with IDs on %d", filepath.Base(path), placed, len(view), withID, slices.Max(append(numbers, 0)))
		}
		if len(view) == 0 {
			continue
		}
		tr := results.Trial{ID: "r", Levels: results.Levels{Protocol: "h2", Network: "n", Page: "p"}}
		f, err := harWaterfall(Waterfall{HAR: h, Trial: tr}, "waterfall", sharedAxes{})
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(path), err)
		}
		if !bytes.Contains(f.SVG, []byte("connections —")) && !bytes.Contains(f.SVG, []byte("— 1 connection —")) {
			t.Errorf("%s: the waterfall has no connection view", filepath.Base(path))
		}
		checked++
	}
	if checked == 0 {
		t.Error("no shared HAR had connections to check")
	}
}

// TestLongURLsAreCutInTheMiddle: a row's URL of hundreds of characters
// keeps its host and path's start and its end, within maxRowLabel.
func TestLongURLsAreCutInTheMiddle(t *testing.T) {
	long := "https://securepubads.g.doubleclick.net/gampad/ads?gdfp_req=1&" + strings.Repeat("x", 400) + "&end=1"
	got := shortURL(long)
	if n := len([]rune(got)); n != maxRowLabel || !strings.HasPrefix(got, "securepubads.g.doubleclick.net/gampad/ads") || !strings.HasSuffix(got, "&end=1") || !strings.Contains(got, "…") {
		t.Errorf("shortURL = %q (%d runes)", got, n)
	}
	if got := shortURL("https://a.test/x.png"); got != "a.test/x.png" {
		t.Errorf("a short URL changed: %q", got)
	}
}
