package client

import (
	"fmt"
	"math"
	"net/url"

	"github.com/quicbench/quicbench/internal/factor"
)

// ProtocolUse is what a load's requests used, as its browser reported
// them: the document and its Resource Timing entries, those that came
// from the browser's cache (no bytes on a repeat visit with the cache on)
// left out. Under a discovery rule a load may be mixed: this is its mix.
type ProtocolUse struct {
	// H3Requests and TCPRequests count requests over h3 and over TCP
	// (h2, http/1.1); H3Bytes and TCPBytes their transfer bytes (header
	// and body, 0 for a cross-origin entry that does not say).
	H3Requests, TCPRequests int
	H3Bytes, TCPBytes       int64
	// FirstH3Ms is when the first request over h3 was sent (sentAt), in
	// ms since navigation start; -1 when none was.
	FirstH3Ms float64
	// TCPAfterOffer counts requests over TCP sent once their host
	// had offered h3 (its first TCP response carried Alt-Svc, or on a
	// repeat visit the first load's did): the browser kept a TCP
	// connection, QUIC lost its race, or it was marked broken.
	TCPAfterOffer int
}

// H3RequestShare is the share of requests over h3, 0 to 1; 0 for none.
func (u ProtocolUse) H3RequestShare() float64 {
	return share(float64(u.H3Requests), float64(u.H3Requests+u.TCPRequests))
}

// H3ByteShare is the share of transfer bytes over h3, 0 to 1.
func (u ProtocolUse) H3ByteShare() float64 {
	return share(float64(u.H3Bytes), float64(u.H3Bytes+u.TCPBytes))
}

func share(part, whole float64) float64 {
	if whole == 0 {
		return 0
	}
	return part / whole
}

// entries are the document and the resources of m, the document first.
func entries(m PageMetrics) []ResourceTiming {
	doc := m.Document
	if doc.Protocol == "" {
		doc.Protocol = m.DocumentProtocol
	}
	if doc.TransferBytes == 0 {
		doc.TransferBytes = m.DocumentTransferBytes
	}
	return append([]ResourceTiming{doc}, m.Resources...)
}

// fromCache says whether entry r came from the browser's cache under req.
func fromCache(req Request, r ResourceTiming) bool {
	return req.CacheAllowed && r.TransferBytes == 0
}

// ProtocolUseOf is what m's requests used under req.
func ProtocolUseOf(req Request, m PageMetrics) ProtocolUse {
	use := ProtocolUse{FirstH3Ms: -1}
	known := offeredAt(req, m)
	for _, r := range entries(m) {
		if r.Protocol == "" || fromCache(req, r) {
			continue
		}
		if r.Protocol == "h3" {
			use.H3Requests++
			use.H3Bytes += r.TransferBytes
			if at := sentAt(r); use.FirstH3Ms < 0 || at < use.FirstH3Ms {
				use.FirstH3Ms = at
			}
			continue
		}
		use.TCPRequests++
		use.TCPBytes += r.TransferBytes
		if at, ok := known[hostOf(r.URL)]; ok && sentAt(r) > at {
			use.TCPAfterOffer++
		}
	}
	return use
}

// offeredAt is when, in ms since navigation start, each host of m could
// first have been known to offer h3 under req's discovery rule: under
// https-rr and on a repeat visit from the start (the DNS answer, or the
// first load, told it), else at the first byte of its first response over
// TCP, which carried Alt-Svc. A
// host absent was never known to; nil where nothing is discovered.
func offeredAt(req Request, m PageMetrics) map[string]float64 {
	if !req.offersH3() {
		return nil
	}
	known := map[string]float64{}
	for _, r := range entries(m) {
		host := hostOf(r.URL)
		if host == "" || r.Protocol == "" || r.Protocol == "h3" || fromCache(req, r) {
			continue
		}
		at := r.ResponseStartMs
		if at <= 0 {
			at = r.ResponseEndMs
		}
		if prev, ok := known[host]; !ok || at < prev {
			known[host] = at
		}
	}
	if req.Visit.Loads() > 1 || req.Discovery == factor.DiscoveryHTTPSRR {
		for _, h := range req.Hosts {
			known[h] = 0 // from the first load, or from the DNS before the first connection
		}
	}
	return known
}

// sentAt is when entry r's request was sent, in ms since navigation
// start: its requestStart, or where the browser does not say, its start
// (a request may wait for a connection after its start, and a browser may
// give it to a QUIC connection that became known meanwhile).
func sentAt(r ResourceTiming) float64 {
	if r.RequestStartMs > 0 {
		return r.RequestStartMs
	}
	return r.StartMs
}

// hostOf is the host name of rawURL, "" if it has none.
func hostOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// offersH3 says whether the servers offer h3 to a browser left to
// discover it: an h3 load under a discovery rule.
func (req Request) offersH3() bool {
	return req.Discovery.Discovers() && req.Protocol == factor.H3
}

// wanted names the protocols req allows, for messages: "h3" or "h3 or h2".
func (req Request) wanted() string {
	if req.offersH3() {
		return "h3 or " + req.FallbackProtocol().NextHop()
	}
	return req.Protocol.NextHop()
}

// FallbackProtocol is the TCP protocol the servers speak beside the h3
// they offer under a discovery rule: Fallback, h2 if unset.
func (req Request) FallbackProtocol() factor.Protocol {
	if req.Fallback == "" {
		return factor.H2
	}
	return req.Fallback
}

// SpeaksHTTP2 says whether a browser for req may speak HTTP/2: not for
// an h1 load, nor under a discovery rule whose servers speak h1 beside
// h3.
func (req Request) SpeaksHTTP2() bool {
	if req.Protocol == factor.H1 {
		return false
	}
	return !(req.Discovery.Discovers() && req.FallbackProtocol() == factor.H1)
}

// allows says whether a request over protocol (a nextHopProtocol) is one
// req's rule allows at all: under a forced rule, or where h3 is not
// offered, only the requested protocol; where h3 is offered to a browser
// left to discover it, h3 or the TCP protocol the servers speak (h2).
func (req Request) allows(protocol string) bool {
	if protocol == req.Protocol.NextHop() {
		return true
	}
	return req.offersH3() && protocol == req.FallbackProtocol().NextHop()
}

// quicBeforeOffer lists m's requests over h3 sent before their
// host could have offered h3 under req's discovery rule (offeredAt): a
// browser that discovers could not have sent them, so the load was not
// what the rule says. One line with a count and an example; nil if none.
func quicBeforeOffer(req Request, m PageMetrics) []string {
	known := offeredAt(req, m)
	if known == nil {
		return nil
	}
	n, example := 0, ""
	for _, r := range entries(m) {
		if r.Protocol != "h3" {
			continue
		}
		at, ok := known[hostOf(r.URL)]
		if !ok {
			at = math.Inf(1)
		}
		if sentAt(r) < at {
			n++
			if example == "" {
				example = fmt.Sprintf("%.200s sent at %.1f ms", r.URL, sentAt(r))
			}
		}
	}
	if n == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d requests over h3 before their host offered it over TCP (e.g. %s): h3 was not discovered", n, example)}
}
