package client

import (
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/factor"
)

// discoveredLoad is a first visit under alt-svc as Firefox made one: the
// document and two images over h2 from a.test, whose document offered h3
// at its first byte (40 ms), then two over h3 from 60 ms; b.test's image
// over h2 before and after a.test switched.
func discoveredLoad() PageMetrics {
	r := func(url, proto string, start, respStart float64, bytes int64) ResourceTiming {
		return ResourceTiming{URL: url, Protocol: proto, StartMs: start, ResponseEndMs: respStart + 5, TransferBytes: bytes, Status: 200,
			Phases: Phases{ResponseStartMs: respStart}}
	}
	return PageMetrics{DocumentProtocol: "h2", DocumentStatus: 200, DocumentTransferBytes: 1000, PLTMs: 200,
		Document: r("https://a.test/", "h2", 0, 40, 1000),
		Resources: []ResourceTiming{
			r("https://a.test/1.png", "h2", 45, 70, 10_000),
			r("https://b.test/2.png", "h2", 45, 90, 10_000),
			r("https://a.test/3.png", "h3", 60, 95, 10_000),
			r("https://a.test/4.png", "h3", 61, 96, 10_000),
			r("https://b.test/5.png", "h2", 100, 120, 10_000),
		}}
}

func discoveredRequest(d factor.Discovery, v factor.Visit) Request {
	return Request{URL: "https://a.test/", Protocol: factor.H3, Discovery: d, Visit: v, Hosts: []string{"a.test", "b.test"},
		Expected: []string{"https://a.test/1.png", "https://b.test/2.png", "https://a.test/3.png", "https://a.test/4.png", "https://b.test/5.png"}}
}

func TestADiscoveredLoadIsMixedAndVerified(t *testing.T) {
	req, m := discoveredRequest(factor.DiscoveryAltSvc, factor.FirstVisit), discoveredLoad()
	if p := Verify(req, m); len(p) > 0 {
		t.Fatalf("problems %v", p)
	}
	u := ProtocolUseOf(req, m)
	want := ProtocolUse{H3Requests: 2, TCPRequests: 4, H3Bytes: 20_000, TCPBytes: 31_000, FirstH3Ms: 60, TCPAfterOffer: 2}
	if u != want {
		t.Errorf("use %+v, want %+v", u, want)
	}
	if s := u.H3RequestShare(); s < 0.333 || s > 0.334 {
		t.Errorf("request share %v", s)
	}
}

func TestQUICBeforeItsHostOfferedItIsNotDiscovery(t *testing.T) {
	req, m := discoveredRequest(factor.DiscoveryAltSvc, factor.FirstVisit), discoveredLoad()
	// queued before the offer, sent after it over the QUIC connection
	// that became known meanwhile: discovered
	m.Resources[2].StartMs, m.Resources[2].RequestStartMs = 20, 61
	if p := Verify(req, m); len(p) > 0 {
		t.Fatalf("a request sent after the offer: %v", p)
	}
	m.Resources[3].StartMs = 30 // before a.test's first byte at 40 ms
	m.Resources = append(m.Resources, ResourceTiming{URL: "https://c.test/6.png", Protocol: "h3", StartMs: 150, Status: 200})
	p := strings.Join(Verify(req, m), "; ")
	if !strings.Contains(p, "2 requests over h3 before their host offered it") || !strings.Contains(p, "https://a.test/4.png sent at 30.0 ms") {
		t.Errorf("problems: %s", p)
	}
	// a repeat visit knows from its first load
	req.Visit = factor.RepeatVisit
	m.Resources = m.Resources[:5]
	m.DocumentProtocol, m.Document.Protocol = "h3", "h3"
	if p := Verify(req, m); len(p) > 0 {
		t.Errorf("repeat visit: %v", p)
	}
}

func TestForcedAndUnofferedLoadsTakeOneProtocol(t *testing.T) {
	m := discoveredLoad()
	for _, req := range []Request{
		discoveredRequest(factor.DiscoveryForced, factor.FirstVisit),
		discoveredRequest("", factor.FirstVisit),
		{URL: "https://a.test/", Protocol: factor.H2, Discovery: factor.DiscoveryAltSvc, Expected: []string{"https://a.test/3.png"}},
	} {
		p := strings.Join(Verify(req, m), "; ")
		if !strings.Contains(p, "not over") {
			t.Errorf("%s %s: problems %q", req.Discovery, req.Protocol, p)
		}
		if u := ProtocolUseOf(req, m); u.TCPAfterOffer != 0 {
			t.Errorf("%s %s: %d after an offer that was never made", req.Discovery, req.Protocol, u.TCPAfterOffer)
		}
	}
	// h1 under discovery: offered no h3, so an h2 request is wrong
	req := Request{URL: "https://a.test/", Protocol: factor.H1, Discovery: factor.DiscoveryAltSvc}
	if p := Verify(req, m); len(p) == 0 || !strings.Contains(p[0], "document over \"h2\"") {
		t.Errorf("h1: %v", p)
	}
}

func TestCacheHitsAreNoProtocolsUse(t *testing.T) {
	req, m := discoveredRequest(factor.DiscoveryAltSvc, factor.RepeatVisit), discoveredLoad()
	req.CacheAllowed = true
	for i := range m.Resources {
		m.Resources[i].TransferBytes = 0
	}
	u := ProtocolUseOf(req, m)
	if u.H3Requests != 0 || u.TCPRequests != 1 || u.FirstH3Ms != -1 {
		t.Errorf("use %+v: only the document was fetched", u)
	}
}

// TestAnH1FallbackAllowsHTTP1Alone: where the servers speak h1 beside the
// h3 they offer (a run of h1 against h3), TCP requests must be HTTP/1.1
// and the browser may not speak HTTP/2.
func TestAnH1FallbackAllowsHTTP1Alone(t *testing.T) {
	req, m := discoveredRequest(factor.DiscoveryAltSvc, factor.FirstVisit), discoveredLoad()
	req.Fallback = factor.H1
	if req.SpeaksHTTP2() {
		t.Error("an h1 fallback speaks HTTP/2")
	}
	if p := strings.Join(Verify(req, m), "; "); !strings.Contains(p, "not over h3 or http/1.1") {
		t.Errorf("h2 requests passed: %q", p)
	}
	for i := range m.Resources {
		if m.Resources[i].Protocol == "h2" {
			m.Resources[i].Protocol = "http/1.1"
		}
	}
	m.Document.Protocol, m.DocumentProtocol = "http/1.1", "http/1.1"
	if p := Verify(req, m); len(p) > 0 {
		t.Errorf("problems %v", p)
	}
	if !(Request{Protocol: factor.H3, Discovery: factor.DiscoveryAltSvc}).SpeaksHTTP2() || (Request{Protocol: factor.H1}).SpeaksHTTP2() {
		t.Error("SpeaksHTTP2 of the defaults")
	}
}
