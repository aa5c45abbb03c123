package firefox

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/factor"
)

// Load starts a fresh browser, loads req.URL, reads the metrics, verifies
// them, and stops the browser. It returns a client.Result with Failure set
// for any failed load, and an error only if ctx was canceled.
func (f *Firefox) Load(ctx context.Context, req client.Request) (res client.Result, _ error) {
	res.Requested = req.Protocol
	wallStart := time.Now()
	defer func() { res.WallMs = ms(time.Since(wallStart)) }()
	if err := client.CheckBrowserRequest(req, f.Warm); err != nil {
		return res, err
	}
	timeout := cmp.Or(f.Timeout, client.DefaultLoadTimeout)
	loadCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	fail := func(failure string) (client.Result, error) {
		res.Failure = failure
		return res, ctx.Err()
	}
	startAt := time.Now()
	t, err := f.openTab(loadCtx, req)
	if err != nil {
		return fail(fmt.Sprintf("browser start: %v", err))
	}
	defer func() { t.close(res.Failure != "") }()
	res.BrowserStartMs = ms(time.Since(startAt))
	f.closing.Wait() // the last load's browser, before this one's timed load
	if failure := t.visits(loadCtx, req, timeout, &res); failure != "" {
		return fail(failure)
	}
	return res, nil
}

// tab is the browsing context a load runs in.
type tab struct {
	bidi    *bidi
	context string
	// preload is the id of the tab's preload script, once added.
	preload string
	// har records the tab's network events for a HAR and unknown lists
	// the requests to unknown hosts, under subscription; nil: not asked
	// for.
	har          *harRecorder
	unknown      *unknownHostWatcher
	subscription string
	// version is quicbench's, the HAR's creator's.
	version string
	// close disposes of the tab (and of a fresh browser); failed says the
	// load failed.
	close func(failed bool)
}

// openTab opens the tab for a load of req: a tab in a new user context of
// the warm browser, or a fresh browser's first tab.
func (f *Firefox) openTab(ctx context.Context, req client.Request) (*tab, error) {
	if f.Warm {
		return f.warmTab(ctx, req)
	}
	p, err := f.start(ctx, req)
	if err != nil {
		return nil, err
	}
	var tree struct {
		Contexts []struct {
			Context string `json:"context"`
		} `json:"contexts"`
	}
	if err := p.bidi.call(ctx, "browsingContext.getTree", map[string]any{"maxDepth": 0}, &tree); err != nil {
		p.close()
		return nil, err
	}
	if len(tree.Contexts) == 0 {
		p.close()
		return nil, fmt.Errorf("the browser has no tab")
	}
	// The browser shuts down in the background, while the harness records
	// the load; the next timed load waits for it.
	return &tab{bidi: p.bidi, context: tree.Contexts[0].Context, version: f.Version, close: func(bool) { f.closeLater(p) }}, nil
}

// visits sets up the tab, makes a repeat visit's first load and then the
// measured one, filling res. It returns a failure text.
func (t *tab) visits(ctx context.Context, req client.Request, timeout time.Duration, res *client.Result) string {
	if failure := t.setUp(ctx, req); failure != "" {
		return failure
	}
	res.ViewportWidth, res.ViewportHeight = client.ViewportWidth, client.ViewportHeight
	res.Visit = req.Visit
	if res.Visit == "" {
		res.Visit = factor.FirstVisit
	}
	if res.Visit == factor.RepeatVisit {
		if failure := t.firstVisit(ctx, req, timeout, res); failure != "" {
			return failure
		}
	}
	if t.har != nil {
		t.har.reset() // the measured visit only
	}
	if t.unknown != nil {
		t.unknown.take()
	}
	return t.measuredVisit(ctx, req, timeout, res)
}

// setUp adds the page's scripts, sets the viewport and watches the
// network (watchNetwork). It returns a failure text.
func (t *tab) setUp(ctx context.Context, req client.Request) string {
	source := client.SetupJS
	if req.Deterministic {
		source = client.DeterministicJS(req.ClockStart) + "\n" + source
	}
	var added struct {
		Script string `json:"script"`
	}
	if err := t.bidi.call(ctx, "script.addPreloadScript", map[string]any{
		"functionDeclaration": "() => {\n" + source + "\n}", "contexts": []string{t.context},
	}, &added); err != nil {
		return fmt.Sprintf("set up page: %v", err)
	}
	t.preload = added.Script
	if err := t.bidi.call(ctx, "browsingContext.setViewport", map[string]any{
		"context":  t.context,
		"viewport": map[string]int{"width": client.ViewportWidth, "height": client.ViewportHeight},
	}, nil); err != nil {
		return fmt.Sprintf("set up page: viewport: %v", err)
	}
	return t.watchNetwork(ctx, req)
}

// watchNetwork subscribes to the tab's network events when req asks for a
// HAR or for the requests to unknown hosts. It returns a failure text.
func (t *tab) watchNetwork(ctx context.Context, req client.Request) string {
	if req.HARPath != "" {
		t.har = newHARRecorder()
	}
	if req.ListUnknownHosts {
		t.unknown = newUnknownHostWatcher()
	}
	if t.har == nil && t.unknown == nil {
		return ""
	}
	t.bidi.setOnEvent(t.networkEvent)
	var sub struct {
		Subscription string `json:"subscription"`
	}
	if err := t.bidi.call(ctx, "session.subscribe", map[string]any{"events": harEvents(), "contexts": []string{t.context}}, &sub); err != nil {
		return fmt.Sprintf("watch the network: %v", err)
	}
	t.subscription = sub.Subscription
	return ""
}

// networkEvent hands a network event to the tab's watchers.
func (t *tab) networkEvent(method string, params json.RawMessage) {
	if t.har != nil {
		t.har.event(method, params)
	}
	if t.unknown != nil {
		t.unknown.event(method, params)
	}
}

// firstVisit makes a repeat visit's first, unmeasured load, verifies it and
// leaves the page. It returns a failure text.
func (t *tab) firstVisit(ctx context.Context, req client.Request, timeout time.Duration, res *client.Result) string {
	first, failure := t.navigate(ctx, req.URL, timeout)
	if failure != "" {
		return "first visit: " + failure
	}
	firstReq := req
	firstReq.CacheAllowed = false
	if problems := client.Verify(firstReq, first); len(problems) > 0 {
		return "first visit: " + strings.Join(problems, "; ")
	}
	res.FirstVisitPLTMs = first.PLTMs
	if err := t.bidi.call(ctx, "browsingContext.navigate", map[string]any{
		"context": t.context, "url": "about:blank", "wait": "complete",
	}, nil); err != nil {
		return fmt.Sprintf("leave the page between visits: %v", err)
	}
	if req.BetweenVisits != nil {
		if err := req.BetweenVisits(ctx); err != nil {
			return fmt.Sprintf("between visits: %v", err)
		}
	}
	return ""
}

// measuredVisit makes the measured load, with its frames if asked for, and
// verifies it. It returns a failure text.
func (t *tab) measuredVisit(ctx context.Context, req client.Request, timeout time.Duration, res *client.Result) string {
	var frames *frameGrabber
	if req.Visual {
		frames = t.startFrames(ctx)
		defer frames.abort()
	}
	if req.Navigating != nil {
		req.Navigating()
	}
	m, failure := t.navigate(ctx, req.URL, timeout)
	if req.Loaded != nil {
		req.Loaded()
	}
	if failure != "" {
		return failure
	}
	res.PageMetrics = m
	// Firefox gives an HTTP/1.1 document's requestStart as its
	// responseStart (0.1 ms after it, whatever the RTT): no first byte.
	res.TTFBUnknown = m.DocumentProtocol == factor.H1.NextHop() && m.DocumentTransferBytes > 0
	if m.FCPMs == 0 {
		if failure := t.awaitPaint(ctx, res); failure != "" {
			return failure
		}
	}
	if frames != nil {
		if failure := t.finishVisual(ctx, frames, res); failure != "" {
			return failure
		}
	}
	if t.unknown != nil {
		res.UnknownHosts = t.unknown.take()
	}
	if t.har != nil {
		t.har.settle(ctx)
		if err := t.har.build(req.URL, t.version, res.PageMetrics).WriteFile(req.HARPath); err != nil {
			return err.Error()
		}
	}
	if problems := client.Verify(req, res.PageMetrics); len(problems) > 0 {
		return strings.Join(problems, "; ")
	}
	return ""
}

// finishVisual keeps capturing while the page settles after its load
// event, reads its paint metrics again, and computes the visual metrics of
// its frames. It returns a failure text.
func (t *tab) finishVisual(ctx context.Context, frames *frameGrabber, res *client.Result) string {
	if client.Pause(ctx, client.SettleAfterLoad) != nil {
		return "timed out while the page settled after its load event"
	}
	var paint []float64
	if err := t.evaluate(ctx, client.PaintJS, &paint); err != nil || len(paint) != 2 {
		return fmt.Sprintf("read FCP and LCP: %v", err)
	}
	res.FCPMs, res.LCPMs = paint[0], paint[1]
	captured, err := frames.stop(ctx)
	if err != nil {
		return err.Error()
	}
	if err := client.SetVisual(res, captured); err != nil {
		return err.Error()
	}
	return ""
}

// navigate loads url in the tab and reads the page's metrics once its load
// event has ended. It returns a failure text for a failed load.
func (t *tab) navigate(ctx context.Context, url string, timeout time.Duration) (client.PageMetrics, string) {
	if err := t.bidi.call(ctx, "browsingContext.navigate", map[string]any{
		"context": t.context, "url": url, "wait": "complete",
	}, nil); err != nil {
		if ctx.Err() != nil {
			return client.PageMetrics{}, fmt.Sprintf("timed out after %v", timeout)
		}
		return client.PageMetrics{}, fmt.Sprintf("navigation: %v", err)
	}
	for {
		var m *client.PageMetrics
		if err := t.evaluate(ctx, client.MetricsJS, &m); err != nil {
			if ctx.Err() != nil {
				return client.PageMetrics{}, fmt.Sprintf("timed out after %v waiting for loadEventEnd", timeout)
			}
			return client.PageMetrics{}, fmt.Sprintf("read metrics: %v", err)
		}
		if m != nil {
			return *m, ""
		}
		if client.Pause(ctx, 20*time.Millisecond) != nil {
			return client.PageMetrics{}, fmt.Sprintf("timed out after %v waiting for loadEventEnd", timeout)
		}
	}
}

// awaitPaint reads FCP and LCP again for up to client.PaintWait: a page can paint
// its first content a frame after its load event. It returns a failure
// text; a page that paints nothing keeps FCP at 0.
func (t *tab) awaitPaint(ctx context.Context, res *client.Result) string {
	for deadline := time.Now().Add(client.PaintWait); time.Now().Before(deadline); {
		if client.Pause(ctx, 20*time.Millisecond) != nil {
			return "timed out waiting for the first paint"
		}
		var paint []float64
		if err := t.evaluate(ctx, client.PaintJS, &paint); err != nil || len(paint) != 2 {
			return fmt.Sprintf("read FCP and LCP: %v", err)
		}
		if res.FCPMs, res.LCPMs = paint[0], paint[1]; res.FCPMs > 0 {
			return ""
		}
	}
	return ""
}

// evaluate runs the expression js in the tab's page and decodes its value,
// passed through JSON, into out.
func (t *tab) evaluate(ctx context.Context, js string, out any) error {
	var r struct {
		Type   string `json:"type"`
		Result struct {
			Value *string `json:"value"`
		} `json:"result"`
		ExceptionDetails struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := t.bidi.call(ctx, "script.evaluate", map[string]any{
		"expression":   "JSON.stringify(" + js + ")",
		"target":       map[string]string{"context": t.context},
		"awaitPromise": false,
	}, &r); err != nil {
		return err
	}
	if r.Type != "success" {
		return fmt.Errorf("the script failed: %s", r.ExceptionDetails.Text)
	}
	if r.Result.Value == nil {
		return fmt.Errorf("the script gave no value")
	}
	return json.Unmarshal([]byte(*r.Result.Value), out)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
