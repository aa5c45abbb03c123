package server

import (
	"sync"

	"github.com/quicbench/quicbench/internal/site"
)

// MaxUnmatchedListed bounds the unmatched requests a Replay lists.
const MaxUnmatchedListed = 200

// MaxHeaderBytes is the most a request's header section (request line or
// pseudo-header fields and fields, its URL among them) may hold on every
// server stack quicbench runs, in bytes: Go's http.DefaultMaxHeaderBytes,
// set alike on the Go origin (h1, h2, h3), nginx, quiche and quinn, so
// that no protocol refuses a request another serves. quinn's HTTP
// library also takes URLs of at most MaxQuinnRequestTarget bytes.
const MaxHeaderBytes = 1 << 20

// MaxQuinnRequestTarget is the longest request target (path and query)
// quinn's server (through the http crate's Uri) accepts, in bytes: a site
// with a longer one is refused when quinn starts, rather than served
// without that request.
const MaxQuinnRequestTarget = 65534

// Replay is what a server's matching of requests against its site did
// (site.Matcher): requests answered with their exact target's response,
// with the nearest recorded query's (fuzzy), with the nearest recorded size
// of an image or media file (variant), or with 404 (unmatched), and the
// body bytes of the responses it sent. quicbench-h3's replay command
// answers in this form.
type Replay struct {
	Exact     int64 `json:"exact"`
	Fuzzy     int64 `json:"fuzzy"`
	Variant   int64 `json:"variant"`
	Unmatched int64 `json:"unmatched"`
	// UnmatchedRequests are the first MaxUnmatchedListed unmatched
	// requests as "METHOD URL".
	UnmatchedRequests []string `json:"unmatched_requests"`
	// HeldNavigations are the unmatched requests that were the tab's
	// navigations away from the page to URLs the recording lacks, which
	// the browser held (client.Request.Documents) and no server saw, as
	// "METHOD URL"; each is among UnmatchedRequests too.
	HeldNavigations []string `json:"held_navigations,omitempty"`
	// Variants are the first MaxUnmatchedListed requests answered with a
	// variant, as "METHOD URL TARGET": the request, then the recorded
	// request target (path and query) whose response answered it.
	Variants []string `json:"variants,omitempty"`
	// BodyBytes counts the bytes of the bodies sent (none for HEAD, 304
	// and 404 answers).
	BodyBytes int64 `json:"body_bytes"`
}

// Add returns r and o together, the list still bounded.
func (r Replay) Add(o Replay) Replay {
	return Replay{Exact: r.Exact + o.Exact, Fuzzy: r.Fuzzy + o.Fuzzy, Variant: r.Variant + o.Variant, Unmatched: r.Unmatched + o.Unmatched,
		UnmatchedRequests: boundedJoin(r.UnmatchedRequests, o.UnmatchedRequests),
		HeldNavigations:   boundedJoin(r.HeldNavigations, o.HeldNavigations), Variants: boundedJoin(r.Variants, o.Variants),
		BodyBytes: r.BodyBytes + o.BodyBytes}
}

// boundedJoin is a then b in a new slice of at most MaxUnmatchedListed.
func boundedJoin(a, b []string) []string {
	list := append(a[:len(a):len(a)], b...)
	return list[:min(len(list), MaxUnmatchedListed)]
}

// Requests counts the requests of every kind.
func (r Replay) Requests() int64 { return r.Exact + r.Fuzzy + r.Variant + r.Unmatched }

// ReplayLog gathers a server's Replay as it answers; safe for concurrent
// use. The zero value is empty.
type ReplayLog struct {
	mu sync.Mutex
	r  Replay
}

// Matched notes a request answered from the site as kind says, with a body
// of bodyBytes.
func (l *ReplayLog) Matched(kind site.MatchKind, bodyBytes int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch kind {
	case site.Fuzzy:
		l.r.Fuzzy++
	case site.Variant:
		l.r.Variant++
	default:
		l.r.Exact++
	}
	l.r.BodyBytes += int64(bodyBytes)
}

// VariantServed lists a request ("METHOD URL") answered with the variant
// recorded at target; Matched counts it.
func (l *ReplayLog) VariantServed(request, target string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.r.Variants) < MaxUnmatchedListed {
		l.r.Variants = append(l.r.Variants, request+" "+target)
	}
}

// Unmatched notes a request the site does not have, as "METHOD URL".
func (l *ReplayLog) Unmatched(request string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.r.Unmatched++
	if len(l.r.UnmatchedRequests) < MaxUnmatchedListed {
		l.r.UnmatchedRequests = append(l.r.UnmatchedRequests, request)
	}
}

// Take returns what was noted since the last Take, and starts anew.
func (l *ReplayLog) Take() Replay {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.r
	l.r = Replay{}
	return r
}
