package firefox

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/har"
)

// harEvents are the BiDi network events a HAR is made of (and the requests
// to unknown hosts). Firefox sends them only to a session that subscribed,
// which adds a message per event to the load: quicbench subscribes only
// when a HAR or those requests are asked for.
func harEvents() []string {
	return []string{"network.beforeRequestSent", "network.responseCompleted", "network.fetchError"}
}

// harSettle bounds how long a HAR waits, after the load, for the events of
// requests it saw start.
const harSettle = time.Second

// harRecorder collects the network events of one visit and turns them into
// HAR 1.2.
type harRecorder struct {
	version  string // quicbench's, the HAR's creator's
	mu       sync.Mutex
	order    []string
	requests map[string]*harRequest
}

// harRequest is one request as its events describe it.
type harRequest struct {
	Request  bidiRequest   `json:"request"`
	Response *bidiResponse `json:"response"`
	done     bool
	failed   bool
}

// bidiRequest is BiDi's network.RequestData, as much as a HAR needs.
type bidiRequest struct {
	ID          string       `json:"request"`
	URL         string       `json:"url"`
	Method      string       `json:"method"`
	Headers     []bidiHeader `json:"headers"`
	HeadersSize int64        `json:"headersSize"`
	Timings     bidiTimings  `json:"timings"`
}

// bidiTimings are BiDi's network.FetchTimingInfo: milliseconds since
// 1970, 0 for a phase that did not happen (a reused connection has no DNS,
// connect or TLS).
type bidiTimings struct {
	RequestTime   float64 `json:"requestTime"`
	DNSStart      float64 `json:"dnsStart"`
	DNSEnd        float64 `json:"dnsEnd"`
	ConnectStart  float64 `json:"connectStart"`
	ConnectEnd    float64 `json:"connectEnd"`
	TLSStart      float64 `json:"tlsStart"`
	TLSEnd        float64 `json:"tlsEnd"`
	RequestStart  float64 `json:"requestStart"`
	ResponseStart float64 `json:"responseStart"`
	ResponseEnd   float64 `json:"responseEnd"`
}

// bidiResponse is BiDi's network.ResponseData, as much as a HAR needs.
type bidiResponse struct {
	Protocol    string       `json:"protocol"`
	Status      int          `json:"status"`
	StatusText  string       `json:"statusText"`
	FromCache   bool         `json:"fromCache"`
	Headers     []bidiHeader `json:"headers"`
	MimeType    string       `json:"mimeType"`
	HeadersSize int64        `json:"headersSize"`
	BodySize    int64        `json:"bodySize"`
}

// bidiHeader is a header with its value as BiDi gives it.
type bidiHeader struct {
	Name  string `json:"name"`
	Value struct {
		Value string `json:"value"`
	} `json:"value"`
}

// newHARRecorder records a HAR whose creator is quicbench's version.
func newHARRecorder(version string) *harRecorder {
	return &harRecorder{version: version, requests: map[string]*harRequest{}}
}

// Write waits for the requests seen to settle and writes to path the HAR
// of those since Reset, the page at pageURL with the page timings of m.
func (h *harRecorder) Write(ctx context.Context, path, pageURL string, m client.PageMetrics) error {
	h.settle(ctx)
	return h.build(pageURL, h.version, m).WriteFile(path)
}

// Reset forgets what was recorded (the first load of a repeat visit).
func (h *harRecorder) Reset() {
	h.mu.Lock()
	h.order, h.requests = nil, map[string]*harRequest{}
	h.mu.Unlock()
}

// event files one network event; it runs on the connection's reading
// goroutine and never blocks.
func (h *harRecorder) event(method string, params json.RawMessage) {
	var e harRequest
	if json.Unmarshal(params, &e) != nil || !strings.HasPrefix(e.Request.URL, "http") {
		return // not a network request of the page (data:, blob:, about:)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.requests[e.Request.ID]
	if r == nil {
		h.order = append(h.order, e.Request.ID)
		r = &harRequest{}
		h.requests[e.Request.ID] = r
	}
	r.Request = e.Request
	switch method {
	case "network.responseCompleted":
		r.Response, r.done = e.Response, true
	case "network.fetchError":
		r.failed, r.done = true, true
	}
}

// settle waits up to harSettle for every request seen to complete or fail.
func (h *harRecorder) settle(ctx context.Context) {
	for deadline := time.Now().Add(harSettle); time.Now().Before(deadline); {
		h.mu.Lock()
		pending := slices.ContainsFunc(h.order, func(id string) bool { return !h.requests[id].done })
		h.mu.Unlock()
		if !pending || client.Pause(ctx, 10*time.Millisecond) != nil {
			return
		}
	}
}

// build returns the HAR of the completed requests with the page timings of
// m; version is quicbench's.
func (h *harRecorder) build(pageURL, version string, m client.PageMetrics) *har.HAR {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := har.New("quicbench-firefox", version)
	var start float64
	for _, id := range h.order {
		r := h.requests[id]
		if t := r.Request.Timings.RequestTime; t > 0 && (start == 0 || t < start) {
			start = t
		}
		if r.Response == nil || r.failed {
			continue
		}
		out.Log.Entries = append(out.Log.Entries, r.entry())
	}
	slices.SortStableFunc(out.Log.Entries, func(a, b har.Entry) int { return a.StartedDateTime.Compare(b.StartedDateTime) })
	out.Log.Pages = append(out.Log.Pages, har.Page{StartedDateTime: epochMs(start), ID: "page_1", Title: pageURL,
		PageTimings: har.PageTimings{OnContentLoad: m.DCLMs, OnLoad: m.OnLoadMs}})
	return out
}

// entry is one request as HAR, its phases from BiDi's fetch timings.
func (r *harRequest) entry() har.Entry {
	resp, t := r.Response, r.Request.Timings
	e := har.Entry{Pageref: "page_1", StartedDateTime: epochMs(t.RequestTime),
		Request: har.Request{Method: r.Request.Method, URL: r.Request.URL, HTTPVersion: resp.Protocol, Cookies: []har.NameValue{},
			Headers: headerList(r.Request.Headers), QueryString: []har.NameValue{}, HeadersSize: r.Request.HeadersSize},
		Response: har.Response{Status: resp.Status, StatusText: resp.StatusText, HTTPVersion: resp.Protocol, Cookies: []har.NameValue{},
			Headers: headerList(resp.Headers), Content: har.Content{Size: resp.BodySize, MimeType: resp.MimeType},
			HeadersSize: resp.HeadersSize, BodySize: resp.BodySize},
		Timings: har.Timings{Blocked: -1, DNS: -1, Connect: -1, SSL: -1},
	}
	if resp.FromCache || t.RequestStart == 0 {
		e.Response.BodySize = 0
		return e
	}
	span := func(a, b float64) float64 {
		if a == 0 || b == 0 {
			return -1
		}
		return math.Max(0, b-a)
	}
	firstNetwork := t.RequestStart
	for _, v := range []float64{t.ConnectStart, t.DNSStart} {
		if v > 0 {
			firstNetwork = v
		}
	}
	e.Timings.Blocked = math.Max(0, firstNetwork-t.RequestTime)
	e.Timings.DNS = span(t.DNSStart, t.DNSEnd)
	e.Timings.Connect = span(t.ConnectStart, t.ConnectEnd)
	e.Timings.SSL = span(t.TLSStart, t.TLSEnd)
	e.Timings.Wait = span(t.RequestStart, t.ResponseStart)
	e.Timings.Receive = span(t.ResponseStart, t.ResponseEnd)
	e.Time = e.Timings.Total()
	return e
}

// headerList is BiDi's headers as HAR's, in the order of their names.
func headerList(headers []bidiHeader) []har.NameValue {
	out := []har.NameValue{}
	for _, h := range headers {
		out = append(out, har.NameValue{Name: h.Name, Value: h.Value.Value})
	}
	slices.SortStableFunc(out, func(a, b har.NameValue) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// maxEpochMs is the last millisecond of the year 9999, the last a HAR's
// dates can hold.
const maxEpochMs = 253_402_300_799_999

// epochMs is ms milliseconds since 1970; the zero time for a value no
// clock gives (negative, past the year 9999, not a number).
func epochMs(ms float64) time.Time {
	if !(ms >= 0 && ms <= maxEpochMs) {
		return time.Time{}
	}
	return time.UnixMicro(int64(math.Round(ms * 1000))).UTC()
}
