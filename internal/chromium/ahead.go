package chromium

import (
	"context"
	"errors"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/quicbench/quicbench/internal/client"
)

// Prepare starts, in the background, what the next load of req needs: a
// fresh browser with req's flags, or a new browser context and tab of the
// warm browser. The runner calls it after a load has returned, while it
// records that load; Load takes what is ready when its request has the
// same flags, and a load with a NetLog never does (its browser's flags
// name the load's NetLog file).
func (c *Chromium) Prepare(req client.Request) {
	if c.Warm {
		c.nextTab.Start(warmKey(req), func(ctx context.Context) (*warmTab, error) { return c.newWarmTab(ctx, req) },
			func(t *warmTab) { c.closing.Go(func() { chromedp.Cancel(t.ctx) }) })
		return
	}
	flags := Flags(req)
	c.next.Start(warmKey(req), func(ctx context.Context) (*browserProcess, error) { return c.startReady(ctx, flags) }, c.closeLater)
}

// Unprepare stops what Prepare started and waits until it is gone.
func (c *Chromium) Unprepare() {
	c.next.Discard()
	c.nextTab.Discard()
	c.awaitClosed()
}

// startReady starts a fresh browser with flags and waits until it can
// take commands; canceling ctx stops the start.
func (c *Chromium) startReady(ctx context.Context, flags []chromedp.ExecAllocatorOption) (*browserProcess, error) {
	b, err := c.startBrowser(context.Background(), flags)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, b.cancel)
	err = chromedp.Do(b.ctx)
	stop()
	if err != nil || *b.wrapErr != nil {
		b.close()
		return nil, errors.Join(err, *b.wrapErr)
	}
	return b, nil
}

// warmTab is a new browser context of a warm browser with its tab.
type warmTab struct {
	ctx     context.Context
	browser *browserProcess
}

// newWarmTab opens a new browser context and its tab in the warm browser
// for req (started on first use): its own cookies, cache, sockets, TLS
// sessions and QUIC state. Canceling ctx stops the opening.
func (c *Chromium) newWarmTab(ctx context.Context, req client.Request) (*warmTab, error) {
	wb, err := c.warmBrowser(req)
	if err != nil {
		return nil, err
	}
	tabCtx, cancelTab := chromedp.NewContext(wb.ctx, chromedp.WithNewBrowserContext())
	stop := context.AfterFunc(ctx, cancelTab)
	defer stop()
	if err := chromedp.Do(tabCtx); err != nil {
		cancelTab()
		if ctx.Err() == nil {
			c.dropWarm(req, wb) // a browser that cannot open a tab is of no use
		}
		return nil, err
	}
	return &warmTab{ctx: tabCtx, browser: wb}, nil
}

// freshTab is the tab of a fresh browser for req: the one Prepare started
// if it fits req, else a new one. It returns a failure text, or an error
// if no browser could be prepared at all.
func (c *Chromium) freshTab(loadCtx context.Context, req client.Request) (*tab, string, error) {
	if req.NetLogDir != "" {
		c.next.Discard()
		return c.newFreshTab(loadCtx, req)
	}
	b, took, ok, err := c.next.Take(loadCtx, warmKey(req))
	if err != nil {
		return nil, "browser start: " + err.Error(), nil
	}
	if !ok {
		return c.newFreshTab(loadCtx, req)
	}
	stop := context.AfterFunc(loadCtx, b.cancel) // the load's time-out ends its browser
	return &tab{ctx: b.ctx, wrapErr: b.wrapErr, startTook: took, close: func(bool) { stop(); c.closeLater(b) }}, "", nil
}

// newFreshTab starts a fresh browser for req that lives as long as
// loadCtx; it starts on the first action on its context.
func (c *Chromium) newFreshTab(loadCtx context.Context, req client.Request) (*tab, string, error) {
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

// warmTabFor is the tab of a new browser context of the warm browser for
// req: the one Prepare opened if it fits req, else a new one. It returns a
// failure text.
func (c *Chromium) warmTabFor(loadCtx context.Context, req client.Request) (*tab, string) {
	wt, took, ok, err := c.nextTab.Take(loadCtx, warmKey(req))
	if err != nil {
		return nil, "browser start: " + err.Error()
	}
	if !ok {
		start := time.Now()
		if wt, err = c.newWarmTab(loadCtx, req); err != nil {
			return nil, "browser start: " + err.Error()
		}
		took = time.Since(start)
	}
	stopCancel := context.AfterFunc(loadCtx, func() { chromedp.Cancel(wt.ctx) })
	return &tab{ctx: wt.ctx, wrapErr: new(error), startTook: took, close: func(failed bool) {
		stopCancel()
		// A failed load may be a browser that died: the next load starts
		// a new one rather than failing on a dead one forever. Otherwise
		// the context is disposed of while the harness records the load.
		if failed {
			chromedp.Cancel(wt.ctx)
			c.dropWarm(req, wt.browser)
			return
		}
		c.closing.Go(func() { chromedp.Cancel(wt.ctx) })
	}}, ""
}
