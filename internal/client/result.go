package client

import (
	"cmp"
	"context"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/visual"
)

// ResourceTiming is one Resource Timing entry, times in milliseconds since
// navigation start.
type ResourceTiming struct {
	URL           string  `json:"url"`
	Protocol      string  `json:"protocol"` // nextHopProtocol: "http/1.1", "h2", "h3"
	StartMs       float64 `json:"start_ms"`
	ResponseEndMs float64 `json:"response_end_ms"`
	TransferBytes int64   `json:"transfer_bytes"` // header and body bytes on the wire (0 if from cache)
	Status        int     `json:"status"`         // HTTP status, 0 if the browser did not expose it
	Phases
}

// Phases are when a Resource Timing entry's phases began, in ms since
// navigation start, as the browser exposed them: 0 where it did not (a
// cross-origin response without Timing-Allow-Origin, a client that does
// not say). A reused connection's DNS and connect phases take no time;
// TLSStartMs is 0 without TLS or with a reused connection.
type Phases struct {
	DNSStartMs      float64 `json:"dns_start_ms"`
	ConnectStartMs  float64 `json:"connect_start_ms"`
	ConnectEndMs    float64 `json:"connect_end_ms"`
	TLSStartMs      float64 `json:"tls_start_ms"`
	RequestStartMs  float64 `json:"request_start_ms"`
	ResponseStartMs float64 `json:"response_start_ms"`
}

// PageMetrics is what the page reports after its load event, in milliseconds
// since navigation start (Navigation Timing level 2: startTime is 0).
type PageMetrics struct {
	// DocumentURL is the URL of the document whose load was measured (its
	// navigation entry's name): the page asked for, unless a redirect or
	// the page's own scripts navigated the tab elsewhere (a page recorded
	// doing so has the other document too: www.bbc.co.uk sends a browser
	// outside the UK to www.bbc.com); "" when the browser did not say.
	DocumentURL      string `json:"document_url,omitempty"`
	DocumentProtocol string `json:"document_protocol"`
	DocumentStatus   int    `json:"document_status"`
	// DocumentTransferBytes is the document's transferSize: 0 when it came
	// from the browser's cache.
	DocumentTransferBytes int64   `json:"document_transfer_bytes"`
	TTFBMs                float64 `json:"ttfb_ms"` // responseStart of the document
	// RequestStartMs is the document's requestStart: when its request
	// began (0 for a client that does not say).
	RequestStartMs float64 `json:"request_start_ms"`
	// TTFBUnknown says the browser's responseStart is not the first byte
	// (Firefox 153's for an HTTP/1.1 document: its requestStart, give or
	// take 0.1 ms): the record leaves such a TTFB out.
	TTFBUnknown bool    `json:"ttfb_unknown,omitempty"`
	DCLMs       float64 `json:"dcl_ms"`    // domContentLoadedEventStart: DOMContentLoaded fires
	OnLoadMs    float64 `json:"onload_ms"` // loadEventStart: the load event fires (HAR's onLoad)
	PLTMs       float64 `json:"plt_ms"`    // loadEventEnd: the page load time
	// Resources are the Resource Timing entries of the page, and Document
	// the document's Navigation Timing entry in the same terms (zero for a
	// client that gives none).
	Resources []ResourceTiming `json:"resources"`
	Document  ResourceTiming   `json:"document"`
	// FCPMs is First Contentful Paint (Paint Timing) and LCPMs the latest
	// Largest Contentful Paint candidate, read with the other metrics, or
	// up to 0.5 s later when the first paint came after the load event (a
	// visual load reads both again after it settled); 0 if the browser
	// reported none.
	FCPMs float64 `json:"fcp_ms"`
	LCPMs float64 `json:"lcp_ms"`
	// Images is the number of <img> elements; BrokenImages those with a
	// source whose load ended without an image (not found, or not
	// decodable), and BrokenImageURLs the first MaxBrokenListed of their
	// URLs. An image still waiting (lazy, below the viewport) is not
	// broken.
	Images          int      `json:"images"`
	BrokenImages    int      `json:"broken_images"`
	BrokenImageURLs []string `json:"broken_image_urls"`
	// UnknownHosts are the requests to hosts the testbed does not serve,
	// listed by browsers asked to (Request.ListUnknownHosts).
	UnknownHosts UnknownHostRequests `json:"unknown_hosts"`
	// HeldNavigations are the page's navigations of the tab to documents
	// the recording lacks, which the browser held (Request.Documents), as
	// "METHOD URL": the first MaxBrokenListed.
	HeldNavigations []string `json:"held_navigations,omitempty"`
}

// UnknownHostRequests are the requests of a load that failed because the
// testbed serves no such host (the browser could not resolve the name): a
// recording that lacks the host. They never reach a server.
type UnknownHostRequests struct {
	// Count is how many; Requests lists the first MaxBrokenListed as
	// "METHOD URL".
	Count    int      `json:"count"`
	Requests []string `json:"requests"`
}

// Add notes one such request, "METHOD URL".
func (u *UnknownHostRequests) Add(request string) {
	u.Count++
	if len(u.Requests) < MaxBrokenListed {
		u.Requests = append(u.Requests, request)
	}
}

// UnknownHostLog gathers a tab's UnknownHostRequests as its network events
// arrive: each browser tells it when a request is sent, when it finished
// and when it failed, by the browser's id of the request. Safe for
// concurrent use; the zero value is empty.
type UnknownHostLog struct {
	mu      sync.Mutex
	pending map[string]string // "METHOD URL" of the requests not yet finished, by id
	failed  UnknownHostRequests
}

// Sent notes that request id, "METHOD URL", was sent.
func (l *UnknownHostLog) Sent(id, request string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pending == nil {
		l.pending = map[string]string{}
	}
	l.pending[id] = request
}

// Finished notes that request id ended; unknownHost says it failed because
// its host did not resolve, which lists it.
func (l *UnknownHostLog) Finished(id string, unknownHost bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if request, ok := l.pending[id]; ok && unknownHost {
		l.failed.Add(request)
	}
	delete(l.pending, id)
}

// Take returns the requests so far and forgets them (the first load of a
// repeat visit is not the measured one); a nil log has none.
func (l *UnknownHostLog) Take() UnknownHostRequests {
	if l == nil {
		return UnknownHostRequests{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.failed
	l.failed = UnknownHostRequests{}
	return out
}

// TTFBMeasured says whether TTFBMs is the document's first byte.
func (m PageMetrics) TTFBMeasured() bool { return !m.TTFBUnknown }

// MaxBrokenListed bounds PageMetrics.BrokenImageURLs.
const MaxBrokenListed = 200

// Request says what page to load and how.
type Request struct {
	// URL is the document to load.
	URL string
	// Protocol is forced for every request of the load, or under a
	// Discovery rule, h3 is offered (factor.H3) or not.
	Protocol factor.Protocol
	// Discovery is how the browser learns of h3: forced (the zero value
	// too) or discovered through the servers' Alt-Svc or an HTTPS record.
	Discovery factor.Discovery
	// Fallback is, under a Discovery rule, the TCP protocol the servers
	// speak beside the h3 they offer: the run's TCP protocol compared
	// (h1 in a run of h1 against h3), h2 (the zero value too) otherwise.
	Fallback factor.Protocol
	// DNS is how the browser finds the hosts: pinned to Addrs (the zero
	// value too), or resolved at Resolver (port 53).
	DNS      factor.DNS
	Resolver netip.Addr
	// Hosts are the origin host names (HTTP/3 is forced on host:443).
	Hosts []string
	// Addrs maps each host to its IP in the testbed: the browser resolves
	// the page's names to these and to nothing else.
	Addrs map[string]netip.Addr
	// SPKIHash is the base64 SHA-256 of the origins' certificate key
	// (Chromium accepts the certificate by it).
	SPKIHash string
	// CAFile is the PEM file of the run's certificate authority (Firefox
	// trusts it in its profile).
	CAFile string
	// Expected are the absolute URLs that must load for the load to count.
	Expected []string
	// VerifyHosts, if not nil, are a live page's hosts whose requests
	// must all come over Protocol (what loads is not known beforehand,
	// so Expected is empty): a request to one of them over another
	// protocol fails the load; requests to other hosts are not judged
	// (LiveVerdict counts them).
	VerifyHosts []string
	// Visit is factor.FirstVisit (the zero value) or factor.RepeatVisit.
	Visit factor.Visit
	// Ready runs once the client can load (a fresh browser started, the
	// earlier loads' browsers gone) and before the load's first request:
	// the testbed's last preparations (its network quiet, its counts
	// taken, its capture started), overlapping the browser's start. Its
	// error fails the load. Nil: nothing.
	Ready func(context.Context) error
	// BetweenVisits runs after a repeat visit's first load, with the browser
	// on about:blank; it closes the servers' connections. Nil: nothing.
	BetweenVisits func(context.Context) error
	// Navigating runs right before the measured visit's navigation starts,
	// and Loaded when it has ended: what is measured over the timed load
	// (the parties' CPU) is read then. Nil: nothing.
	Navigating func()
	// Loaded runs once the measured visit's metrics are read, while the
	// browser still holds its connections (servers read their records
	// then). Nil: nothing.
	Loaded func()
	// HARPath, if set, receives the measured visit's HAR 1.2: the built-in
	// loader's own, or Chromium's from its DevTools network events.
	HARPath string
	// NetLogDir, if set, receives the browser's own log of its network
	// activity from its start to its end (a repeat visit's two loads):
	// Chromium's NetLog (chromium-netlog.json, for netlog-viewer) or
	// Firefox's HTTP log (firefox.moz_log and one file per child process,
	// as about:logging writes them). Browsers run fresh for it.
	NetLogDir string
	// Visual captures the measured visit's frames and computes its visual
	// metrics (Chromium only). It costs CPU during the load.
	Visual bool
	// Deterministic injects DeterministicJS(ClockStart) into every
	// document, so that the page's time and random numbers are the same
	// on every load; ClockStart is when the page was recorded (zero:
	// DefaultClockStartMs).
	Deterministic bool
	ClockStart    time.Time
	// Viewport is the page's viewport; zero: factor.DefaultViewport.
	Viewport factor.Viewport
	// ExcuseImage, if set, says whether a broken image of this URL is the
	// recording's fault rather than the load's (the recording lacks it,
	// or holds no image for it): such images do not fail the load. Nil:
	// every broken image fails it.
	ExcuseImage func(url string) bool
	// Documents, if not nil, are the URLs without query the tab may go to
	// (site.Site.Documents): a navigation the page makes to any other
	// document is held before it starts, where the browser can
	// (HoldJS), and listed in PageMetrics.HeldNavigations; the tab stays
	// on the page, as it did where the page was recorded.
	Documents []string
	// ListUnknownHosts asks the browser to list the requests it could not
	// send because their host is none of Hosts (PageMetrics.UnknownHosts):
	// a recording's servers cannot count what never reaches them. It
	// costs the browser its network events during the load.
	ListUnknownHosts bool
	// UserAgentSuffix, if set, ends the browser's own User-Agent (a live
	// site's operators can tell the benchmark's loads from their
	// users').
	UserAgentSuffix string
	// CacheAllowed accepts resources that came from the browser's cache
	// (no bytes transferred) whatever protocol they name: the site is
	// cacheable and this is a repeat visit.
	CacheAllowed bool
}

// PaintWait bounds how long a browser's load whose first paint came
// after its load event waits for it.
const PaintWait = 500 * time.Millisecond

// DefaultLoadTimeout bounds a browser's load when its Timeout is zero.
const DefaultLoadTimeout = 60 * time.Second

// CheckBrowserRequest says what a browser cannot do of req: a protocol it
// does not know, or a net log from a warm browser (which writes one log
// for many loads).
func CheckBrowserRequest(req Request, warm bool) error {
	if req.Protocol.NextHop() == "" {
		return fmt.Errorf("load: unknown protocol %q", req.Protocol)
	}
	if warm && req.NetLogDir != "" {
		return fmt.Errorf("load: a net log needs a fresh browser, not a warm one")
	}
	return nil
}

// PageLoader loads pages: the Chromium loader or the built-in loader.
type PageLoader interface {
	Load(ctx context.Context, req Request) (Result, error)
}

// Result is one page load. A load with Failure set is a failed load: its
// metrics must never be averaged with those of good loads.
type Result struct {
	Requested factor.Protocol `json:"requested"`
	PageMetrics
	// Failure says why the load failed; empty for a verified load.
	Failure string `json:"failure,omitempty"`
	// Visit is the kind of visit measured.
	Visit factor.Visit `json:"visit"`
	// FirstVisitPLTMs is the PLT of a repeat visit's unmeasured first load.
	FirstVisitPLTMs float64 `json:"first_visit_plt_ms,omitempty"`
	// BrowserStartMs is the time to start the browser, before navigation.
	BrowserStartMs float64 `json:"browser_start_ms"`
	// ViewportWidth and ViewportHeight are the page's viewport in CSS
	// pixels, ViewportScale its device pixels per CSS pixel and
	// ViewportMobile whether it was a mobile browser's; zeros for a loader
	// without one.
	ViewportWidth  int     `json:"viewport_width,omitempty"`
	ViewportHeight int     `json:"viewport_height,omitempty"`
	ViewportScale  float64 `json:"viewport_scale,omitempty"`
	ViewportMobile bool    `json:"viewport_mobile,omitempty"`
	// UserAgent is the User-Agent the tab sent when the request gave a
	// suffix; "" when it sent its own.
	UserAgent string `json:"user_agent,omitempty"`
	// Frames are a visual load's frames, in time order from navigation
	// start; Visual their metrics and VisualComputeMs the time it took to
	// decode the frames and compute them.
	Frames          []Frame         `json:"-"`
	Visual          *visual.Metrics `json:"-"`
	VisualComputeMs float64         `json:"-"`
	// WallMs is the whole load as the harness saw it: browser start,
	// navigation, metrics read-out and browser shutdown.
	WallMs float64 `json:"wall_ms"`
}

// Landed is the document the tab ended on when it is not the page asked
// for, url; "" when it is (or the browser did not say).
func (m PageMetrics) Landed(url string) string {
	if m.DocumentURL == "" || sameDocument(m.DocumentURL, url) {
		return ""
	}
	return m.DocumentURL
}

// sameDocument says whether URLs a and b name the same document: the
// same scheme, host, path ("" is "/") and query, whatever the fragment.
func sameDocument(a, b string) bool {
	ua, errA := url.Parse(a)
	ub, errB := url.Parse(b)
	if errA != nil || errB != nil {
		return a == b
	}
	path := func(u *url.URL) string { return cmp.Or(u.EscapedPath(), "/") }
	return strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host) && path(ua) == path(ub) && ua.RawQuery == ub.RawQuery
}

// OK reports whether the load was verified.
func (r Result) OK() bool { return r.Failure == "" }

// Verify lists what is wrong with metrics m of a load of req: a document or
// resource over another protocol than requested, a missing or failed
// resource, a broken image. An empty list means the load is verified.
func Verify(req Request, m PageMetrics) []string {
	var problems []string
	want := req.wanted()
	if !req.allows(m.DocumentProtocol) && !(req.CacheAllowed && m.DocumentTransferBytes == 0) {
		problems = append(problems, fmt.Sprintf("document over %q, requested %s", m.DocumentProtocol, want))
	}
	switch left := m.Landed(req.URL) != ""; {
	case m.DocumentStatus == 0 || m.DocumentStatus == 200:
	case left:
		problems = append(problems, fmt.Sprintf("the tab left the page for %.200s (a redirect, or the page's scripts navigated it), which answered %d", m.DocumentURL, m.DocumentStatus))
	default:
		problems = append(problems, fmt.Sprintf("document status %d", m.DocumentStatus))
	}
	if m.PLTMs <= 0 {
		problems = append(problems, "no load event end")
	}
	byURL := map[string]ResourceTiming{}
	for _, r := range m.Resources {
		byURL[r.URL] = r
	}
	missing, wrongProto, badStatus := 0, 0, 0
	var example string
	for _, u := range req.Expected {
		r, ok := byURL[u]
		switch {
		case !ok:
			missing++
			example = u + " missing"
		case req.CacheAllowed && r.TransferBytes == 0:
			// from the browser's cache: no protocol was used
		case !req.allows(r.Protocol):
			wrongProto++
			example = fmt.Sprintf("%s over %q", u, r.Protocol)
		case r.Status != 0 && r.Status != 200:
			badStatus++
			example = fmt.Sprintf("%s status %d", u, r.Status)
		}
	}
	if missing > 0 {
		problems = append(problems, fmt.Sprintf("%d of %d resources missing", missing, len(req.Expected)))
	}
	if wrongProto > 0 {
		problems = append(problems, fmt.Sprintf("%d resources not over %s", wrongProto, want))
	}
	if badStatus > 0 {
		problems = append(problems, fmt.Sprintf("%d resources with a status other than 200", badStatus))
	}
	problems = append(problems, quicBeforeOffer(req, m)...)
	if n := unexcusedBroken(req, m); n > 0 {
		problems = append(problems, fmt.Sprintf("%d of %d images broken", n, m.Images))
	}
	if v := LiveVerdictOf(req, m); v.WrongProtocol > 0 {
		problems = append(problems, fmt.Sprintf("%d requests to %s not over %s", v.WrongProtocol, strings.Join(req.VerifyHosts, ", "), want))
		example = v.Example
	}
	if len(problems) > 0 && example != "" {
		problems = append(problems, "e.g. "+example)
	}
	return problems
}

// unexcusedBroken counts m's broken images that req does not excuse; those
// beyond the listed URLs count as unexcused.
func unexcusedBroken(req Request, m PageMetrics) int {
	if req.ExcuseImage == nil {
		return m.BrokenImages
	}
	n := m.BrokenImages - len(m.BrokenImageURLs)
	for _, u := range m.BrokenImageURLs {
		if !req.ExcuseImage(u) {
			n++
		}
	}
	return max(n, 0)
}

// LiveVerdict is how a live load's requests divide (Request.VerifyHosts).
type LiveVerdict struct {
	// Verified came over the protocol asked for from a host it is asked
	// of; WrongProtocol came over another; Excluded went to other hosts
	// the load may reach (Addrs), or did not say their protocol (a
	// response from the cache of a service worker); Unpinned went to
	// hosts it may not reach (never sent: UnknownHosts lists them).
	Verified, WrongProtocol, Excluded, Unpinned int
	// Example is the first request over another protocol, with it, and
	// ExcludedExample the first excluded request.
	Example, ExcludedExample string
}

// LiveVerdictOf divides m's resources as req's VerifyHosts say; zero for
// a load that is not a live one.
func LiveVerdictOf(req Request, m PageMetrics) LiveVerdict {
	var v LiveVerdict
	if req.VerifyHosts == nil {
		return v
	}
	want := req.Protocol.NextHop()
	for _, r := range m.Resources {
		u, err := url.Parse(r.URL)
		switch {
		case err == nil && !req.Addrs[u.Hostname()].IsValid():
			v.Unpinned++
		case err != nil || !slices.Contains(req.VerifyHosts, u.Hostname()) || r.Protocol == "":
			v.Excluded++
			if v.ExcludedExample == "" {
				v.ExcludedExample = fmt.Sprintf("%.200s over %q", r.URL, r.Protocol)
			}
		case r.Protocol == want || (req.CacheAllowed && r.TransferBytes == 0):
			v.Verified++
		default:
			v.WrongProtocol++
			if v.Example == "" {
				v.Example = fmt.Sprintf("%.200s over %q", r.URL, r.Protocol)
			}
		}
	}
	return v
}
