package client

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/factor"
)

// Tab is a browser tab as the visit driver (LoadIn) sees it: the few steps
// every browser's protocol (Chromium's DevTools, Firefox's WebDriver BiDi)
// takes for a load. Each method takes the load's context, which ends at
// the load's timeout.
type Tab interface {
	// AddScript has source run in every document the tab loads, before
	// the page's own scripts.
	AddScript(ctx context.Context, source string) error
	// SetViewport sets the page's viewport: its size in CSS pixels, its
	// device pixel ratio and, where the browser can, a mobile browser's
	// layout by the page's <meta name=viewport>. It returns the viewport
	// it set (Mobile false where the browser cannot).
	SetViewport(ctx context.Context, vp factor.Viewport) (factor.Viewport, error)
	// SetUserAgent makes the tab send ua as its User-Agent, in its
	// requests' header field and as navigator.userAgent.
	SetUserAgent(ctx context.Context, ua string) error
	// WatchNetwork starts watching the tab's requests: for a HAR if har
	// (then it returns the HAR's log), and, if unknown is not nil, for the
	// requests to hosts the testbed does not serve, filed in unknown.
	WatchNetwork(ctx context.Context, har bool, unknown *UnknownHostLog) (HARLog, error)
	// Navigate goes to url and returns once the browser says its document
	// has loaded.
	Navigate(ctx context.Context, url string) error
	// Evaluate evaluates the expression js in the page and decodes its
	// value, passed as JSON, into out (null leaves a pointer nil).
	Evaluate(ctx context.Context, js string, out any) error
	// CaptureFrames starts capturing what the page paints.
	CaptureFrames(ctx context.Context) (FrameCapture, error)
	// Settle waits until the browser's processes have settled (the CPU
	// they use between two readings 100 ms apart at most 5 ms: a repeat
	// visit's first load and its page's unloading are over), or ctx ends.
	// A browser without a CPU group returns at once.
	Settle(ctx context.Context) error
	// MarkUnknown marks in m the metrics this browser reports wrongly
	// (Firefox: an HTTP/1.1 document's first byte).
	MarkUnknown(m *PageMetrics)
	// Close disposes of the tab (and of a fresh browser); failed says the
	// load failed, which drops a warm browser that may have died.
	Close(failed bool)
}

// HARLog is a tab's record of its requests for a HAR (Tab.WatchNetwork).
type HARLog interface {
	// Reset forgets the requests seen so far: what follows is the
	// measured visit's.
	Reset()
	// Write writes to path the HAR of the requests seen since Reset: the
	// page at url, whose metrics are m.
	Write(ctx context.Context, path, url string, m PageMetrics) error
}

// FrameCapture is a capture of a tab's frames, started by CaptureFrames.
type FrameCapture interface {
	// Stop ends the capture and returns the frames in time order since
	// navigation start.
	Stop(ctx context.Context) ([]Frame, error)
	// Abort ends the capture, if Stop has not, and drops its frames.
	Abort()
}

// Opener is a browser as the visit driver sees it.
type Opener interface {
	// OpenTab opens the tab for a load of req in a started browser: a
	// fresh browser's, or a new context of a warm one. Its error is the
	// load's failure.
	OpenTab(ctx context.Context, req Request) (Tab, error)
}

// pollInterval is how often a visit reads the page's metrics while it
// waits for them.
const pollInterval = 20 * time.Millisecond

// LoadIn is every browser's Load: it checks req, opens a tab of b within
// the load's timeout (zero: DefaultLoadTimeout), waits for awaitClosed
// (the fresh browsers of earlier loads gone, so that nothing of them
// overlaps the timed load), runs req.Ready, makes the visits req asks for
// and verifies them. A failed load is a Result with Failure set; an error means ctx was
// canceled or req cannot be loaded by such a browser.
func LoadIn(ctx context.Context, b Opener, awaitClosed func(), req Request, warm bool, timeout time.Duration) (res Result, _ error) {
	res.Requested = req.Protocol
	wallStart := time.Now()
	defer func() { res.WallMs = msSince(wallStart) }()
	if err := CheckBrowserRequest(req, warm); err != nil {
		return res, err
	}
	timeout = cmp.Or(timeout, DefaultLoadTimeout)
	loadCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	startAt := time.Now()
	tab, err := b.OpenTab(loadCtx, req)
	if err != nil {
		res.Failure = fmt.Sprintf("browser start: %v", err)
		return res, ctx.Err()
	}
	defer func() { tab.Close(res.Failure != "") }()
	res.BrowserStartMs = msSince(startAt)
	awaitClosed()
	if req.Ready != nil {
		if err := req.Ready(loadCtx); err != nil {
			res.Failure = fmt.Sprintf("prepare the load: %v", err)
			return res, ctx.Err()
		}
	}
	v := visit{tab: tab, ctx: loadCtx, req: req, timeout: timeout, res: &res}
	if res.Failure = v.visits(); res.Failure != "" {
		return res, ctx.Err()
	}
	return res, nil
}

// visit is one load's visits in its tab.
type visit struct {
	tab     Tab
	ctx     context.Context // the load's
	req     Request
	timeout time.Duration
	res     *Result
	// unknown files the requests to unknown hosts if the request asks
	// for them and har its requests for a HAR; nil: it does not.
	unknown *UnknownHostLog
	har     HARLog
}

// visits sets up the tab, makes a repeat visit's first load and then the
// measured one, filling v.res. It returns a failure text.
func (v *visit) visits() string {
	if failure := v.setUp(); failure != "" {
		return failure
	}
	v.res.Visit = cmp.Or(v.req.Visit, factor.FirstVisit)
	if v.res.Visit == factor.RepeatVisit {
		if failure := v.firstVisit(); failure != "" {
			return failure
		}
	}
	if v.har != nil {
		v.har.Reset() // the measured visit only
	}
	v.unknown.Take()
	failure := v.measuredVisit()
	if v.unknown != nil {
		v.res.UnknownHosts = v.unknown.Take() // a failed visit's too
	}
	if failure == "" && v.har != nil {
		if err := v.har.Write(v.ctx, v.req.HARPath, v.req.URL, v.res.PageMetrics); err != nil {
			return err.Error()
		}
	}
	if failure == "" {
		if problems := Verify(v.req, v.res.PageMetrics); len(problems) > 0 {
			return strings.Join(problems, "; ")
		}
	}
	return failure
}

// setUp adds the page's scripts, sets the viewport and watches the network
// if req asks for a HAR or for the unknown hosts (in Firefox, which then
// sends its network events, a little protocol traffic added to the load;
// Chromium's tab sends them anyway). It returns a failure text.
func (v *visit) setUp() string {
	source := SetupJS
	if v.req.Deterministic {
		source = DeterministicJS(v.req.ClockStart) + "\n" + source
	}
	if v.req.Documents != nil {
		source += "\n" + HoldJS(v.req.Documents)
	}
	if err := v.tab.AddScript(v.ctx, source); err != nil {
		return fmt.Sprintf("set up page: %v", err)
	}
	vp, err := v.tab.SetViewport(v.ctx, v.req.Viewport.OrDefault())
	if err != nil {
		return fmt.Sprintf("set up page: viewport: %v", err)
	}
	v.res.ViewportWidth, v.res.ViewportHeight, v.res.ViewportScale, v.res.ViewportMobile = vp.Width, vp.Height, vp.Scale, vp.Mobile
	if failure := v.appendUserAgent(); failure != "" {
		return failure
	}
	if v.req.HARPath == "" && !v.req.ListUnknownHosts {
		return ""
	}
	if v.req.ListUnknownHosts {
		v.unknown = &UnknownHostLog{}
	}
	if v.har, err = v.tab.WatchNetwork(v.ctx, v.req.HARPath != "", v.unknown); err != nil {
		return fmt.Sprintf("watch the network: %v", err)
	}
	if v.har == nil && v.req.HARPath != "" {
		return "watch the network: the browser gave no HAR"
	}
	return ""
}

// appendUserAgent ends the tab's User-Agent with the request's suffix,
// if it has one. It returns a failure text.
func (v *visit) appendUserAgent() string {
	if v.req.UserAgentSuffix == "" {
		return ""
	}
	var ua string
	if err := v.tab.Evaluate(v.ctx, "navigator.userAgent", &ua); err != nil || ua == "" {
		return fmt.Sprintf("set up page: read the User-Agent: %v", err)
	}
	v.res.UserAgent = ua + " " + v.req.UserAgentSuffix
	if err := v.tab.SetUserAgent(v.ctx, v.res.UserAgent); err != nil {
		return fmt.Sprintf("set up page: User-Agent: %v", err)
	}
	return ""
}

// firstVisit makes a repeat visit's first, unmeasured load, verifies it and
// leaves the page. It returns a failure text.
func (v *visit) firstVisit() string {
	first, failure := Navigate(v.ctx, v.tab, v.req.URL, v.timeout)
	if failure != "" {
		return "first visit: " + failure
	}
	firstReq := v.req
	firstReq.CacheAllowed = false
	if problems := Verify(firstReq, first); len(problems) > 0 {
		return "first visit: " + strings.Join(problems, "; ")
	}
	v.res.FirstVisitPLTMs = first.PLTMs
	if err := v.tab.Navigate(v.ctx, "about:blank"); err != nil {
		return fmt.Sprintf("leave the page between visits: %v", err)
	}
	// The measured visit starts from a browser at rest, as a first visit
	// does (OpenTab): Firefox's work after the first load slowed its
	// repeat visits by 2–16 % here (BENCHMARKS.md).
	if err := v.tab.Settle(v.ctx); err != nil {
		return fmt.Sprintf("settle between visits: %v", err)
	}
	if v.req.BetweenVisits != nil {
		if err := v.req.BetweenVisits(v.ctx); err != nil {
			return fmt.Sprintf("between visits: %v", err)
		}
	}
	return ""
}

// measuredVisit makes the measured load, with its frames if asked for, and
// reads its paint timings. It returns a failure text.
func (v *visit) measuredVisit() string {
	var frames FrameCapture
	if v.req.Visual {
		var err error
		if frames, err = v.tab.CaptureFrames(v.ctx); err != nil {
			return err.Error()
		}
		defer frames.Abort()
	}
	if v.req.Navigating != nil {
		v.req.Navigating()
	}
	m, failure := Navigate(v.ctx, v.tab, v.req.URL, v.timeout)
	if v.req.Loaded != nil {
		v.req.Loaded()
	}
	if failure != "" {
		return failure
	}
	v.tab.MarkUnknown(&m)
	v.res.PageMetrics = m
	if m.FCPMs == 0 || m.LCPMs == 0 {
		if failure := v.awaitPaint(); failure != "" {
			return failure
		}
	}
	if frames != nil {
		return v.finishVisual(frames)
	}
	return ""
}

// Navigate loads url in tab and reads the page's metrics once its load
// event has ended, within ctx (the load's, which ends after timeout). It
// returns a failure text for a failed load.
func Navigate(ctx context.Context, tab Tab, url string, timeout time.Duration) (PageMetrics, string) {
	if err := tab.Navigate(ctx, url); err != nil {
		if ctx.Err() != nil {
			return PageMetrics{}, fmt.Sprintf("timed out after %v", timeout)
		}
		return PageMetrics{}, fmt.Sprintf("navigation: %v", err)
	}
	waiting := fmt.Sprintf("timed out after %v waiting for loadEventEnd", timeout)
	for {
		var m *PageMetrics
		if err := tab.Evaluate(ctx, MetricsJS, &m); err != nil {
			if ctx.Err() != nil {
				return PageMetrics{}, waiting
			}
			return PageMetrics{}, fmt.Sprintf("read metrics: %v", err)
		}
		if m != nil {
			return *m, ""
		}
		if Pause(ctx, pollInterval) != nil {
			return PageMetrics{}, waiting
		}
	}
}

// awaitPaint reads FCP and LCP again for up to PaintWait: a page can paint
// its first content a frame after its load event, and the browser hands
// an LCP candidate to the page's observer a task after the paint, so one
// painted just before the load event's end is not yet seen. It returns a
// failure text; a page that paints nothing keeps FCP (or LCP) at 0.
func (v *visit) awaitPaint() string {
	for deadline := time.Now().Add(PaintWait); time.Now().Before(deadline); {
		if Pause(v.ctx, pollInterval) != nil {
			return "timed out waiting for the first paint"
		}
		if failure := v.readPaint(); failure != "" || (v.res.FCPMs > 0 && v.res.LCPMs > 0) {
			return failure
		}
	}
	return ""
}

// readPaint reads FCP and LCP into v.res. It returns a failure text.
func (v *visit) readPaint() string {
	var paint []float64
	if err := v.tab.Evaluate(v.ctx, PaintJS, &paint); err != nil || len(paint) != 2 {
		return fmt.Sprintf("read FCP and LCP: %v", err)
	}
	v.res.FCPMs, v.res.LCPMs = paint[0], paint[1]
	return ""
}

// finishVisual lets the page paint for SettleAfterLoad after its load
// event, reads its paint timings again, stops the capture and computes the
// visual metrics into v.res. It returns a failure text.
func (v *visit) finishVisual(frames FrameCapture) string {
	if Pause(v.ctx, SettleAfterLoad) != nil {
		return "timed out while the page settled after its load event"
	}
	if failure := v.readPaint(); failure != "" {
		return failure
	}
	captured, err := frames.Stop(v.ctx)
	if err != nil {
		return err.Error()
	}
	if err := SetVisual(v.res, captured); err != nil {
		return err.Error()
	}
	return ""
}

// msSince is the time since start, in milliseconds.
func msSince(start time.Time) float64 {
	return float64(time.Since(start)) / float64(time.Millisecond)
}
