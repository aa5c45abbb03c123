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
	connect, tls := harPhases[2], harPhases[3]
	if r.Protocol == "h3" {
		connect = quicPhases[2]
	}
	at := func(v *float64, or float64) float64 {
		if v == nil {
			return or
		}
		return *v
	}
	req, resp := *r.RequestStartMs, *r.ResponseStartMs
	dns, conn := at(r.DNSStartMs, req), at(r.ConnectStartMs, req)
	connEnd := at(r.ConnectEndMs, conn)
	tlsAt := at(r.TLSStartMs, connEnd)
	if tlsAt < conn || r.Protocol == "h3" {
		tlsAt = connEnd // no TLS phase of its own: none, or QUIC's handshake holds it
	}
	phases := []drawnPhase{
		{harPhases[0], r.StartMs, min(dns, conn, req)},
		{harPhases[1], dns, conn},
		{connect, conn, tlsAt},
		{tls, tlsAt, connEnd},
		{harPhases[0], connEnd, req},
		{harPhases[5], req, resp},
		{harPhases[6], resp, r.ResponseEndMs},
	}
	return slices.DeleteFunc(phases, func(p drawnPhase) bool { return p.to <= p.from })
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
