package chromium

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/cpuuse"
	"github.com/quicbench/quicbench/internal/factor"
)

// tab is a Chromium tab a load runs in: client.Tab over the DevTools
// protocol. Its context is bound to the load's: every call on it ends at
// the load's timeout.
type tab struct {
	ctx context.Context
	// cpu is the browser's CPU group (Settle); nil: none.
	cpu *cpuuse.Group
	// close disposes of the tab; failed says the load failed.
	close func(failed bool)
}

// OpenTab opens the tab for a load of req in a started browser: a new
// browser context of the warm browser, or a fresh browser. A browser
// has every CPU of the run while it starts and until its own work has
// ended, which no load times, and its own again before the load
// (cpuuse.SettledStart); a warm browser's new context opens on its own
// CPUs (widening it cost more than it saved: BENCHMARKS.md), and the load
// waits until the browser has settled there too (settledTab).
func (c *Chromium) OpenTab(loadCtx context.Context, req client.Request) (client.Tab, error) {
	if !c.Warm {
		t, err := cpuuse.SettledStart(loadCtx, c.CPU, func() (*tab, error) { return c.freshTab(loadCtx, req) }, func(t *tab) { t.Close(true) })
		if err != nil {
			return nil, err
		}
		return t, nil
	}
	key := warmKey(req)
	wb, err := c.pool.Warm(loadCtx, key, func(context.Context) (*browserProcess, error) {
		return cpuuse.SettledStart(loadCtx, c.CPU, func() (*browserProcess, error) { return c.startWarm(req) }, (*browserProcess).Close)
	})
	if err != nil {
		return nil, err
	}
	// A new browser context per load: its own cookies, cache, sockets, TLS
	// sessions and QUIC state, disposed afterwards.
	tabCtx, cancelTab := chromedp.NewContext(wb.ctx, chromedp.WithNewBrowserContext())
	stopCancel := context.AfterFunc(loadCtx, cancelTab)
	t := &tab{ctx: tabCtx, cpu: c.CPU, close: func(failed bool) {
		stopCancel()
		cancelTab()
		if failed {
			c.pool.Drop(key, wb)
		}
	}}
	if err := chromedp.Do(t.ctx); err != nil {
		t.close(true)
		return nil, err
	}
	return settledTab(loadCtx, c.CPU, t)
}

// settledTab returns t once the browser's processes in g have settled
// (cpuuse.Settle): a new context's renderer and the disposal of the last
// load's go on for about 0.35 s after the context opens here, and a load
// begun then took 8 % longer on one core (BENCHMARKS.md). t is closed if
// the load's context ends first.
func settledTab(loadCtx context.Context, g *cpuuse.Group, t *tab) (*tab, error) {
	if _, _, err := g.Settle(loadCtx); err != nil {
		t.close(true)
		return nil, err
	}
	return t, nil
}

// freshTab starts a fresh browser for req, living as long as the load.
func (c *Chromium) freshTab(loadCtx context.Context, req client.Request) (*tab, error) {
	b, err := c.startBrowser(loadCtx, Flags(req), resolverOf(req))
	if err != nil {
		return nil, err
	}
	t := &tab{ctx: b.ctx, cpu: c.CPU, close: func(bool) { c.closeLater(b) }}
	if req.NetLogDir != "" {
		// Chromium completes its NetLog when it quits: ask it to
		// (Browser.close) and wait, rather than kill it.
		t.close = func(bool) { chromedp.Cancel(b.ctx); b.Close() }
	}
	// The browser starts on the first action on its context.
	if err := chromedp.Do(t.ctx); err != nil || *b.wrapErr != nil {
		t.close(true)
		return nil, errors.Join(err, *b.wrapErr)
	}
	if err := c.started(t.ctx); err != nil {
		t.close(true)
		return nil, err
	}
	return t, nil
}

// AddScript has source run in every document, before the page's scripts.
func (t *tab) AddScript(_ context.Context, source string) error {
	_, err := chromedp.Call(t.ctx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: source})
	return err
}

// SetUserAgent overrides the tab's User-Agent.
func (t *tab) SetUserAgent(_ context.Context, ua string) error {
	_, err := chromedp.Call(t.ctx, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{UserAgent: ua})
	return err
}

// SetViewport fixes the viewport: its size in CSS pixels, its device
// pixels per CSS pixel, and a mobile browser's layout (the page's
// <meta name=viewport>, overlay scrollbars).
func (t *tab) SetViewport(_ context.Context, vp factor.Viewport) (factor.Viewport, error) {
	_, err := chromedp.Call(t.ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: int64(vp.Width), Height: int64(vp.Height), DeviceScaleFactor: vp.Scale, Mobile: vp.Mobile,
	})
	return vp, err
}

// WatchNetwork listens to the tab's network events: Chromium sends them
// only after Network.enable (which chromedp has sent already on attaching;
// it is sent again so as not to depend on that).
func (t *tab) WatchNetwork(_ context.Context, har bool, unknown *client.UnknownHostLog) (client.HARLog, error) {
	var rec *harRecorder
	if har {
		rec = newHARRecorder()
		if err := chromedp.Listen(t.ctx, rec.event); err != nil {
			return nil, fmt.Errorf("record HAR: %w", err)
		}
	}
	if unknown != nil {
		if err := chromedp.Listen(t.ctx, unknownHostEvents(unknown)); err != nil {
			return nil, fmt.Errorf("watch unknown hosts: %w", err)
		}
	}
	if _, err := chromedp.Call(t.ctx, network.Enable, network.EnableParams{}); err != nil {
		return nil, fmt.Errorf("enable the Network domain: %w", err)
	}
	if rec == nil {
		return nil, nil
	}
	return rec, nil
}

// Navigate goes to url and waits for its load event.
func (t *tab) Navigate(_ context.Context, url string) error {
	return chromedp.Do(t.ctx, chromedp.Navigate(url))
}

// Evaluate evaluates js in the page and decodes its value into out.
func (t *tab) Evaluate(_ context.Context, js string, out any) error {
	value, err := chromedp.Run(t.ctx, chromedp.Evaluate[[]byte](js))
	if err != nil {
		return err
	}
	if value == nil { // undefined
		value = []byte("null")
	}
	return json.Unmarshal(value, out)
}

// CaptureFrames starts tracing the tab's screenshots.
func (t *tab) CaptureFrames(context.Context) (client.FrameCapture, error) {
	return startFrames(t.ctx)
}

// Settle waits until the browser's processes have settled.
func (t *tab) Settle(ctx context.Context) error {
	_, _, err := t.cpu.Settle(ctx)
	return err
}

// MarkUnknown marks nothing: Chromium's metrics are what they say.
func (t *tab) MarkUnknown(*client.PageMetrics) {}

// Close disposes of the tab.
func (t *tab) Close(failed bool) { t.close(failed) }
