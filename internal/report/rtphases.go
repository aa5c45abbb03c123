package report

import (
	"cmp"
	"image/color"
	"slices"

	"github.com/quicbench/quicbench/internal/results"
)

// unknownPhase is the colour of a request whose phases the browser did
// not expose (a cross-origin response without Timing-Allow-Origin): drawn
// as unknown, never as zero.
var unknownPhase = harPhase{name: "phases not exposed", color: color.RGBA{R: 0xdd, G: 0xdd, B: 0xdd, A: 0xff}}

// drawnPhase is one phase of a waterfall row, from and to in ms.
type drawnPhase struct {
	phase    harPhase
	from, to float64
}

// rtPhases are the phases of Resource Timing row r in WebPageTest's order
// and the HAR waterfall's colours: blocked, DNS, connect and TLS (QUIC's
// handshake over h3), waiting for the first byte, content download; the
// whole row as unknown where the browser exposed no request and response
// starts.
func rtPhases(r results.Resource) []drawnPhase {
	if r.RequestStartMs == nil || r.ResponseStartMs == nil {
		return []drawnPhase{{unknownPhase, r.StartMs, r.ResponseEndMs}}
	}
	connect, tls := handshakePhases(r.Protocol)
	req, resp := *r.RequestStartMs, *r.ResponseStartMs
	dns := orElse(r.DNSStartMs, req)
	hs := handshakeOf(r)
	phases := []drawnPhase{
		{harPhases[0], r.StartMs, min(dns, hs.from, req)},
		{harPhases[1], dns, hs.from},
		{connect, hs.from, hs.tlsAt},
		{tls, hs.tlsAt, hs.to},
		{harPhases[0], hs.to, req},
		{harPhases[5], req, resp},
		{harPhases[6], resp, r.ResponseEndMs},
	}
	return slices.DeleteFunc(phases, func(p drawnPhase) bool { return p.to <= p.from })
}

// handshake is a connection's handshake: from its connect start to its
// end, TLS from tlsAt (= to where it has no phase of its own: QUIC's
// handshake holds it, or there was none); from == to for none.
type handshake struct{ from, tlsAt, to float64 }

// handshakeOf is the handshake Resource Timing row r shows, at its
// request start where it shows none (a reused connection). r's request
// start must be exposed.
func handshakeOf(r results.Resource) handshake {
	req := *r.RequestStartMs
	from := orElse(r.ConnectStartMs, req)
	to := orElse(r.ConnectEndMs, from)
	tlsAt := orElse(r.TLSStartMs, to)
	if tlsAt < from || shortProtocol(r.Protocol) == "h3" {
		tlsAt = to
	}
	return handshake{from, tlsAt, to}
}

// opened reports whether h is a handshake that took time: r opened a
// connection.
func (h handshake) opened() bool { return h.to > h.from }

// handshakePhases are a protocol's handshake phases: TCP connect and TLS,
// or QUIC's handshake (and no TLS phase of its own) over h3.
func handshakePhases(protocol string) (connect, tls harPhase) {
	if shortProtocol(protocol) == "h3" {
		return quicPhases[2], harPhases[3]
	}
	return harPhases[2], harPhases[3]
}

// orElse is *v, or or where v is nil.
func orElse(v *float64, or float64) float64 {
	if v == nil {
		return or
	}
	return *v
}

// documentFirstResources are rs in start order with the document's
// Navigation Timing row first.
func documentFirstResources(rs []results.Resource) []results.Resource {
	out := slices.Clone(rs)
	slices.SortStableFunc(out, func(a, b results.Resource) int {
		if a.Navigation != b.Navigation {
			if a.Navigation {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.StartMs, b.StartMs)
	})
	return out
}
