package experiment

import (
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/server"
)

// firstVisitOf is a clean first visit of a page of two hosts: the document
// and three resources, each served once, after full handshakes, with a
// lookup per host.
func firstVisitOf() (client.Request, Measured) {
	req := client.Request{Visit: factor.FirstVisit, DNS: factor.DNSResolved, Expected: []string{
		"https://a.test/1.js", "https://b.test/2.css", "https://b.test/3.png",
	}}
	m := Measured{
		Result: client.Result{PageMetrics: client.PageMetrics{DocumentURL: "https://a.test/", Resources: []client.ResourceTiming{
			{URL: "https://a.test/1.js"}, {URL: "https://b.test/2.css"}, {URL: "https://b.test/3.png"}, {URL: "data:image/png;base64,AAAA"},
		}}},
		ServerRequests: server.Counts{H2: 3, H3: 1},
		Connections: []server.ConnRecord{
			{Transport: "tcp", ServerName: "a.test", OpenedAt: at(0), Handshake: server.HandshakeFull, Requests: 1},
			{Transport: "tcp", ServerName: "b.test", OpenedAt: at(1), Handshake: server.HandshakeFull, Requests: 1},
			{Transport: "tcp", ServerName: "b.test", OpenedAt: at(2), Handshake: server.HandshakeResumed, Requests: 1}, // b.test's ticket
			{Transport: "tcp", ServerName: "a.test", OpenedAt: at(3), Handshake: server.HandshakeResumed},              // served nothing
			{Transport: "quic", ServerName: "a.test", OpenedAt: at(4), Handshake: server.HandshakeFull, Requests: 1},
		},
		DNSQueries: 2,
	}
	return req, m
}

// at is a time i ms into a load.
func at(i int) time.Time {
	return time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Millisecond)
}

// TestAFirstVisitFromScratchPasses: a connection may resume a ticket an
// earlier connection of the same load to its host got.
func TestAFirstVisitFromScratchPasses(t *testing.T) {
	req, m := firstVisitOf()
	if problem := notFirstVisit(req, &m); problem != "" {
		t.Fatalf("a clean first visit: %s", problem)
	}
	for i := range m.Connections { // a server that does not say when they opened
		m.Connections[i].OpenedAt = time.Time{}
	}
	if problem := notFirstVisit(req, &m); problem != "" {
		t.Fatalf("a first visit whose connections' times are unknown: %s", problem)
	}
	req.DNS, m.DNSQueries = factor.DNSPinned, 0 // pinned: no lookups to count
	if problem := notFirstVisit(req, &m); problem != "" {
		t.Fatalf("a pinned first visit: %s", problem)
	}
}

// TestATicketOfAConnectionThatServedNothingCounts: a browser's spare
// connection made the full handshake whose ticket a later one resumed; the
// server's records name no transport for it (Caddy's), or no sure name.
func TestATicketOfAConnectionThatServedNothingCounts(t *testing.T) {
	req, m := firstVisitOf()
	m.Connections[1].Requests, m.Connections[1].Transport = 0, ""
	if problem := notFirstVisit(req, &m); problem != "" {
		t.Fatalf("a ticket from a connection of unknown transport: %s", problem)
	}
	m.Connections[1].ServerName = ""
	if problem := notFirstVisit(req, &m); problem != "" {
		t.Fatalf("a ticket from a connection of unknown name: %s", problem)
	}
	m.Connections[1].Transport = "quic" // known, and not b.test's TCP
	if problem := notFirstVisit(req, &m); !strings.Contains(problem, "(1 resumed)") {
		t.Fatalf("a ticket only a QUIC connection could have given: %q, want 1 resumed", problem)
	}
}

func TestStateOfAnEarlierLoadIsNamed(t *testing.T) {
	for name, tc := range map[string]struct {
		spoil func(*Measured)
		want  string
	}{
		"a resumed TLS session": {func(m *Measured) { m.Connections[1].Handshake = server.HandshakeResumed }, "(2 resumed)"},
		"0-RTT over QUIC, whose ticket no QUIC connection gave": {func(m *Measured) {
			m.Connections[4].Handshake = server.Handshake0RTT
		}, "(1 0rtt)"},
		"0-RTT and resumption": {func(m *Measured) {
			m.Connections[0].Handshake, m.Connections[1].Handshake = server.Handshake0RTT, server.HandshakeResumed
		}, "(1 0rtt, 2 resumed)"},
		"a cached response": {func(m *Measured) { m.ServerRequests = server.Counts{H2: 3} }, "served 3 requests for the 4 the page loaded"},
		"a cached address":  {func(m *Measured) { m.DNSQueries = 1 }, "1 lookups at the testbed's DNS for 2 hosts"},
	} {
		req, m := firstVisitOf()
		tc.spoil(&m)
		problem := notFirstVisit(req, &m)
		if !strings.HasPrefix(problem, "not a first visit: ") || !strings.Contains(problem, tc.want) {
			t.Errorf("%s: %q, want it to name %q", name, problem, tc.want)
		}
	}
}

func TestARepeatVisitIsNotHeldToIt(t *testing.T) {
	req, m := firstVisitOf()
	req.Visit = factor.RepeatVisit
	m.Connections[0].Handshake, m.ServerRequests = server.Handshake0RTT, server.Counts{}
	if problem := notFirstVisit(req, &m); problem != "" {
		t.Fatalf("a repeat visit: %s", problem)
	}
}
