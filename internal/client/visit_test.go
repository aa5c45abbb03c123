package client

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/factor"
)

// scriptedTab is a Tab whose page is a script: a unit test of the visit
// driver's logic, which every browser's tab shares.
type scriptedTab struct {
	metrics    PageMetrics
	pending    int   // how many reads of the metrics still find no load end
	navigation error // what navigating to the page returns
	hangs      bool  // navigating to the page waits for the load's end
	settleErr  error // what Settle returns
	unknownOn  map[int]string
	// what the driver did: navigations, with "(settled)" where it
	// waited for the browser to settle
	navigations []string
	unknown     *UnknownHostLog
	harForgot   int
	harWritten  *PageMetrics
	closed      []bool
	viewport    factor.Viewport
	paint       string // what PaintJS reads (FCP, LCP); "" is [12.5, 40]
}

func (t *scriptedTab) AddScript(context.Context, string) error    { return nil }
func (t *scriptedTab) SetUserAgent(context.Context, string) error { return nil }

func (t *scriptedTab) SetViewport(_ context.Context, vp factor.Viewport) (factor.Viewport, error) {
	t.viewport = vp
	return vp, nil
}
func (t *scriptedTab) MarkUnknown(m *PageMetrics) { m.TTFBUnknown = true }
func (t *scriptedTab) Settle(context.Context) error {
	t.navigations = append(t.navigations, "(settled)")
	return t.settleErr
}
func (t *scriptedTab) Close(failed bool) { t.closed = append(t.closed, failed) }
func (t *scriptedTab) CaptureFrames(context.Context) (FrameCapture, error) {
	return nil, errors.New("no frames")
}

func (t *scriptedTab) WatchNetwork(_ context.Context, har bool, unknown *UnknownHostLog) (HARLog, error) {
	t.unknown = unknown
	if !har {
		return nil, nil
	}
	return scriptedHAR{t}, nil
}

// scriptedHAR is the HAR log of a scriptedTab.
type scriptedHAR struct{ t *scriptedTab }

func (h scriptedHAR) Reset() { h.t.harForgot++ }
func (h scriptedHAR) Write(_ context.Context, _, _ string, m PageMetrics) error {
	h.t.harWritten = &m
	return nil
}

func (t *scriptedTab) Navigate(ctx context.Context, url string) error {
	t.navigations = append(t.navigations, url)
	n := len(t.navigations)
	if request, ok := t.unknownOn[n]; ok && t.unknown != nil {
		t.unknown.Sent(request, request)
		t.unknown.Finished(request, true)
	}
	if url == "about:blank" {
		return nil
	}
	if t.hangs {
		<-ctx.Done()
		return ctx.Err()
	}
	return t.navigation
}

func (t *scriptedTab) Evaluate(_ context.Context, js string, out any) error {
	switch js {
	case MetricsJS:
		if t.pending > 0 {
			t.pending--
			return json.Unmarshal([]byte("null"), out)
		}
		b, _ := json.Marshal(t.metrics)
		return json.Unmarshal(b, out)
	case PaintJS:
		return json.Unmarshal([]byte(cmp.Or(t.paint, "[12.5, 40]")), out)
	}
	return fmt.Errorf("unexpected script %.20q", js)
}

// opener opens one tab, or fails with err.
type opener struct {
	tab *scriptedTab
	err error
}

func (o opener) OpenTab(context.Context, Request) (Tab, error) {
	if o.err != nil {
		return nil, o.err
	}
	return o.tab, nil
}

func pageRequest() Request {
	return Request{URL: "https://www.page.test/", Protocol: factor.H2, Expected: []string{"https://www.page.test/a.png"}}
}

func goodTab() *scriptedTab {
	return &scriptedTab{metrics: goodMetrics("h2", []string{"https://www.page.test/a.png"}), pending: 1}
}

// TestARepeatVisitForgetsTheFirst: the first visit is made, verified and
// left, the browser settles and the servers' connections are closed, then
// the measured visit is made; the network seen before the measured visit
// is forgotten, and the tab is closed as a success.
func TestARepeatVisitForgetsTheFirst(t *testing.T) {
	tab := goodTab()
	tab.unknownOn = map[int]string{1: "GET https://first.unknown.test/"}
	req := pageRequest()
	req.Visit, req.HARPath, req.ListUnknownHosts = factor.RepeatVisit, "page.har", true
	between := 0
	req.BetweenVisits = func(context.Context) error {
		between++
		tab.navigations = append(tab.navigations, "(between)")
		return nil
	}
	res, err := LoadIn(t.Context(), opener{tab: tab}, func() {}, req, false, time.Second)
	if err != nil || res.Failure != "" {
		t.Fatalf("load: %v, failure %q", err, res.Failure)
	}
	if want := []string{req.URL, "about:blank", "(settled)", "(between)", req.URL}; !slices.Equal(tab.navigations, want) {
		t.Errorf("navigations %q, want %q", tab.navigations, want)
	}
	if between != 1 || tab.harForgot != 1 || res.FirstVisitPLTMs != 100 || res.Visit != factor.RepeatVisit {
		t.Errorf("between visits %d, HAR forgotten %d times, first PLT %v, visit %q", between, tab.harForgot, res.FirstVisitPLTMs, res.Visit)
	}
	if res.UnknownHosts.Count != 0 {
		t.Errorf("the first visit's unknown hosts were counted: %+v", res.UnknownHosts)
	}
	if tab.harWritten == nil || !tab.harWritten.TTFBUnknown || !res.TTFBUnknown {
		t.Errorf("HAR %v and result not of the marked metrics", tab.harWritten)
	}
	if res.FCPMs != 12.5 || res.LCPMs != 40 || !slices.Equal(tab.closed, []bool{false}) {
		t.Errorf("FCP %v, closed %v", res.FCPMs, tab.closed)
	}
}

// TestAnLCPSeenAfterTheLoadEventIsRead: a load whose metrics have FCP but
// no LCP yet (the observer is handed the candidate a task after its paint)
// reads the paint timings again until LCP is there; a page that never gets
// an LCP keeps its FCP and an LCP of 0.
func TestAnLCPSeenAfterTheLoadEventIsRead(t *testing.T) {
	for _, c := range []struct {
		paint    string
		fcp, lcp float64
	}{{"[30, 45]", 30, 45}, {"[30, 0]", 30, 0}} {
		tab := goodTab()
		tab.metrics.FCPMs, tab.metrics.LCPMs, tab.paint = 30, 0, c.paint
		res, err := LoadIn(t.Context(), opener{tab: tab}, func() {}, pageRequest(), false, time.Second)
		if err != nil || res.Failure != "" {
			t.Fatalf("load: %v, failure %q", err, res.Failure)
		}
		if res.FCPMs != c.fcp || res.LCPMs != c.lcp {
			t.Errorf("paint %s: FCP %v, LCP %v; want %v, %v", c.paint, res.FCPMs, res.LCPMs, c.fcp, c.lcp)
		}
	}
}

// TestFailedVisitKeepsItsUnknownHosts: a measured visit that fails still
// says which requests went to unknown hosts (what a recording lacks), writes
// no HAR and closes its tab as failed.
func TestFailedVisitKeepsItsUnknownHosts(t *testing.T) {
	tab := goodTab()
	tab.navigation = errors.New("net::ERR_CONNECTION_RESET")
	tab.unknownOn = map[int]string{1: "GET https://cdn.unknown.test/x.js"}
	req := pageRequest()
	req.HARPath, req.ListUnknownHosts = "page.har", true
	res, err := LoadIn(t.Context(), opener{tab: tab}, func() {}, req, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failure != "navigation: net::ERR_CONNECTION_RESET" {
		t.Errorf("failure %q", res.Failure)
	}
	if res.UnknownHosts.Count != 1 || tab.harWritten != nil || !slices.Equal(tab.closed, []bool{true}) {
		t.Errorf("unknown hosts %+v, HAR %v, closed %v", res.UnknownHosts, tab.harWritten, tab.closed)
	}
}

// TestVisitFailures: each way a load fails gives its failure text, and a
// failed first visit stops the load.
func TestVisitFailures(t *testing.T) {
	tests := []struct {
		name   string
		tab    func(*scriptedTab)
		req    func(*Request)
		open   error
		want   string
		closed []bool
	}{
		{"browser does not start", nil, nil, errors.New("no display"), "browser start: no display", nil},
		{"timeout", func(t *scriptedTab) { t.hangs = true }, nil, nil, "timed out after 50ms", []bool{true}},
		{"never loads", func(t *scriptedTab) { t.pending = 1 << 30 }, nil, nil, "timed out after 50ms waiting for loadEventEnd", []bool{true}},
		{"wrong protocol", func(t *scriptedTab) { t.metrics.DocumentProtocol = "h3" }, nil, nil, `document over "h3", requested h2`, []bool{true}},
		{"first visit wrong", func(t *scriptedTab) { t.metrics.Resources = nil },
			func(r *Request) { r.Visit = factor.RepeatVisit }, nil, "first visit: 1 of 1 resources missing", []bool{true}},
		{"no settling", func(t *scriptedTab) { t.settleErr = errors.New("context canceled") },
			func(r *Request) { r.Visit = factor.RepeatVisit }, nil, "settle between visits: context canceled", []bool{true}},
		{"frames", nil, func(r *Request) { r.Visual = true }, nil, "no frames", []bool{true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab := goodTab()
			if tt.tab != nil {
				tt.tab(tab)
			}
			req := pageRequest()
			if tt.req != nil {
				tt.req(&req)
			}
			timeout := time.Second
			if strings.HasPrefix(tt.want, "timed out") {
				timeout = 50 * time.Millisecond
			}
			res, err := LoadIn(t.Context(), opener{tab: tab, err: tt.open}, func() {}, req, false, timeout)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(res.Failure, tt.want) || !slices.Equal(tab.closed, tt.closed) {
				t.Errorf("failure %q, closed %v; want %q, closed %v", res.Failure, tab.closed, tt.want, tt.closed)
			}
		})
	}
}

// TestCanceledLoadIsAnError: a load whose run was canceled returns the
// cancellation, not only a failure.
func TestCanceledLoadIsAnError(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	tab := goodTab()
	tab.hangs = true
	res, err := LoadIn(ctx, opener{tab: tab}, func() {}, pageRequest(), false, time.Second)
	if !errors.Is(err, context.Canceled) || res.Failure == "" {
		t.Errorf("error %v, failure %q", err, res.Failure)
	}
}

// TestViewport: a load is made at the request's viewport, or the default
// one, and its result says which.
func TestViewport(t *testing.T) {
	phone := factor.Viewport{Width: 411, Height: 731, Scale: 2.625, Mobile: true}
	for _, c := range []struct{ asked, want factor.Viewport }{{factor.Viewport{}, factor.DefaultViewport()}, {phone, phone}} {
		tab := goodTab()
		req := pageRequest()
		req.Viewport = c.asked
		res, err := LoadIn(t.Context(), opener{tab: tab}, func() {}, req, false, time.Second)
		if err != nil || !res.OK() {
			t.Fatalf("load: %v, %q", err, res.Failure)
		}
		got := factor.Viewport{Width: res.ViewportWidth, Height: res.ViewportHeight, Scale: res.ViewportScale, Mobile: res.ViewportMobile}
		if tab.viewport != c.want || got != c.want {
			t.Errorf("asked %v: the tab was set to %v and the result says %v, want %v", c.asked, tab.viewport, got, c.want)
		}
	}
}
