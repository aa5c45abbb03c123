// Package loader is quicbench's built-in page loader: a Go HTTP client that
// loads a page like a browser without one. It fetches the document, finds
// its sub-resources (images, scripts, stylesheets, CSS url()), fetches them
// as they are found (HTTP/1.1: at most 6 connections per origin; h2 and h3:
// one multiplexed connection per origin), records each resource's timings,
// and writes HAR 1.2. It runs no JavaScript and renders nothing: its PLT is
// the time until the last discovered resource has arrived.
//
// discover.go finds the sub-resources; this file loads.
package loader

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/quic-go/quic-go/http3"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/har"
	"github.com/quicbench/quicbench/internal/site"
)

// MaxConnsPerOrigin is HTTP/1.1's connection limit per origin, as in
// Chromium.
const MaxConnsPerOrigin = 6

// Kind is the built-in loader as a client: what it can do is
// factor.ClientLoader's capabilities.
func Kind() client.Kind {
	return client.Kind{Client: factor.ClientLoader, New: func(env client.Env) client.Browser {
		return &Loader{NewClient: env.NewGoClient, Timeout: env.Timeout, Version: env.Version}
	}}
}

// Loader loads pages with Go's HTTP clients.
type Loader struct {
	// NewClient makes the fresh HTTP clients of a load.
	NewClient client.NewGoClient
	// Timeout bounds one load (both visits of a repeat visit). Zero: 60 s.
	Timeout time.Duration
	// Version names quicbench in the HAR's creator.
	Version string
}

// Close has nothing to stop: every load makes its own clients.
func (l *Loader) Close() {}

// Load loads req.URL (twice for a repeat visit, measuring the second),
// returns the metrics and writes the measured visit's HAR to req.HARPath if
// set. Like the Chromium loader, it returns a Result with Failure set for a
// failed load, and an error only if ctx was canceled.
func (l *Loader) Load(ctx context.Context, req client.Request) (res client.Result, _ error) {
	res = client.Result{Requested: req.Protocol, Visit: req.Visit}
	if res.Visit == "" {
		res.Visit = factor.FirstVisit
	}
	wallStart := time.Now()
	defer func() { res.WallMs = ms(time.Since(wallStart)) }()
	timeout := l.Timeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	loadCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	fail := func(format string, args ...any) (client.Result, error) {
		res.Failure = fmt.Sprintf(format, args...)
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		return res, nil
	}
	if req.Ready != nil {
		if err := req.Ready(loadCtx); err != nil {
			return fail("prepare the load: %v", err)
		}
	}
	sessions := tls.NewLRUClientSessionCache(256)
	cache := &httpCache{entries: map[string]*cached{}}
	if res.Visit == factor.RepeatVisit {
		first, failure := l.firstVisit(ctx, loadCtx, req, sessions, cache, timeout)
		if failure != "" {
			return fail("%s", failure)
		}
		res.FirstVisitPLTMs = first.PLTMs
	}
	if req.Navigating != nil {
		req.Navigating()
	}
	m, h, err := l.visit(loadCtx, req, sessions, cache, res.Visit == factor.RepeatVisit)
	if req.Loaded != nil {
		req.Loaded()
	}
	if err != nil {
		if loadCtx.Err() != nil && ctx.Err() == nil {
			return fail("timed out after %v", timeout)
		}
		return fail("%v", err)
	}
	res.PageMetrics = m
	if problems := client.Verify(req, m); len(problems) > 0 {
		res.Failure = strings.Join(problems, "; ")
	}
	if req.HARPath != "" {
		if err := h.WriteFile(req.HARPath); err != nil {
			return fail("%v", err)
		}
	}
	return res, nil
}

// firstVisit makes a repeat visit's first, unmeasured visit within
// loadCtx (which ends at timeout; ctx is the caller's) and then the
// request's step between visits. It returns the visit's metrics, or a
// failure text.
func (l *Loader) firstVisit(ctx, loadCtx context.Context, req client.Request, sessions tls.ClientSessionCache, cache *httpCache, timeout time.Duration) (client.PageMetrics, string) {
	first, _, err := l.visit(loadCtx, req, sessions, cache, false)
	if err != nil {
		if loadCtx.Err() != nil && ctx.Err() == nil {
			return first, fmt.Sprintf("first visit: timed out after %v", timeout)
		}
		return first, fmt.Sprintf("first visit: %v", err)
	}
	firstReq := req
	firstReq.CacheAllowed = false
	if problems := client.Verify(firstReq, first); len(problems) > 0 {
		return first, "first visit: " + strings.Join(problems, "; ")
	}
	if req.BetweenVisits != nil {
		if err := req.BetweenVisits(loadCtx); err != nil {
			return first, fmt.Sprintf("between visits: %v", err)
		}
	}
	return first, ""
}

// visit is one load of the page with a fresh client (so fresh
// connections), sharing TLS sessions and the HTTP cache with other visits
// of the same load. repeat sends h3 requests as 0-RTT-eligible.
func (l *Loader) visit(ctx context.Context, req client.Request, sessions tls.ClientSessionCache, cache *httpCache, repeat bool) (client.PageMetrics, *har.HAR, error) {
	var m client.PageMetrics
	maxConns := 0
	if req.Protocol == factor.H1 {
		maxConns = MaxConnsPerOrigin
	}
	c, closeClient, err := l.NewClient(req.Protocol, sessions, maxConns)
	if err != nil {
		return m, nil, err
	}
	defer closeClient()
	docURL, err := url.Parse(req.URL)
	if err != nil {
		return m, nil, fmt.Errorf("document URL: %w", err)
	}
	p := &pageLoad{client: c, start: time.Now(), cache: cache, repeat: repeat, proto: req.Protocol,
		har: har.New("quicbench-loader", l.Version), seen: map[string]bool{docURL.String(): true}}
	p.har.Log.Pages = append(p.har.Log.Pages, har.Page{StartedDateTime: p.start, ID: "page_1", Title: req.URL})

	doc := p.fetch(ctx, docURL.String())
	if doc.err != nil {
		return m, nil, fmt.Errorf("document: %w", doc.err)
	}
	m.DocumentProtocol, m.DocumentStatus, m.DocumentTransferBytes = doc.timing.Protocol, doc.timing.Status, doc.timing.TransferBytes
	m.TTFBMs = doc.responseStartMs
	refs := Discover(docURL, doc.body)
	m.Images = countImages(doc.body)
	m.DCLMs = ms(time.Since(p.start)) // no scripts run: the DOM is ready once parsed
	for _, r := range refs {
		p.spawn(ctx, r)
	}
	p.wg.Wait()
	m.OnLoadMs = ms(time.Since(p.start))
	m.PLTMs = m.OnLoadMs
	p.har.Log.Pages[0].PageTimings = har.PageTimings{OnContentLoad: m.DCLMs, OnLoad: m.OnLoadMs}
	m.Resources, m.BrokenImageURLs = p.resources()
	m.BrokenImages = len(m.BrokenImageURLs)
	m.BrokenImageURLs = m.BrokenImageURLs[:min(len(m.BrokenImageURLs), client.MaxBrokenListed)]
	if ctx.Err() != nil {
		return m, nil, ctx.Err()
	}
	return m, p.har, nil
}

// pageLoad is the state of one visit.
type pageLoad struct {
	client *http.Client
	start  time.Time
	cache  *httpCache
	repeat bool
	proto  factor.Protocol
	wg     sync.WaitGroup

	mu      sync.Mutex
	seen    map[string]bool
	fetched []*fetched
	har     *har.HAR
	// gates hold an h2 origin's requests until its first request has a
	// connection: Go's transport would otherwise dial one TLS connection
	// per request waiting for the first, where a browser opens one.
	gates map[string]chan struct{}
}

// gate returns a function that waits for rawURL's origin's connection and
// whether this request opens it (then it must call opened).
func (p *pageLoad) gate(rawURL string) (wait func(context.Context), opened func()) {
	noop := func() {}
	if p.proto != factor.H2 {
		return func(context.Context) {}, noop
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return func(context.Context) {}, noop
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gates == nil {
		p.gates = map[string]chan struct{}{}
	}
	if ch, ok := p.gates[u.Host]; ok {
		return func(ctx context.Context) {
			select {
			case <-ch:
			case <-ctx.Done():
			}
		}, noop
	}
	ch := make(chan struct{})
	p.gates[u.Host] = ch
	var once sync.Once
	return func(context.Context) {}, func() { once.Do(func() { close(ch) }) }
}

// fetched is one resource's outcome.
type fetched struct {
	ref             Ref
	timing          client.ResourceTiming
	responseStartMs float64
	body            []byte
	err             error
}

// spawn fetches r unless it was fetched already; a stylesheet's url()s are
// fetched in turn.
func (p *pageLoad) spawn(ctx context.Context, r Ref) {
	p.mu.Lock()
	if p.seen[r.URL] {
		p.mu.Unlock()
		return
	}
	p.seen[r.URL] = true
	p.mu.Unlock()
	p.wg.Go(func() {
		f := p.fetch(ctx, r.URL)
		f.ref = r
		p.mu.Lock()
		p.fetched = append(p.fetched, f)
		p.mu.Unlock()
		if f.err == nil && r.Kind == KindStylesheet {
			base, _ := url.Parse(r.URL)
			for _, u := range CSSURLs(base, f.body) {
				p.spawn(ctx, Ref{URL: u, Kind: KindCSSURL})
			}
		}
	})
}

// resources returns the Resource Timing entries of the fetched resources,
// in the order their fetches started, and the URLs of the images that did
// not arrive or are no image a browser decodes (site.ImageBytesOK).
func (p *pageLoad) resources() (out []client.ResourceTiming, broken []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range p.fetched {
		if f.err != nil {
			if f.ref.Kind == KindImage {
				broken = append(broken, f.timing.URL)
			}
			continue // missing, as in a browser's Resource Timing
		}
		out = append(out, f.timing)
		if f.ref.Kind == KindImage {
			if !site.ImageBytesOK(f.body) {
				broken = append(broken, f.timing.URL)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b client.ResourceTiming) int { return cmp.Compare(a.StartMs, b.StartMs) })
	return out, broken
}

// fetch GETs rawURL (or takes it from the cache), timing each phase, and
// adds its HAR entry.
func (p *pageLoad) fetch(ctx context.Context, rawURL string) *fetched {
	f := &fetched{}
	startedAt := time.Now()
	f.timing = client.ResourceTiming{URL: rawURL, StartMs: ms(startedAt.Sub(p.start))}
	if c := p.cache.fresh(rawURL, startedAt); c != nil {
		f.body, f.timing.Status, f.timing.Protocol = c.body, 200, c.protocol
		f.timing.ResponseEndMs = ms(time.Since(p.start))
		f.responseStartMs = f.timing.ResponseEndMs
		return f // from the cache: no bytes transferred
	}
	wait, opened := p.gate(rawURL)
	defer opened() // also when the request fails before a connection
	wait(ctx)
	t := phases{onConn: opened}
	req, err := p.request(ctx, rawURL, &t)
	if err != nil {
		f.err = err
		return f
	}
	resp, err := p.client.Do(req)
	if err != nil {
		f.err = err
		return f
	}
	p.readResponse(f, resp, startedAt, &t)
	return f
}

// request is the GET of rawURL a browser would send, traced into t: with
// early data for a repeat visit's h3 request, gzip accepted and the
// cached copy's validator.
func (p *pageLoad) request(ctx context.Context, rawURL string, t *phases) (*http.Request, error) {
	method := http.MethodGet
	if p.repeat && p.proto == factor.H3 {
		method = http3.MethodGet0RTT // early data when a ticket allows it; the server sees GET
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, t.trace()), method, rawURL, nil)
	if err != nil {
		return nil, err
	}
	// As a browser asks: the body then comes as sent, compressed, so that
	// its bytes on the wire are counted (Go would decompress it unasked).
	req.Header.Set("Accept-Encoding", "gzip")
	if etag := p.cache.validator(rawURL); etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	return req, nil
}

// readResponse reads resp's body into f, decoded, with its timing and
// sizes, caches it or takes the cached body it revalidated, and adds its
// HAR entry; the request began at startedAt, traced into t.
func (p *pageLoad) readResponse(f *fetched, resp *http.Response, startedAt time.Time, t *phases) {
	rawURL := f.timing.URL
	headersAt := time.Now()
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	endAt := time.Now()
	if err != nil {
		f.err = fmt.Errorf("%s: body: %w", rawURL, err)
		return
	}
	f.timing.Protocol = nextHop(resp.ProtoMajor)
	f.timing.Status = resp.StatusCode
	headerBytes := headerSize(resp)
	f.timing.TransferBytes = headerBytes + int64(len(body))
	wireBytes := int64(len(body))
	if body, err = site.DecodeContent(resp.Header.Get("Content-Encoding"), body); err != nil {
		f.err = fmt.Errorf("%s: %w", rawURL, err)
		return
	}
	f.responseStartMs = ms(headersAt.Sub(p.start))
	f.timing.ResponseEndMs = ms(endAt.Sub(p.start))
	if resp.StatusCode == http.StatusNotModified {
		body = p.cache.body(rawURL)
		f.timing.Status = 200 // revalidated: the cached body is current
	}
	f.body = body
	if resp.StatusCode == http.StatusOK {
		p.cache.store(rawURL, resp, body, f.timing.Protocol, endAt)
	} else if resp.StatusCode != http.StatusNotModified {
		f.err = fmt.Errorf("%s: status %d", rawURL, resp.StatusCode)
	}
	p.addEntry(rawURL, startedAt, headersAt, endAt, t, resp, wireBytes, headerBytes)
}

// addEntry appends the HAR entry of one response.
func (p *pageLoad) addEntry(rawURL string, startedAt, headersAt, endAt time.Time, t *phases, resp *http.Response, bodyBytes, headerBytes int64) {
	timings := t.timings(startedAt, headersAt, endAt)
	e := har.Entry{
		Pageref: "page_1", StartedDateTime: startedAt, Time: timings.Total(), Timings: timings,
		Request: har.Request{Method: http.MethodGet, URL: rawURL, HTTPVersion: resp.Proto, Cookies: []har.NameValue{},
			Headers: []har.NameValue{}, QueryString: []har.NameValue{}, HeadersSize: -1, BodySize: 0},
		Response: har.Response{Status: resp.StatusCode, StatusText: http.StatusText(resp.StatusCode), HTTPVersion: resp.Proto,
			Cookies: []har.NameValue{}, Headers: harHeaders(resp.Header), RedirectURL: resp.Header.Get("Location"),
			Content: har.Content{Size: bodyBytes, MimeType: resp.Header.Get("Content-Type")}, HeadersSize: headerBytes, BodySize: bodyBytes},
		ServerIPAddress: t.remoteIP, Connection: t.localPort,
	}
	p.mu.Lock()
	p.har.Log.Entries = append(p.har.Log.Entries, e)
	p.mu.Unlock()
}

func harHeaders(h http.Header) []har.NameValue {
	out := []har.NameValue{}
	for k, vs := range h {
		for _, v := range vs {
			out = append(out, har.NameValue{Name: k, Value: v})
		}
	}
	return out
}

// headerSize estimates the response's header bytes as HTTP/1.1 would
// write them (h2 and h3 compress them).
func headerSize(resp *http.Response) int64 {
	n := int64(len(resp.Proto) + 1 + len(resp.Status) + 2) // status line
	for k, vs := range resp.Header {
		for _, v := range vs {
			n += int64(len(k) + len(v) + 4)
		}
	}
	return n + 2
}

func nextHop(major int) string {
	switch major {
	case 1:
		return "http/1.1"
	case 2:
		return "h2"
	case 3:
		return "h3"
	}
	return ""
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// phases records httptrace events of one request.
type phases struct {
	mu                                    sync.Mutex
	getConn, gotConn, connectStart        time.Time
	connectDone, tlsStart, tlsDone, wrote time.Time
	reused                                bool
	remoteIP, localPort                   string
	// onConn, if set, runs when the request has its connection.
	onConn func()
}

func (t *phases) trace() *httptrace.ClientTrace {
	set := func(dst *time.Time) {
		t.mu.Lock()
		if dst.IsZero() {
			*dst = time.Now()
		}
		t.mu.Unlock()
	}
	return &httptrace.ClientTrace{
		GetConn: func(string) { set(&t.getConn) },
		GotConn: func(info httptrace.GotConnInfo) {
			set(&t.gotConn)
			if t.onConn != nil {
				t.onConn()
			}
			t.mu.Lock()
			t.reused = info.Reused
			if info.Conn != nil {
				t.remoteIP, _, _ = strings.Cut(info.Conn.RemoteAddr().String(), ":")
				_, t.localPort, _ = strings.Cut(info.Conn.LocalAddr().String(), ":")
			}
			t.mu.Unlock()
		},
		ConnectStart:      func(string, string) { set(&t.connectStart) },
		ConnectDone:       func(string, string, error) { set(&t.connectDone) },
		TLSHandshakeStart: func() { set(&t.tlsStart) },
		TLSHandshakeDone:  func(tls.ConnectionState, error) { set(&t.tlsDone) },
		WroteRequest:      func(httptrace.WroteRequestInfo) { set(&t.wrote) },
	}
}

// timings turns the events into HAR phases; phases whose events did not
// happen (a reused connection; h3 reports fewer events) are -1, and the
// time is then counted as wait.
func (t *phases) timings(start, headers, end time.Time) har.Timings {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := func(a, b time.Time) float64 {
		if a.IsZero() || b.IsZero() || b.Before(a) {
			return -1
		}
		return ms(b.Sub(a))
	}
	h := har.Timings{Blocked: -1, DNS: -1, Connect: -1, SSL: -1, Receive: ms(end.Sub(headers))}
	sent := start
	if !t.reused {
		if !t.connectStart.IsZero() {
			h.Blocked = d(start, t.connectStart)
			h.Connect = d(t.connectStart, t.gotConn)
		}
		h.SSL = d(t.tlsStart, t.tlsDone)
	}
	if t.wrote.After(headers) { // h2 can report the write after the response began
		t.wrote = headers
	}
	if !t.wrote.IsZero() {
		sent = t.wrote
		from := t.gotConn
		if from.IsZero() {
			from = start
		}
		h.Send = max(0, d(from, t.wrote))
	}
	h.Wait = ms(headers.Sub(sent))
	if h.Connect < 0 && h.Blocked < 0 && !t.wrote.IsZero() && !t.gotConn.IsZero() {
		h.Blocked = d(start, t.gotConn)
	}
	return h
}

// httpCache is a minimal browser cache for repeat visits: responses with
// Cache-Control max-age are fresh until it runs out; an ETag is sent back
// as If-None-Match.
type httpCache struct {
	mu      sync.Mutex
	entries map[string]*cached
}

type cached struct {
	body     []byte
	etag     string
	protocol string
	expires  time.Time
}

func (c *httpCache) store(url string, resp *http.Response, body []byte, protocol string, now time.Time) {
	cc := resp.Header.Get("Cache-Control")
	if strings.Contains(cc, "no-store") {
		return
	}
	e := &cached{body: body, etag: resp.Header.Get("ETag"), protocol: protocol}
	for _, d := range strings.Split(cc, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(d), "max-age="); ok {
			if secs, err := strconv.Atoi(v); err == nil {
				e.expires = now.Add(time.Duration(secs) * time.Second)
			}
		}
	}
	if e.expires.IsZero() && e.etag == "" {
		return
	}
	c.mu.Lock()
	c.entries[url] = e
	c.mu.Unlock()
}

// fresh returns the cached response of url if it is still fresh.
func (c *httpCache) fresh(url string, now time.Time) *cached {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[url]; e != nil && now.Before(e.expires) {
		return e
	}
	return nil
}

func (c *httpCache) validator(url string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[url]; e != nil {
		return e.etag
	}
	return ""
}

func (c *httpCache) body(url string) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[url]; e != nil {
		return e.body
	}
	return nil
}
