package chromium

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/network"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/har"
)

// harRecorder collects the DevTools network events of one visit and turns
// them into HAR 1.2 the way DevTools' own export computes the timings.
// Chromium sends the events only with the Network domain enabled, and
// chromedp enables it (with DOM, CSS, Log and Inspector) on every tab it
// attaches to, HAR or not: all of chromedp's domains together cost 1.03 ×
// a bare navigation's CPU (BENCHMARKS.md, "Where the browser's CPU goes").
type harRecorder struct {
	mu       sync.Mutex
	order    []network.RequestID
	requests map[network.RequestID]*harRequest
}

type harRequest struct {
	url, method  string
	wallTime     time.Time
	response     *network.Response
	finishedAt   float64 // monotonic seconds; 0 until finished
	encodedBytes float64
	failed       string
}

func newHARRecorder() *harRecorder {
	return &harRecorder{requests: map[network.RequestID]*harRequest{}}
}

// Write writes to path the HAR of the requests since Reset, the page at
// pageURL with the page timings of m.
func (h *harRecorder) Write(_ context.Context, path, pageURL string, m client.PageMetrics) error {
	return h.build(pageURL, m).WriteFile(path)
}

// Reset forgets what was recorded (the first load of a repeat visit).
func (h *harRecorder) Reset() {
	h.mu.Lock()
	h.order, h.requests = nil, map[network.RequestID]*harRequest{}
	h.mu.Unlock()
}

// event is the chromedp.Listen callback: it only files the event.
func (h *harRecorder) event(ev any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		if e.Request == nil {
			return
		}
		if _, ok := h.requests[e.RequestID]; !ok {
			h.order = append(h.order, e.RequestID)
		}
		sec, frac := math.Modf(float64(e.WallTime))
		h.requests[e.RequestID] = &harRequest{url: e.Request.URL, method: e.Request.Method, wallTime: time.Unix(int64(sec), int64(frac*1e9))}
	case *network.EventResponseReceived:
		if r := h.requests[e.RequestID]; r != nil {
			r.response = e.Response
		}
	case *network.EventLoadingFinished:
		if r := h.requests[e.RequestID]; r != nil {
			r.finishedAt, r.encodedBytes = float64(e.Timestamp), e.EncodedDataLength
		}
	case *network.EventLoadingFailed:
		if r := h.requests[e.RequestID]; r != nil {
			r.failed = e.ErrorText
		}
	}
}

// build returns the HAR of the recorded requests with the page timings of m.
func (h *harRecorder) build(pageURL string, m client.PageMetrics) *har.HAR {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := har.New("quicbench-chromium", "")
	var start time.Time
	for _, id := range h.order {
		r := h.requests[id]
		if start.IsZero() || r.wallTime.Before(start) {
			start = r.wallTime
		}
		if r.response == nil || r.failed != "" {
			continue
		}
		out.Log.Entries = append(out.Log.Entries, r.entry())
	}
	slices.SortStableFunc(out.Log.Entries, func(a, b har.Entry) int { return a.StartedDateTime.Compare(b.StartedDateTime) })
	out.Log.Pages = append(out.Log.Pages, har.Page{StartedDateTime: start, ID: "page_1", Title: pageURL,
		PageTimings: har.PageTimings{OnContentLoad: m.DCLMs, OnLoad: m.OnLoadMs}})
	return out
}

// entry is one request as HAR, with DevTools' timing arithmetic: phases
// from the response's timing (ms after requestTime), receive up to
// loadingFinished.
func (r *harRequest) entry() har.Entry {
	resp := r.response
	e := har.Entry{Pageref: "page_1", StartedDateTime: r.wallTime, ServerIPAddress: resp.RemoteIPAddress,
		Connection: fmt.Sprint(int64(resp.ConnectionID)),
		Request: har.Request{Method: r.method, URL: r.url, HTTPVersion: resp.Protocol, Cookies: []har.NameValue{}, Headers: []har.NameValue{},
			QueryString: []har.NameValue{}, HeadersSize: -1, BodySize: 0},
		Response: har.Response{Status: int(resp.Status), StatusText: resp.StatusText, HTTPVersion: resp.Protocol, Cookies: []har.NameValue{},
			Headers: headerList(resp.Headers), Content: har.Content{Size: int64(r.encodedBytes), MimeType: resp.MimeType},
			HeadersSize: -1, BodySize: int64(r.encodedBytes)},
		Timings: har.Timings{Blocked: -1, DNS: -1, Connect: -1, SSL: -1},
	}
	t := resp.Timing
	if t == nil { // from the cache: no network phases
		return e
	}
	first := func(vs ...float64) float64 {
		for _, v := range vs {
			if v >= 0 {
				return v
			}
		}
		return 0
	}
	span := func(a, b float64) float64 {
		if a < 0 || b < 0 {
			return -1
		}
		return b - a
	}
	e.Timings.Blocked = first(t.DNSStart, t.ConnectStart, t.SendStart)
	e.Timings.DNS = span(t.DNSStart, t.DNSEnd)
	e.Timings.Connect = span(t.ConnectStart, t.ConnectEnd)
	e.Timings.SSL = span(t.SslStart, t.SslEnd)
	e.Timings.Send = math.Max(0, t.SendEnd-t.SendStart)
	e.Timings.Wait = math.Max(0, t.ReceiveHeadersEnd-t.SendEnd)
	if r.finishedAt > 0 {
		e.Timings.Receive = math.Max(0, (r.finishedAt-t.RequestTime)*1000-t.ReceiveHeadersEnd)
	}
	e.Time = e.Timings.Total()
	return e
}

func headerList(h network.Headers) []har.NameValue {
	out := []har.NameValue{}
	for k, v := range h {
		out = append(out, har.NameValue{Name: k, Value: fmt.Sprint(v)})
	}
	slices.SortFunc(out, func(a, b har.NameValue) int { return strings.Compare(a.Name, b.Name) })
	return out
}
