package chromium

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/factor"
)

// Load starts a fresh browser, loads req.URL, reads the metrics, verifies
// them, and stops the browser. It returns a client.Result with Failure set for any
// failed load, and an error only if the context was canceled.
func (c *Chromium) Load(ctx context.Context, req client.Request) (res client.Result, _ error) {
	res.Requested = req.Protocol
	wallStart := time.Now()
	defer func() { res.WallMs = ms(time.Since(wallStart)) }()
	if err := client.CheckBrowserRequest(req, c.Warm); err != nil {
		return res, err
	}
	timeout := cmp.Or(c.Timeout, client.DefaultLoadTimeout)
	loadCtx, cancelLoad := context.WithTimeout(ctx, timeout)
	defer cancelLoad()
	fail := func(failure string) (client.Result, error) {
		res.Failure = failure
		return res, ctx.Err()
	}
	startAt := time.Now()
	t, failure, err := c.openTab(loadCtx, req)
	if err != nil {
		return res, err
	}
	if failure != "" {
		return fail(failure)
	}
	defer func() { t.close(res.Failure != "") }()
	if err := chromedp.Do(t.ctx); err != nil || *t.wrapErr != nil {
		return fail(fmt.Sprintf("browser start: %v", errors.Join(err, *t.wrapErr)))
	}
	res.BrowserStartMs = ms(time.Since(startAt))
	c.started(t.ctx)
	c.awaitClosed() // the last load's browser, before this one's timed load
	if failure := c.visits(t.ctx, loadCtx, req, timeout, &res); failure != "" {
		return fail(failure)
	}
	return res, nil
}

// tab is the browser tab a load runs in.
type tab struct {
	ctx     context.Context
	wrapErr *error
	// close disposes of the tab; failed says the load failed.
	close func(failed bool)
}

// openTab opens the tab for a load of req: a new browser context of the
// warm browser, or a fresh browser. It returns a failure text, or an error
// if no browser could be prepared at all.
func (c *Chromium) openTab(loadCtx context.Context, req client.Request) (*tab, string, error) {
	if !c.Warm {
		b, err := c.startBrowser(loadCtx, Flags(req))
		if err != nil {
			return nil, "", err
		}
		if req.NetLogDir != "" {
			// Chromium completes its NetLog when it quits: ask it to
			// (Browser.close) and wait, rather than kill it.
			return &tab{ctx: b.ctx, wrapErr: b.wrapErr, close: func(bool) { chromedp.Cancel(b.ctx); b.close() }}, "", nil
		}
		return &tab{ctx: b.ctx, wrapErr: b.wrapErr, close: func(bool) { c.closeLater(b) }}, "", nil
	}
	wb, err := c.warmBrowser(req)
	if err != nil {
		return nil, fmt.Sprintf("browser start: %v", err), nil
	}
	// A new browser context per load: its own cookies, cache, sockets, TLS
	// sessions and QUIC state, disposed afterwards.
	tabCtx, cancelTab := chromedp.NewContext(wb.ctx, chromedp.WithNewBrowserContext())
	stopCancel := context.AfterFunc(loadCtx, cancelTab)
	return &tab{ctx: tabCtx, wrapErr: new(error), close: func(failed bool) {
		stopCancel()
		cancelTab()
		// A failed load may be a browser that died: the next load starts
		// a new one rather than failing on a dead one forever.
		if failed {
			c.dropWarm(req, wb)
		}
	}}, "", nil
}

// visits sets up the tab's page, makes a repeat visit's first load and
// then the measured one, filling res. It returns a failure text.
func (c *Chromium) visits(tabCtx, loadCtx context.Context, req client.Request, timeout time.Duration, res *client.Result) string {
	source := client.SetupJS
	if req.Deterministic {
		source = client.DeterministicJS(req.ClockStart) + "\n" + source
	}
	if _, err := chromedp.Call(tabCtx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: source}); err != nil {
		return fmt.Sprintf("set up page: %v", err)
	}
	if err := setViewport(tabCtx); err != nil {
		return fmt.Sprintf("set up page: viewport: %v", err)
	}
	res.ViewportWidth, res.ViewportHeight = client.ViewportWidth, client.ViewportHeight
	rec, unknown, failure := watchNetwork(tabCtx, req)
	if failure != "" {
		return failure
	}
	res.Visit = req.Visit
	if res.Visit == "" {
		res.Visit = factor.FirstVisit
	}
	if res.Visit == factor.RepeatVisit {
		if failure := firstVisit(tabCtx, loadCtx, req, timeout, res); failure != "" {
			return failure
		}
	}
	if rec != nil {
		rec.reset() // the measured visit only
	}
	if unknown != nil {
		unknown.take()
	}
	failure = c.measuredVisit(tabCtx, loadCtx, req, timeout, rec, res)
	if unknown != nil {
		res.UnknownHosts = unknown.take()
	}
	return failure
}

// watchNetwork listens to the tab's network events when req asks for a
// HAR or for the requests to unknown hosts: Chromium sends them only after
// Network.enable, which adds a little DevTools traffic to the load. It
// returns a failure text.
func watchNetwork(tabCtx context.Context, req client.Request) (*harRecorder, *unknownHostWatcher, string) {
	var rec *harRecorder
	var unknown *unknownHostWatcher
	if req.HARPath != "" {
		rec = newHARRecorder()
		if err := chromedp.Listen(tabCtx, rec.event); err != nil {
			return nil, nil, fmt.Sprintf("record HAR: %v", err)
		}
	}
	if req.ListUnknownHosts {
		unknown = newUnknownHostWatcher()
		if err := chromedp.Listen(tabCtx, unknown.event); err != nil {
			return nil, nil, fmt.Sprintf("watch unknown hosts: %v", err)
		}
	}
	if rec == nil && unknown == nil {
		return nil, nil, ""
	}
	if _, err := chromedp.Call(tabCtx, network.Enable, network.EnableParams{}); err != nil {
		return nil, nil, fmt.Sprintf("watch the network: Network.enable: %v", err)
	}
	return rec, unknown, ""
}

// firstVisit makes a repeat visit's first, unmeasured load, verifies it and
// leaves the page. It returns a failure text.
func firstVisit(tabCtx, loadCtx context.Context, req client.Request, timeout time.Duration, res *client.Result) string {
	first, failure := navigate(tabCtx, loadCtx, req.URL, timeout)
	if failure != "" {
		return "first visit: " + failure
	}
	firstReq := req
	firstReq.CacheAllowed = false
	if problems := client.Verify(firstReq, first); len(problems) > 0 {
		return "first visit: " + strings.Join(problems, "; ")
	}
	res.FirstVisitPLTMs = first.PLTMs
	if err := chromedp.Do(tabCtx, chromedp.Navigate("about:blank")); err != nil {
		return fmt.Sprintf("leave the page between visits: %v", err)
	}
	if req.BetweenVisits != nil {
		if err := req.BetweenVisits(loadCtx); err != nil {
			return fmt.Sprintf("between visits: %v", err)
		}
	}
	return ""
}

// measuredVisit makes the measured load, with its frames and HAR if asked
// for, and verifies it. It returns a failure text.
func (c *Chromium) measuredVisit(tabCtx, loadCtx context.Context, req client.Request, timeout time.Duration, rec *harRecorder, res *client.Result) string {
	var frames *frameRecorder
	if req.Visual {
		var err error
		if frames, err = startFrames(tabCtx); err != nil {
			return err.Error()
		}
	}
	if req.Navigating != nil {
		req.Navigating()
	}
	m, failure := navigate(tabCtx, loadCtx, req.URL, timeout)
	if req.Loaded != nil {
		req.Loaded()
	}
	if failure != "" {
		return failure
	}
	res.PageMetrics = m
	if m.FCPMs == 0 {
		if failure := awaitPaint(tabCtx, loadCtx, res); failure != "" {
			return failure
		}
	}
	if frames != nil {
		if failure := c.finishVisual(tabCtx, loadCtx, frames, res); failure != "" {
			return failure
		}
	}
	if rec != nil {
		if err := rec.build(req.URL, m).WriteFile(req.HARPath); err != nil {
			return err.Error()
		}
	}
	if problems := client.Verify(req, res.PageMetrics); len(problems) > 0 {
		return strings.Join(problems, "; ")
	}
	return ""
}

// navigate loads url in the browser's tab and reads the page's metrics once
// its load event has ended. It returns a failure text for a failed load.
func navigate(browserCtx, loadCtx context.Context, url string, timeout time.Duration) (client.PageMetrics, string) {
	if err := chromedp.Do(browserCtx, chromedp.Navigate(url)); err != nil {
		if loadCtx.Err() != nil {
			return client.PageMetrics{}, fmt.Sprintf("timed out after %v", timeout)
		}
		return client.PageMetrics{}, fmt.Sprintf("navigation: %v", err)
	}
	for {
		m, err := chromedp.Run(browserCtx, chromedp.Evaluate[*client.PageMetrics](client.MetricsJS))
		if err != nil {
			if loadCtx.Err() != nil {
				return client.PageMetrics{}, fmt.Sprintf("timed out after %v waiting for loadEventEnd", timeout)
			}
			return client.PageMetrics{}, fmt.Sprintf("read metrics: %v", err)
		}
		if m != nil {
			return *m, ""
		}
		select {
		case <-loadCtx.Done():
			return client.PageMetrics{}, fmt.Sprintf("timed out after %v waiting for loadEventEnd", timeout)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// awaitPaint reads FCP and LCP again for up to client.PaintWait: a page can paint
// its first content a frame after its load event. It returns a failure
// text; a page that paints nothing keeps FCP at 0.
func awaitPaint(tabCtx, loadCtx context.Context, res *client.Result) string {
	deadline := time.Now().Add(client.PaintWait)
	for time.Now().Before(deadline) {
		select {
		case <-loadCtx.Done():
			return "timed out waiting for the first paint"
		case <-time.After(20 * time.Millisecond):
		}
		if failure := readPaint(tabCtx, res); failure != "" || res.FCPMs > 0 {
			return failure
		}
	}
	return ""
}

// readPaint reads FCP and LCP into res. It returns a failure text.
func readPaint(tabCtx context.Context, res *client.Result) string {
	paint, err := chromedp.Run(tabCtx, chromedp.Evaluate[[]float64](client.PaintJS))
	if err != nil || len(paint) != 2 {
		return fmt.Sprintf("read FCP and LCP: %v", err)
	}
	res.FCPMs, res.LCPMs = paint[0], paint[1]
	return ""
}

// finishVisual lets the page paint for client.SettleAfterLoad after its load
// event, reads its paint timings again, stops the capture and
// computes the visual metrics into res. It returns a failure text.
func (c *Chromium) finishVisual(browserCtx, loadCtx context.Context, frames *frameRecorder, res *client.Result) string {
	select {
	case <-loadCtx.Done():
		return "timed out while the page settled after its load event"
	case <-time.After(client.SettleAfterLoad):
	}
	if failure := readPaint(browserCtx, res); failure != "" {
		return failure
	}
	captured, err := frames.stop(browserCtx)
	if err != nil {
		return err.Error()
	}
	if err := client.SetVisual(res, captured); err != nil {
		return err.Error()
	}
	return ""
}
