package report

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/har"
	"github.com/quicbench/quicbench/internal/results"
)

// waterfallHAR is a load of a page over three connections: a request
// that starts before the document, the document and an image over one
// HTTP/1.1 connection, an image over a second, and one over HTTP/3 whose
// handshake the HAR gives as its connect time.
func waterfallHAR(start time.Time) *har.HAR {
	h := har.New("test", "")
	h.Log.Pages = append(h.Log.Pages, har.Page{StartedDateTime: start, ID: "page_1", Title: "https://a.test/"})
	add := func(url, version, conn string, atMs int, tm har.Timings) {
		h.Log.Entries = append(h.Log.Entries, har.Entry{StartedDateTime: start.Add(time.Duration(atMs) * time.Millisecond), Timings: tm, Time: tm.Total(),
			Connection: conn, Request: har.Request{URL: url}, Response: har.Response{Status: 200, HTTPVersion: version}})
	}
	plain := har.Timings{Blocked: 1, DNS: -1, Connect: -1, SSL: -1, Send: 0.2, Wait: 40, Receive: 10}
	add("https://a.test/early.js", "http/1.1", "12", 0, plain)
	add("https://a.test/", "http/1.1", "11", 5, har.Timings{Blocked: 1, DNS: 2, Connect: 60, SSL: 30, Send: 0.2, Wait: 40, Receive: 10})
	add("https://a.test/1.png", "http/1.1", "11", 120, plain)
	add("https://b.test/2.png", "h3", "40", 130, har.Timings{Blocked: 1, DNS: -1, Connect: 50, SSL: -1, Send: 0.2, Wait: 40, Receive: 10})
	return h
}

// TestTheWaterfallReadsLikeWebPageTests: the document's row comes first,
// each row names its connection in order of first use, QUIC's handshake
// has its own phase, and the load's DCL, FCP, LCP and load event are
// drawn across it.
func TestTheWaterfallReadsLikeWebPageTests(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	h := waterfallHAR(start)
	entries := documentFirst(h)
	var urls []string
	for _, e := range entries {
		urls = append(urls, e.Request.URL)
	}
	if want := []string{"https://a.test/", "https://a.test/early.js", "https://a.test/1.png", "https://b.test/2.png"}; !slices.Equal(urls, want) {
		t.Errorf("rows %v, want the document first, then by start: %v", urls, want)
	}
	if got := connectionNumbers(entries); !slices.Equal(got, []int{1, 2, 1, 3}) {
		t.Errorf("connections %v, want c1 for the document's, c2, c1, c3", got)
	}
	if phasesOf(entries[3])[2].name != "QUIC handshake" || phasesOf(entries[0])[2].name != "connect (TCP)" {
		t.Error("an HTTP/3 request's handshake is not QUIC's phase, or an HTTP/1.1 one's is")
	}
	tr := results.Trial{ID: "c-r1", Levels: results.Levels{Protocol: "h2", Network: "n", Page: "p"}}
	tr.DCL, tr.FCP, tr.LCP, tr.PLT = results.F(180), results.F(200), results.F(230), results.F(260)
	f, err := harWaterfall(Waterfall{HAR: h, Trial: tr}, "waterfall", sharedAxes{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.Title, "4 requests over 3 connections") {
		t.Errorf("title %q", f.Title)
	}
	for _, want := range []string{"QUIC handshake", "TLS", "connect (TCP)", "DCL 180 ms", "FCP 200 ms", "LCP 230 ms", "load (PLT) 260 ms", "c3 b.test/2.png", "connection c2"} {
		if !bytes.Contains(f.SVG, []byte(want)) {
			t.Errorf("the waterfall lacks %q", want)
		}
	}
}

// TestTheWaterfallMarksResumedAnd0RTTConnections: a host's connections
// are marked when the server saw them all alike (a full handshake has no
// mark); a host whose connections differ is counted in the title, since
// the HAR cannot tell which is which; the server's connections that
// served no request (a preconnect) are not counted.
func TestTheWaterfallMarksResumedAnd0RTTConnections(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	h := waterfallHAR(start)
	entries := documentFirst(h)
	numbers := connectionNumbers(entries) // a.test: c1, c2; b.test: c3
	server := []results.Connection{
		{ServerName: "a.test", Handshake: "resumed", Requests: 1},
		{ServerName: "a.test", Handshake: "resumed", Requests: 2},
		{ServerName: "a.test", Handshake: "full", Requests: 0}, // a preconnect never used
		{ServerName: "b.test", Handshake: "0rtt", Requests: 1},
	}
	marks, mixed := handshakeMarks(entries, numbers, server)
	if !maps.Equal(marks, map[int]string{1: "resumed", 2: "resumed", 3: "0-RTT"}) || len(mixed) != 0 {
		t.Errorf("marks %v, mixed %q: want c1 and c2 resumed, c3 0-RTT", marks, mixed)
	}
	server[1].Handshake = "full"
	marks, mixed = handshakeMarks(entries, numbers, server)
	if !maps.Equal(marks, map[int]string{3: "0-RTT"}) || !slices.Equal(mixed, []string{"1 of 2 to a.test resumed"}) {
		t.Errorf("marks %v, mixed %q: a.test's connections differ, so none should be marked and the title count them", marks, mixed)
	}
	tr := results.Trial{ID: "c-r2", Levels: results.Levels{Protocol: "h3", Network: "n", Page: "p"}}
	f, err := harWaterfall(Waterfall{HAR: h, Trial: tr, Connections: server}, "waterfall", sharedAxes{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(f.SVG, []byte("c3 0-RTT b.test/2.png")) || !bytes.Contains(f.SVG, []byte("connection c3 0-RTT")) ||
		!strings.Contains(f.Title, "the server saw 1 of 2 to a.test resumed") || !strings.Contains(f.Caption, "resumed or 0-RTT") {
		t.Errorf("the waterfall does not mark c3 or count a.test's: title %q", f.Title)
	}
}

// TestAProtocolsWaterfallsShareTheirTimeAxis: the waterfalls of a
// setting's protocols end their axes at the latest end of any of them,
// requests or marks.
func TestAProtocolsWaterfallsShareTheirTimeAxis(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	fast, slow := results.Trial{ID: "fast"}, results.Trial{ID: "slow"}
	fast.PLT, slow.PLT = results.F(300), results.F(900)
	ws := []Waterfall{
		{Trial: fast, HAR: waterfallHAR(start)},
		{Trial: slow, Resources: []results.Resource{{URL: "https://a.test/", StartMs: 0, ResponseEndMs: 1200}}},
	}
	if end := waterfallsEnd(ws); end != 1200 {
		t.Errorf("shared axis ends at %v ms, want the slow load's last response, 1200", end)
	}
	ws[1].Resources[0].ResponseEndMs = 100
	if end := waterfallsEnd(ws); end != 900 {
		t.Errorf("shared axis ends at %v ms, want the slow load's PLT, 900", end)
	}
}

// TestLossesAreMarkedOnTheirConnectionsRows: a drop and a wait on b.test's
// only connection are marked on its row; a drop on one of a.test's two
// HTTP/1.1 connections, which the HAR cannot tell apart, and a bare
// acknowledgement's are not.
func TestLossesAreMarkedOnTheirConnectionsRows(t *testing.T) {
	h := waterfallHAR(time.Unix(1_800_000_000, 0))
	tr := results.Trial{ID: "c-r1", Levels: results.Levels{Protocol: "h3", Network: "n", Page: "p"}}
	tr.PLT = results.F(260)
	w := Waterfall{HAR: h, Trial: tr,
		Connections: []results.Connection{{Remote: "10.0.0.2:40000", ServerName: "a.test", Requests: 2}, {Remote: "10.0.0.2:40001", ServerName: "a.test", Requests: 1},
			{Remote: "10.0.0.2:40002", ServerName: "b.test", Requests: 1}},
		Losses: []results.Loss{
			{Kind: results.LossDrop, Client: "10.0.0.2:40002", Transport: "udp", Down: true, Bytes: 1200, FromMs: 150, ToMs: 150},
			{Kind: results.LossWait, Client: "10.0.0.2:40002", Transport: "udp", Down: true, FromMs: 160, ToMs: 190},
			{Kind: results.LossDrop, Client: "10.0.0.2:40000", Transport: "tcp", Down: true, Bytes: 1448, FromMs: 130, ToMs: 130},
			{Kind: results.LossDrop, Client: "10.0.0.2:40002", Transport: "tcp", Down: false, Bytes: 0, FromMs: 170, ToMs: 170},
		}}
	f, err := harWaterfall(w, "waterfall", sharedAxes{})
	if err != nil {
		t.Fatal(err)
	}
	svg := string(f.SVG)
	for _, want := range []string{"dropped a packet of 1200 bytes to the client at 150.0 ms", "one stream of the QUIC connection to b.test stood still for lost data from 160.0 to 190.0 ms"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the waterfall lacks the tip %q", want)
		}
	}
	if strings.Contains(svg, "1448 bytes") || strings.Contains(svg, "of 0 bytes") || !strings.Contains(f.Caption, "Red crosses") {
		t.Errorf("marks a.test's loss or a bare acknowledgement, or its caption lacks the marks: %q", f.Caption)
	}
}
