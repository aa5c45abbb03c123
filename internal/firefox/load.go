package firefox

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/cpuuse"
	"github.com/quicbench/quicbench/internal/factor"
)

// tab is the browsing context a load runs in: client.Tab over WebDriver
// BiDi.
type tab struct {
	bidi    *bidi
	context string
	// preload is the id of the tab's preload script, once added.
	preload string
	// har records the tab's network events for a HAR and unknown lists
	// the requests to unknown hosts, under subscription; nil: not asked
	// for.
	har          *harRecorder
	unknown      *client.UnknownHostLog
	subscription string
	// docError is Firefox's name of the last failed navigation request,
	// under subscription.
	docError documentError
	// version is quicbench's, the HAR's creator's.
	version string
	// cpu is the browser's CPU group (Settle); nil: none.
	cpu *cpuuse.Group
	// close disposes of the tab (and of a fresh browser); failed says the
	// load failed.
	close func(failed bool)
}

// Close disposes of the tab.
func (t *tab) Close(failed bool) { t.close(failed) }

// Settle waits until the browser's processes have settled.
func (t *tab) Settle(ctx context.Context) error {
	_, _, err := t.cpu.Settle(ctx)
	return err
}

// OpenTab opens the tab for a load of req: a tab in a new user context of
// the warm browser, or a fresh browser's first tab. A browser has every
// CPU of the run while it starts and until its own start-up work has
// ended, which no load times, and its own again before the load
// (cpuuse.SettledStart); a warm browser's new tab opens on its own CPUs.
func (f *Firefox) OpenTab(ctx context.Context, req client.Request) (client.Tab, error) {
	if f.Warm {
		t, err := f.warmTab(ctx, req)
		if err != nil {
			return nil, err
		}
		return t, nil
	}
	t, err := cpuuse.SettledStart(ctx, f.CPU, func() (*tab, error) { return f.freshTab(ctx, req) }, func(t *tab) { t.Close(true) })
	if err != nil {
		return nil, err
	}
	return t, nil
}

// freshTab starts a fresh browser for req and returns its first tab.
func (f *Firefox) freshTab(ctx context.Context, req client.Request) (*tab, error) {
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
		p.Close()
		return nil, err
	}
	if len(tree.Contexts) == 0 {
		p.Close()
		return nil, fmt.Errorf("the browser has no tab")
	}
	// The browser shuts down in the background, while the harness records
	// the load; the next timed load waits for it.
	return &tab{bidi: p.bidi, context: tree.Contexts[0].Context, version: f.Version, cpu: f.CPU, close: func(bool) { f.closeLater(p) }}, nil
}

// AddScript adds source as a preload script of the tab.
func (t *tab) AddScript(ctx context.Context, source string) error {
	var added struct {
		Script string `json:"script"`
	}
	if err := t.bidi.call(ctx, "script.addPreloadScript", map[string]any{
		"functionDeclaration": "() => {\n" + source + "\n}", "contexts": []string{t.context},
	}, &added); err != nil {
		return err
	}
	t.preload = added.Script
	return nil
}

// SetUserAgent overrides the tab's User-Agent (BiDi's emulation module).
func (t *tab) SetUserAgent(ctx context.Context, ua string) error {
	return t.bidi.call(ctx, "emulation.setUserAgentOverride", map[string]any{"userAgent": ua, "contexts": []string{t.context}}, nil)
}

// SetViewport sets the tab's viewport: its size in CSS pixels and its
// device pixel ratio. WebDriver BiDi has no mobile layout: a mobile
// viewport is its size and ratio alone in Firefox.
func (t *tab) SetViewport(ctx context.Context, vp factor.Viewport) (factor.Viewport, error) {
	vp.Mobile = false
	return vp, t.bidi.call(ctx, "browsingContext.setViewport", map[string]any{
		"context":          t.context,
		"viewport":         map[string]int{"width": vp.Width, "height": vp.Height},
		"devicePixelRatio": vp.Scale,
	}, nil)
}

// WatchNetwork subscribes to the tab's network events.
func (t *tab) WatchNetwork(ctx context.Context, har bool, unknown *client.UnknownHostLog) (client.HARLog, error) {
	if har {
		t.har = newHARRecorder(t.version)
	}
	t.unknown = unknown
	t.bidi.setOnEvent(t.networkEvent)
	var sub struct {
		Subscription string `json:"subscription"`
	}
	if err := t.bidi.call(ctx, "session.subscribe", map[string]any{"events": harEvents(), "contexts": []string{t.context}}, &sub); err != nil {
		return nil, err
	}
	t.subscription = sub.Subscription
	if t.har == nil {
		return nil, nil
	}
	return t.har, nil
}

// MarkUnknown marks an HTTP/1.1 document's first byte unknown: Firefox
// gives its requestStart as its responseStart (0.1 ms after it, whatever
// the RTT).
func (t *tab) MarkUnknown(m *client.PageMetrics) {
	m.TTFBUnknown = m.DocumentProtocol == factor.H1.NextHop() && m.DocumentTransferBytes > 0
}

// Navigate goes to url and waits until its document is complete.
func (t *tab) Navigate(ctx context.Context, url string) error {
	err := t.bidi.call(ctx, "browsingContext.navigate", map[string]any{
		"context": t.context, "url": url, "wait": "complete",
	}, nil)
	if err != nil && ctx.Err() == nil {
		return t.docError.explain(err)
	}
	return err
}

// networkEvent hands a network event to the tab's watchers.
func (t *tab) networkEvent(method string, params json.RawMessage) {
	t.docError.note(t.context, method, params)
	if t.har != nil {
		t.har.event(method, params)
	}
	if t.unknown != nil {
		fileUnknownHostEvent(t.unknown, method, params)
	}
}

// Evaluate runs the expression js in the tab's page and decodes its value,
// passed through JSON, into out.
func (t *tab) Evaluate(ctx context.Context, js string, out any) error {
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
