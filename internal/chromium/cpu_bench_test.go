package chromium

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/client/clienttest"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/proc"
	"github.com/quicbench/quicbench/internal/testbed"
	"github.com/quicbench/quicbench/internal/testenv"
)

// cpuModes are the ways BenchmarkBrowserCPUByInstrument loads the page:
// bare (a lean browser: a navigation with nothing subscribed, then one
// evaluation that awaits the end of the load event and returns the
// metrics), bare with one of quicbench's instruments, and quicbench's
// load as the runner makes it.
var cpuModes = []struct {
	name string
	// lean is nil for quicbench's own load; otherwise it sets up the
	// lean page before the navigation and returns how to wait for the
	// metrics.
	lean func(ctx context.Context, p *leanPage) (poll bool, err error)
	// startOnly reads the CPU without loading the page: the browser's
	// start.
	startOnly bool
	// features is the browser's --disable-features; "": quicbench's
	// (disabledFeatures).
	features string
}{
	{name: "start", lean: nothingMore, startOnly: true},
	{name: "bare", lean: nothingMore},
	{name: "setup", lean: func(ctx context.Context, p *leanPage) (bool, error) {
		return false, leanSetup(ctx, p)
	}},
	{name: "poll", lean: func(context.Context, *leanPage) (bool, error) { return true, nil }},
	{name: "network", lean: func(ctx context.Context, p *leanPage) (bool, error) {
		return false, p.dt.call(ctx, p.session, "Network.enable", struct{}{}, nil)
	}},
	{name: "chromedp-domains", lean: func(ctx context.Context, p *leanPage) (bool, error) {
		return false, chromedpDomains(ctx, p)
	}},
	{name: "quicbench"},
	// bare as before issue 45: Chromium's omnibox popups rendered.
	{name: "bare-omnibox", lean: nothingMore, features: "Translate,BlinkGenPropertyTrees"},
}

// nothingMore sets up nothing: the bare load awaits the metrics.
func nothingMore(context.Context, *leanPage) (bool, error) { return false, nil }

// leanSetup is the visit's set-up: its script in every document and the
// viewport.
func leanSetup(ctx context.Context, p *leanPage) error {
	if err := p.dt.call(ctx, p.session, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": client.SetupJS}, nil); err != nil {
		return err
	}
	vp := factor.DefaultViewport()
	return p.dt.call(ctx, p.session, "Emulation.setDeviceMetricsOverride",
		map[string]any{"width": vp.Width, "height": vp.Height, "deviceScaleFactor": vp.Scale, "mobile": vp.Mobile}, nil)
}

// chromedpDomains enables what chromedp enables on every tab it attaches
// to, and fetches the document on every DOM.documentUpdated as it does.
func chromedpDomains(ctx context.Context, p *leanPage) error {
	p.dt.on(p.session, "DOM.documentUpdated", func(json.RawMessage) {
		go p.dt.call(ctx, p.session, "DOM.getDocument", struct{}{}, nil)
	})
	for _, m := range []struct {
		method string
		params any
	}{
		{"Runtime.enable", struct{}{}}, {"Log.enable", struct{}{}}, {"Network.enable", struct{}{}},
		{"Inspector.enable", struct{}{}}, {"Page.enable", struct{}{}}, {"DOM.enable", struct{}{}},
		{"CSS.enable", struct{}{}}, {"Target.setDiscoverTargets", map[string]any{"discover": true}},
		{"Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}},
		{"Page.setLifecycleEventsEnabled", map[string]any{"enabled": true}},
	} {
		if err := p.dt.call(ctx, p.session, m.method, m.params, nil); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkBrowserCPUByInstrument is issue 45's item 1: where a fresh
// Chromium's CPU goes while it loads the demo's page
// (clienttest.DemoTestbed), per process kind, for each of cpuModes, the
// modes' order rotating per round. The CPU is each process's own since its
// start, read once the metrics are in (every process of the browser is
// alive then): the browser's start and the load. It reports per mode the
// medians over the rounds. scripts/bench-browser-cpu.sh runs it.
func BenchmarkBrowserCPUByInstrument(b *testing.B) {
	testenv.RequireRoot(b)
	testenv.RequireFile(b, DefaultChromiumPath, "apt-get install chromium")
	tb, req := clienttest.DemoTestbed(b)
	var names []string
	for _, m := range cpuModes {
		names = append(names, m.name)
	}
	clienttest.CPUModes(b, names, []string{"browser", "renderer", "gpu", "network", "utility", "zygote", "other", "renderers"},
		func(i int) (map[string]float64, error) { return loadInMode(b, tb, req, i) })
}

// loadInMode makes one load in mode i with a fresh browser and returns
// its processes' CPU by kind, in ms, and the load's PLT ("plt").
func loadInMode(b *testing.B, tb *testbed.Testbed, req client.Request, i int) (map[string]float64, error) {
	profiles := b.TempDir()
	c := &Chromium{Namespace: tb.Topo.Client, ProfileDir: profiles, Timeout: 30 * time.Second}
	ctx, cancel := context.WithTimeout(b.Context(), 30*time.Second)
	defer cancel()
	if cpuModes[i].lean == nil {
		var byKind map[string]float64
		req.Loaded = func() { byKind = cpuByKind(profiles) }
		res, err := c.Load(ctx, req)
		c.Close()
		if err == nil && res.Failure != "" {
			err = fmt.Errorf("load failed: %s", res.Failure)
		}
		if byKind != nil {
			byKind["plt"] = res.PLTMs
		}
		return byKind, err
	}
	flags := requestFlags(req)
	if m := cpuModes[i]; m.features != "" {
		for k := range flags {
			if flags[k].name == "disable-features" {
				flags[k].value = m.features
			}
		}
	}
	return leanLoad(ctx, c, args(flags), req.URL, profiles, cpuModes[i].lean, cpuModes[i].startOnly)
}

// leanLoad loads req in a lean browser set up by setUp and returns its
// processes' CPU by kind once the metrics are in.
func leanLoad(ctx context.Context, c *Chromium, args []string, url, profiles string, setUp func(context.Context, *leanPage) (bool, error), startOnly bool) (map[string]float64, error) {
	lb, err := c.startLean(args)
	if err != nil {
		return nil, err
	}
	defer lb.Close()
	session, err := lb.firstPage(ctx)
	if err != nil {
		return nil, err
	}
	p := &leanPage{dt: lb.dt, session: session}
	poll, err := setUp(ctx, p)
	if err != nil {
		return nil, err
	}
	if startOnly {
		var one int
		if err := p.Evaluate(ctx, "1", &one); err != nil {
			return nil, err
		}
		return cpuByKind(profiles), nil
	}
	if err := p.Navigate(ctx, url); err != nil {
		return nil, fmt.Errorf("%w (the browser's output: %q)", err, tail(lb.output.String()))
	}
	m, err := leanMetrics(ctx, p, poll)
	if err != nil {
		return nil, fmt.Errorf("%w (the browser's output: %q)", err, tail(lb.output.String()))
	}
	byKind := cpuByKind(profiles)
	byKind["plt"] = m.PLTMs
	if m.Images != 32 || m.BrokenImages != 0 {
		return nil, fmt.Errorf("%d images, %d broken", m.Images, m.BrokenImages)
	}
	return byKind, nil
}

// leanMetrics waits for the page's metrics: polling MetricsJS every 20 ms
// as the visit driver does, or awaiting AwaitMetricsJS.
func leanMetrics(ctx context.Context, p *leanPage, poll bool) (client.PageMetrics, error) {
	js := awaitMetricsJS
	if poll {
		js = client.MetricsJS
	}
	for {
		var m *client.PageMetrics
		err := p.Evaluate(ctx, js, &m)
		if err != nil && !strings.Contains(err.Error(), "context was destroyed") {
			return client.PageMetrics{}, err
		}
		if m != nil {
			return *m, nil
		}
		if err := client.Pause(ctx, 20*time.Millisecond); err != nil {
			return client.PageMetrics{}, err
		}
	}
}

// cpuByKind is the CPU by kind of the browsers whose user data directory
// is under profiles, and of their children.
func cpuByKind(profiles string) map[string]float64 {
	return clienttest.CPUByKind(proc.Using("--user-data-dir="+profiles+string(filepath.Separator)), processKind)
}

// processKind is a Chromium process's kind from its command line: its
// --type (browser without one).
func processKind(cmdline []string) string {
	kind, sub := "", ""
	for _, a := range strings.Fields(strings.Join(cmdline, " ")) {
		if v, ok := strings.CutPrefix(a, "--type="); ok {
			kind = v
		}
		if v, ok := strings.CutPrefix(a, "--utility-sub-type="); ok {
			sub = v
		}
	}
	switch {
	case kind == "" && len(cmdline) > 0 && strings.HasSuffix(cmdline[0], "/chromium"):
		return "browser"
	case kind == "renderer", kind == "zygote":
		return kind
	case kind == "gpu-process":
		return "gpu"
	case kind == "utility" && strings.Contains(sub, "NetworkService"):
		return "network"
	case kind == "utility":
		return "utility"
	}
	return "other"
}

// tail is the end of s: at most its last 600 bytes.
func tail(s string) string { return s[max(0, len(s)-600):] }
