package chromium_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/chromium"
	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/client/clienttest"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/site/gen"
	"github.com/quicbench/quicbench/internal/testbed"
	"github.com/quicbench/quicbench/internal/testenv"
)

// startTestbed starts a testbed with a small page behind oneWay each way.
func startTestbed(t *testing.T, oneWay time.Duration) (*testbed.Testbed, *site.Site) {
	t.Helper()
	s, err := gen.Synthetic(factor.Page{Kind: factor.PageSynthetic, Objects: 8, ObjectBytes: 5000}, []string{"www.quicbench.test"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	return clienttest.StartTestbed(t, s, oneWay, 0), s
}

// TestChromiumLoadsOverEachProtocol loads a real page in real Chromium over
// h1, h2 and h3 through a 40 ms emulated link and checks that every load is
// verified, over the requested protocol, and no faster than physics allows.
func TestChromiumLoadsOverEachProtocol(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "apt-get install chromium")
	const oneWay = 20 * time.Millisecond
	tb, s := startTestbed(t, oneWay)
	chromiumDirs := func() []string {
		dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "org.chromium.Chromium.*"))
		return dirs
	}
	leftBefore := chromiumDirs()
	c := &chromium.Chromium{Namespace: tb.Topo.Client, ProfileDir: t.TempDir(), Timeout: 30 * time.Second}
	t.Cleanup(c.Close) // waits for the browser that is still shutting down before its profile goes
	for _, p := range factor.Protocols().Values() {
		t.Run(string(p), func(t *testing.T) {
			before, err := tb.Counts()
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.Load(t.Context(), client.Request{
				URL: s.DocumentURL(), Protocol: p, Hosts: s.Hosts(),
				Addrs: tb.Addrs, SPKIHash: tb.Certs.SPKIHash, CAFile: tb.Certs.CAFile, Expected: s.Subresources,
			})
			if err != nil {
				t.Fatal(err)
			}
			if !res.OK() {
				t.Fatalf("load over %s failed: %s", p, res.Failure)
			}
			after, err := tb.Counts()
			if err != nil {
				t.Fatal(err)
			}
			served := after.Sub(before)
			t.Logf("%s: TTFB %.1f ms, DCL %.1f ms, PLT %.1f ms, browser start %.0f ms, wall %.0f ms, server saw %+v",
				p, res.TTFBMs, res.DCLMs, res.PLTMs, res.BrowserStartMs, res.WallMs, served)
			if res.DocumentProtocol != p.NextHop() || len(res.Resources) < len(s.Subresources) {
				t.Errorf("document over %q with %d resources", res.DocumentProtocol, len(res.Resources))
			}
			if served.Of(string(p)) < int64(len(s.Subresources)+1) || served.Total() != served.Of(string(p)) {
				t.Errorf("server counted %+v, want at least %d requests, all over %s", served, len(s.Subresources)+1, p)
			}
			// A first visit needs at least a handshake round trip and a
			// request round trip: 2 RTT over TCP+TLS 1.3, 2 RTT over QUIC.
			rtt := float64(2*oneWay) / float64(time.Millisecond)
			if res.TTFBMs < 2*rtt {
				t.Errorf("TTFB %.1f ms is below 2 RTT (%.0f ms): the link was not in the path", res.TTFBMs, 2*rtt)
			}
			if !(res.TTFBMs <= res.DCLMs && res.DCLMs <= res.PLTMs) {
				t.Errorf("TTFB %.1f, DCL %.1f, PLT %.1f are out of order", res.TTFBMs, res.DCLMs, res.PLTMs)
			}
		})
	}
	// Each browser had a TMPDIR of its own, removed with it: no singleton
	// directory of Chromium's is left in /tmp once the last browser's
	// shutdown, which goes on after its load, is done.
	c.Close()
	if left := chromium.TempDirs(); len(left) > 0 {
		t.Errorf("browsers' temporary directories left: %v", left)
	}
	for _, d := range chromiumDirs() {
		if !slices.Contains(leftBefore, d) {
			t.Errorf("Chromium left %s in the system's temporary directory", d)
		}
	}
}

// TestWarmBrowserIsRestartedAfterACrash kills a warm browser between loads:
// the next attempt starts a new browser instead of failing for the rest of
// the run.
func TestWarmBrowserIsRestartedAfterACrash(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "apt-get install chromium")
	tb, s := startTestbed(t, 5*time.Millisecond)
	profiles := t.TempDir()
	c := &chromium.Chromium{Namespace: tb.Topo.Client, ProfileDir: profiles, Timeout: 20 * time.Second, Warm: true}
	defer c.Close()
	clienttest.WarmBrowserRestartsAfterCrash(t, c, profiles, clienttest.Request(tb, s, factor.H2))
}

// TestChromiumWritesNetLog loads a page over h3 with a net log: Chromium's
// NetLog is complete JSON (the browser ended cleanly) and holds the QUIC
// session to the page's host.
func TestChromiumWritesNetLog(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "apt-get install chromium")
	tb, s := startTestbed(t, 5*time.Millisecond)
	dir := t.TempDir()
	c := &chromium.Chromium{Namespace: tb.Topo.Client, ProfileDir: t.TempDir(), Timeout: 30 * time.Second}
	t.Cleanup(c.Close) // waits for the browser that is still shutting down before its profile goes
	res, err := c.Load(t.Context(), client.Request{URL: s.DocumentURL(), Protocol: factor.H3, Hosts: s.Hosts(),
		Addrs: tb.Addrs, SPKIHash: tb.Certs.SPKIHash, Expected: s.Subresources, NetLogDir: dir})
	if err != nil || !res.OK() {
		t.Fatalf("load: %v %s", err, res.Failure)
	}
	data, err := os.ReadFile(filepath.Join(dir, chromium.NetLogFile))
	if err != nil {
		t.Fatal(err)
	}
	var log struct {
		Constants struct {
			LogEventTypes map[string]int `json:"logEventTypes"`
		} `json:"constants"`
		Events []struct {
			Type   int            `json:"type"`
			Params map[string]any `json:"params"`
		} `json:"events"`
	}
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatalf("the NetLog (%d B) is not complete JSON: %v", len(data), err)
	}
	quic, ok := log.Constants.LogEventTypes["QUIC_SESSION"]
	if !ok {
		t.Fatal("the NetLog names no QUIC_SESSION event type")
	}
	sessions := 0
	for _, e := range log.Events {
		if e.Type == quic && strings.HasPrefix(fmt.Sprint(e.Params["host"]), s.Hosts()[0]) {
			sessions++
		}
	}
	t.Logf("NetLog: %d B, %d events, %d QUIC_SESSION events for %s", len(data), len(log.Events), sessions, s.Hosts()[0])
	if sessions == 0 {
		t.Errorf("no QUIC session to %s in the NetLog", s.Hosts()[0])
	}
}

// TestTheBrowserAsksTheTestbedNothingOfItsOwn: a fresh Chromium whose
// resolver rules send accounts.google.com to the testbed's server, as a
// recording with that host does, makes no request there of its own (it
// lists a new profile's Google accounts once its network is up, unless
// told to ask elsewhere): the server serves the page's requests and no
// more, during the load and in the second after it.
func TestTheBrowserAsksTheTestbedNothingOfItsOwn(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "apt-get install chromium")
	tb, s := startTestbed(t, 5*time.Millisecond)
	addrs := maps.Clone(tb.Addrs)
	addrs["accounts.google.com"] = tb.Addrs["www.quicbench.test"]
	c := &chromium.Chromium{Namespace: tb.Topo.Client, ProfileDir: t.TempDir(), Timeout: 30 * time.Second}
	t.Cleanup(c.Close)
	before, err := tb.Counts()
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Load(t.Context(), client.Request{URL: s.DocumentURL(), Protocol: factor.H2, Hosts: s.Hosts(),
		Addrs: addrs, SPKIHash: tb.Certs.SPKIHash, CAFile: tb.Certs.CAFile, Expected: s.Subresources})
	if err != nil || !res.OK() {
		t.Fatalf("load: %v %s", err, res.Failure)
	}
	time.Sleep(time.Second)
	after, err := tb.Counts()
	if err != nil {
		t.Fatal(err)
	}
	if served, page := after.Sub(before).Total(), int64(len(s.Subresources)+1); served != page {
		t.Errorf("the server served %d requests for the page's %d: the browser asked for something of its own", served, page)
	}
}
