package firefox

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/cpuuse"
)

// closeTabTimeout bounds disposing of a warm browser's tab and user
// context after a load.
const closeTabTimeout = 5 * time.Second

// warmKey identifies the browser a request needs: the values its profile is
// made of.
func warmKey(req client.Request) string {
	var addrs []string
	for _, h := range slices.Sorted(maps.Keys(req.Addrs)) {
		addrs = append(addrs, h+"="+req.Addrs[h].String())
	}
	return strings.Join([]string{string(req.Protocol), string(req.Discovery), string(req.Fallback), string(req.DNS), req.Resolver.String(), req.CAFile, strings.Join(req.Hosts, ","), strings.Join(addrs, ",")}, "\n")
}

// warmTab opens a tab in a new user context of the warm browser for req
// (started on first use): the user context has its own cookies, cache,
// connections and TLS sessions, and goes with the tab. It returns once
// the browser has settled (cpuuse.Settle).
func (f *Firefox) warmTab(ctx context.Context, req client.Request) (*tab, error) {
	key := warmKey(req)
	p, err := f.pool.Warm(ctx, key, func(ctx context.Context) (*process, error) {
		p, err := cpuuse.SettledStart(ctx, f.CPU, func() (*process, error) { return f.start(ctx, req) }, (*process).Close)
		if err != nil {
			return nil, fmt.Errorf("warm browser: %w", err)
		}
		return p, nil
	})
	if err != nil {
		return nil, err
	}
	var uc struct {
		UserContext string `json:"userContext"`
	}
	if err := p.bidi.call(ctx, "browser.createUserContext", nil, &uc); err != nil {
		f.pool.Drop(key, p)
		return nil, err
	}
	var created struct {
		Context string `json:"context"`
	}
	if err := p.bidi.call(ctx, "browsingContext.create", map[string]any{"type": "tab", "userContext": uc.UserContext}, &created); err != nil {
		f.pool.Drop(key, p)
		return nil, err
	}
	t := &tab{bidi: p.bidi, context: created.Context, version: f.Version, cpu: f.CPU}
	t.close = func(failed bool) {
		closeCtx, cancel := context.WithTimeout(context.Background(), closeTabTimeout)
		defer cancel()
		var err error
		if t.har != nil || t.unknown != nil {
			p.bidi.setOnEvent(nil)
			if t.subscription != "" {
				err = p.bidi.call(closeCtx, "session.unsubscribe", map[string]any{"subscriptions": []string{t.subscription}}, nil)
			}
		}
		if t.preload != "" && err == nil {
			err = p.bidi.call(closeCtx, "script.removePreloadScript", map[string]any{"script": t.preload}, nil)
		}
		// Removing the user context closes its tab.
		if err == nil {
			err = p.bidi.call(closeCtx, "browser.removeUserContext", map[string]any{"userContext": uc.UserContext}, nil)
		}
		// A failed load may be a browser that died: the next load starts
		// a new one rather than failing on a dead one forever.
		if failed || err != nil {
			f.pool.Drop(key, p)
		}
	}
	// The new user context's content process and the removal of the last
	// load's go on after the tab opens (0.2 to 0.55 s here): the load
	// waits until they are over (BENCHMARKS.md).
	if _, _, err := f.CPU.Settle(ctx); err != nil {
		t.close(true)
		return nil, err
	}
	return t, nil
}
