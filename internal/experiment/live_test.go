package experiment

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/chromium"
	"github.com/quicbench/quicbench/internal/firefox"
	"github.com/quicbench/quicbench/internal/live"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/spec"
	"github.com/quicbench/quicbench/internal/testbed/standin"
	"github.com/quicbench/quicbench/internal/testenv"
)

// liveSpec is a spec of one round of protocols over a live page of the
// stand-in site, pinned to its address, its CA trusted, with extra live:
// keys, loaded by clients.
func liveSpec(st *standin.Site, protocols, clients, extra string) string {
	return fmt.Sprintf(`repetitions: 1
retries: 0
netcheck: false
live: {resolve: ["%s=%s"], ca: %q%s}
factors:
  networks: [{name: n, rtt: 40ms, down: 20mbit, up: 5mbit}]
  pages: ["url:https://%s/"]
  protocols: [%s]
  clients: [%s]
`, standin.Host, standin.Addr, st.Certs.CAFile, extra, standin.Host, protocols, clients)
}

// TestCompareALiveSite: a live page (the stand-in site beyond the host's
// routing, pinned as --resolve pins it, its staging CA given) loads in
// Chromium and Firefox over h1, h2 and h3, each forced and verified from the
// browser's records and the capture; the testbed records what the origin
// offered and the round trip beyond the emulator; the stand-in served
// each protocol's requests, every one with the run's User-Agent suffix
// (the browsers' own User-Agents before it), within the run's cap of
// loads (compare's test stops a run at it).
func TestCompareALiveSite(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "make deps")
	testenv.RequireFile(t, firefox.DefaultPath, "make deps")
	st := standin.Serve(t, 6, 10_000, nil, []string{standin.Host})
	res, store, _ := runSpec(t, liveSpec(st, "h1, h2, h3", "chromium, firefox", ", max_loads: 6"))
	if res.Done != 6 || res.Failed != 0 {
		t.Errorf("result %+v, want 6 verified loads", res)
	}
	for _, tr := range trialsOf(t, store) {
		p := tr.Levels.Protocol
		t.Logf("%s %s: TTFB %.1f ms, PLT %.1f ms", tr.Levels.Client, p, deref(tr.TTFB), deref(tr.PLT))
		if tr.Status != results.StatusOK || tr.DocumentProtocol != p.NextHop() || tr.LiveExcluded != 0 || tr.LoadRequests != 6 {
			t.Errorf("%s %s: %s %q, document over %q, %d excluded, %d requests; want verified over %s, all 6 images", tr.Levels.Client, p, tr.Status, tr.Error, tr.DocumentProtocol, tr.LiveExcluded, tr.LoadRequests, p.NextHop())
		}
		// the emulated 40 ms: a connection and the document's request take two round trips at least
		// (Firefox's h1 TTFB is not its first byte, and not recorded)
		if tr.PLT == nil || *tr.PLT < 80 || (tr.TTFB != nil && *tr.TTFB < 40) {
			t.Errorf("%s: PLT %v, TTFB %v; want the emulated round trips paid", p, tr.PLT, tr.TTFB)
		}
	}
	tbs, err := store.Testbeds()
	if err != nil || len(tbs) != 1 {
		t.Fatalf("testbeds %+v, %v", tbs, err)
	}
	tb := tbs[0]
	if tb.LiveOrigins != standin.Host+" "+standin.Addr.String()+": h3 h2 http/1.1" {
		t.Errorf("live origins %q", tb.LiveOrigins)
	}
	if tb.BasePingMs == nil || *tb.BasePingMs > 10 || tb.BaseLossPct == nil || *tb.BaseLossPct != 0 {
		t.Errorf("ping %v ms, %v %% lost; want the stand-in's echoes, none lost", tb.BasePingMs, tb.BaseLossPct)
	}
	if tb.BaseRTTMs == nil || *tb.BaseRTTMs > 10 || tb.BaseRTTAfterMs == nil {
		t.Errorf("base RTT %v before, %v after; want the host's routing alone, far under the emulated 40 ms", tb.BaseRTTMs, tb.BaseRTTAfterMs)
	}
	t.Logf("live origins %q, base RTT %.2f ms before, %.2f ms after", tb.LiveOrigins, *tb.BaseRTTMs, *tb.BaseRTTAfterMs)
	if got := st.Server.Counts(); got.H1 == 0 || got.H2 == 0 || got.H3 == 0 {
		t.Errorf("the stand-in served %+v, want requests over each protocol", got)
	}
	// every request the stand-in saw, the probe's and both browsers', names the benchmark
	browsers := 0
	for agent, n := range st.UserAgents() {
		if !strings.HasSuffix(agent, live.DefaultAgentSuffix) {
			t.Errorf("%d requests with User-Agent %q, want it to end with %q", n, agent, live.DefaultAgentSuffix)
		}
		if strings.Contains(agent, "Chrome/") || strings.Contains(agent, "Firefox/") {
			browsers++
		}
	}
	if browsers != 2 {
		t.Errorf("User-Agents %v, want Chromium's and Firefox's own with the suffix", st.UserAgents())
	}
}

// TestALiveSiteIsRefusedWithTheReason: a page whose origin does not
// advertise HTTP/3 is refused before any load when h3 is asked for, a
// host pinned to a private address is refused without --allow-private,
// and a staging certificate without its CA is named; each is one line
// that says what to do.
func TestALiveSiteIsRefusedWithTheReason(t *testing.T) {
	testenv.RequireRoot(t)
	st := standin.Serve(t, 1, 1_000, nil, nil)
	for text, want := range map[string]string{
		liveSpec(st, "h3", "chromium", ""): "does not offer HTTP/3: its answer had no Alt-Svc h3=\":443\"",
		strings.Replace(liveSpec(st, "h2", "chromium", ""), standin.Addr.String(), "192.168.7.7", 1):         "a private address: aiming a benchmark there needs --allow-private",
		strings.Replace(liveSpec(st, "h2", "chromium", ""), fmt.Sprintf(", ca: %q", st.Certs.CAFile), "", 1): "its certificate is signed by an authority this machine does not trust: for a staging server, give its CA's PEM file with --ca FILE",
	} {
		s, err := spec.Parse([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(context.Background(), RunConfig{Spec: s, Dir: t.TempDir()})
		var input *InputError
		if !errors.As(err, &input) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") || res.Done != 0 {
			t.Errorf("%+v, %v; want no load and one line saying %q", res, err, want)
		}
	}
}

func deref(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}

// TestALiveSitesOtherHosts: a live page on three pinned hosts, two
// advertising HTTP/3 on the files the page names (their 404 for "/"
// does not) and one without it, loads over h3 from the two, found to
// offer it, and over h2 from the third, whose requests are left out of
// the verification, or fail the load where the rule says so.
func TestALiveSitesOtherHosts(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "make deps")
	st := standin.Serve(t, 6, 2_000, []string{standin.Host, standin.Static, standin.Images}, []string{standin.Host, standin.Static})
	pinAll := func(text string) string {
		at := "=" + standin.Addr.String() + `", "`
		return strings.Replace(text, `resolve: ["`+standin.Host, `resolve: ["`+standin.Static+at+standin.Images+at+standin.Host, 1)
	}
	for _, c := range []struct {
		rule string
		ok   bool
	}{{"", true}, {", unverified: fail", false}} {
		_, store, _ := runSpec(t, pinAll(liveSpec(st, "h3", "chromium", c.rule)))
		tr := trialsOf(t, store)[0]
		t.Logf("rule %q: %s %q, %d excluded, %d requests", c.rule, tr.Status, tr.Error, tr.LiveExcluded, tr.LoadRequests)
		if (tr.Status == results.StatusOK) != c.ok || tr.LiveExcluded != 2 || tr.LoadRequests != 6 {
			t.Errorf("rule %q: %s %q, %d excluded, %d requests; want ok=%v, img's 2 images excluded of 6", c.rule, tr.Status, tr.Error, tr.LiveExcluded, tr.LoadRequests, c.ok)
		}
		if !c.ok && !strings.Contains(tr.Error, "2 requests could not be verified over h3 and the rule is to fail (unverified: fail), e.g. https://img.standin.test/") {
			t.Errorf("rule %q: error %q, want the rule and an image of img named", c.rule, tr.Error)
		}
		tbs, err := store.Testbeds()
		if err != nil || len(tbs) != 1 || !strings.Contains(tbs[0].LiveOrigins, standin.Static+" "+standin.Addr.String()+": h3 h2 http/1.1") ||
			!strings.Contains(tbs[0].LiveOrigins, standin.Images+" "+standin.Addr.String()+": h2 http/1.1") {
			t.Errorf("live origins %+v, %v; want static found to offer h3 and img not", tbs, err)
		}
	}
}
