package experiment

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/chromium"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/firefox"
	"github.com/quicbench/quicbench/internal/netcheck"
	"github.com/quicbench/quicbench/internal/pcap"
	"github.com/quicbench/quicbench/internal/proc"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/stacks"
	"github.com/quicbench/quicbench/internal/testbed"
	"github.com/quicbench/quicbench/internal/testenv"
)

// trialsOf reads every trial of a run with its resources and connections.
func trialsOf(t *testing.T, store *results.Store) []trialRecord {
	t.Helper()
	var out []trialRecord
	if err := store.EachTrial(func(tr results.Trial) error { out = append(out, trialRecord{Trial: tr}); return nil }); err != nil {
		t.Fatal(err)
	}
	for i := range out {
		var err error
		if out[i].resources, err = store.ResourcesOf(out[i].ID); err != nil {
			t.Fatal(err)
		}
		if out[i].conns, err = store.ConnectionsOf(out[i].ID); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

type trialRecord struct {
	results.Trial
	resources []results.Resource
	conns     []results.Connection
}

// TestChromiumEndToEnd runs a small real comparison: 2 repetitions of h2
// and h3 in real Chromium behind a lossy, rate-limited link, with the page
// on two origins, the tcp+ stack, captures, qlogs and a netcheck, and
// checks what the results database holds.
func TestChromiumEndToEnd(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "apt-get install chromium")
	res, store, dir := runSpec(t, `seed: 7
repetitions: 2
retries: 0
artifacts: {pcap: true, qlog: true}
factors:
  networks: [{name: lossy, rtt: 30ms, loss: 0.5, down: 20mbit, up: 5mbit, queue: 200KB}]
  pages: [synthetic:6x3KB]
  origins: [2]
  stacks: [tcp+]
  protocols: [h2, h3]
`)
	if res.Done != 4 || res.Interrupted {
		t.Fatalf("result %+v", res)
	}
	trials := trialsOf(t, store)
	for rep := int64(1); rep <= 2; rep++ {
		protos := map[string]bool{}
		for _, tr := range trials[2*(rep-1) : 2*rep] {
			if tr.Rep != rep {
				t.Errorf("trial in block %d is repetition %d", rep, tr.Rep)
			}
			protos[string(tr.Protocol)] = true
		}
		if !protos["h2"] || !protos["h3"] {
			t.Errorf("repetition %d did not load each protocol once: %v", rep, protos)
		}
	}
	for _, tr := range trials {
		checkVerifiedTrial(t, dir, tr)
	}
	checkOverheadIsTheWholeTrial(t, trials)
	checkTestbedAndNetcheck(t, store)
}

// checkOverheadIsTheWholeTrial: a trial's overhead is all the time from the
// previous trial's record to its own beyond its load, the runner's work
// between the loads included.
func checkOverheadIsTheWholeTrial(t *testing.T, trials []trialRecord) {
	t.Helper()
	for i := 1; i < len(trials); i++ {
		tr, prev := trials[i], trials[i-1]
		if tr.Overhead == nil || tr.PLT == nil {
			t.Errorf("trial %d: overhead %v, PLT %v", tr.Seq, tr.Overhead, tr.PLT)
			continue
		}
		span := ms(tr.FinishedAt.Sub(prev.FinishedAt).Seconds())
		if got := *tr.Overhead + *tr.PLT; math.Abs(got-span) > 0.01 || *tr.Overhead <= 0 {
			t.Errorf("trial %d: overhead %.3f ms + PLT %.3f ms = %.3f ms, want the %.3f ms since trial %d was recorded, overhead above 0",
				tr.Seq, *tr.Overhead, *tr.PLT, got, span, prev.Seq)
		}
	}
}

// checkVerifiedTrial checks one trial of TestChromiumEndToEnd: both
// origins, the servers' view, first-visit connections, link counters
// without the netcheck's probes, its capture and qlog.
func checkVerifiedTrial(t *testing.T, dir string, tr trialRecord) {
	t.Helper()
	if tr.Status != results.StatusOK {
		t.Errorf("%s: %s", tr.Protocol, tr.Error)
		return
	}
	hosts := map[string]bool{}
	for _, r := range tr.resources {
		hosts[strings.Split(strings.TrimPrefix(r.URL, "https://"), "/")[0]] = true
	}
	if !hosts["www.quicbench.test"] || !hosts["o2.quicbench.test"] || *tr.PLT <= 30 || tr.ServerRequests < 7 {
		t.Errorf("%s: hosts %v, PLT %v, %d server requests", tr.Protocol, hosts, *tr.PLT, tr.ServerRequests)
	}
	// Typed columns: the network's values and the page's make-up.
	if tr.RTTMs != 30 || tr.LossUpPct != 0.5 || tr.LossModelDown != "bernoulli" || tr.RateDownBps != 20e6 || tr.QueueDownBytes != 200_000 ||
		tr.Origins != 2 || tr.PageObjects != 6 || tr.PageBytes <= 18_000 || tr.UpSeed == 0 || tr.Stack != "tcp+" {
		t.Errorf("%s: typed columns %+v %+v", tr.Protocol, tr.NetworkValues, tr.PageValues)
	}
	transport := map[string]string{"h2": "tcp", "h3": "quic"}[string(tr.Protocol)]
	for _, c := range tr.conns {
		if c.Requests > 0 && (c.Handshake != server.HandshakeFull || c.Transport != transport || c.BytesSent == 0 || c.SRTTMs < 30) {
			t.Errorf("%s first visit: connection %+v, want a full %s handshake with bytes sent and an RTT ≥ 30 ms", tr.Protocol, c, transport)
		}
	}
	if int64(len(tr.conns)) != tr.Connections || tr.Connections == 0 {
		t.Errorf("%s: %d connection rows, the trial says %d", tr.Protocol, len(tr.conns), tr.Connections)
	}
	// No load beats its physical lower bound: 2 (h2) or 1 (h3) handshake
	// round trips, the document, then the images on both origins.
	wantHS := map[string]int64{"h2": 2, "h3": 1}[string(tr.Protocol)]
	if tr.BoundMs == nil || tr.ExcessMs == nil || *tr.ExcessMs < 0 || tr.BoundHandshakeRTTs != wantHS || *tr.BoundChainRTTs != float64(2*wantHS+2) {
		v := func(p *float64) float64 {
			if p == nil {
				return math.NaN()
			}
			return *p
		}
		t.Errorf("%s: bound %.1f ms (chain %.1f RTTs, handshake %d), excess %.1f ms", tr.Protocol, v(tr.BoundMs), v(tr.BoundChainRTTs), tr.BoundHandshakeRTTs, v(tr.ExcessMs))
	}
	// The loads' counters exclude the netcheck's thousands of probes.
	if tr.DownPackets == 0 || tr.UpPackets == 0 || tr.UpPackets > 1000 {
		t.Errorf("%s: link counters %+v", tr.Protocol, tr.Link)
	}
	checkArtifacts(t, dir, tr)
}

// checkArtifacts: every load has its capture, with its packets, and every
// h3 load its server qlog, complete once the run ended.
func checkArtifacts(t *testing.T, dir string, tr trialRecord) {
	t.Helper()
	names := strings.Split(tr.Artifacts, ",")
	f, err := os.Open(filepath.Join(dir, names[0]))
	if err != nil || !strings.HasSuffix(names[0], ".pcap") {
		t.Fatalf("%s: artifacts %q: %v", tr.Protocol, tr.Artifacts, err)
	}
	pkts, err := pcap.Read(f)
	f.Close()
	if err != nil || len(pkts) < 20 {
		t.Errorf("%s: %d packets, %v; want the load's packets", names[0], len(pkts), err)
	}
	if (tr.Protocol == "h3") != (len(names) == 2) {
		t.Fatalf("%s: artifacts %q", tr.Protocol, tr.Artifacts)
	}
	if tr.Protocol != "h3" {
		return
	}
	files, _ := os.ReadDir(filepath.Join(dir, names[1]))
	if len(files) == 0 {
		t.Errorf("no qlog in %s", names[1])
	}
	for _, f := range files {
		data, _ := os.ReadFile(filepath.Join(dir, names[1], f.Name()))
		if !strings.Contains(string(data), "transport:packet_sent") {
			t.Errorf("%s/%s has no packet events", names[1], f.Name())
		}
	}
}

// checkTestbedAndNetcheck: the stack read back from the kernel, the
// congestion control from a socket a browser connected to, the emulator's
// calibration, and the netcheck's six checks.
func checkTestbedAndNetcheck(t *testing.T, store *results.Store) {
	t.Helper()
	tbs, err := store.Testbeds()
	if err != nil || len(tbs) != 1 {
		t.Fatalf("testbeds %+v, %v", tbs, err)
	}
	if st := tbs[0]; st.Congestion != "cubic" || st.InitCwnd != 32 || st.SlowStartAfterIdle != "0" || !st.Pacing || st.Origins != 2 {
		t.Errorf("testbed %+v, want tcp+: cubic, initcwnd 32, no slow start after idle, pacing", st)
	}
	// The emulator's own latency, as calibrated, is a fraction of a
	// millisecond, and no more of it was taken off than measured.
	if st := tbs[0]; st.PathLatencyMs < 0 || st.PathLatencyMs > 1 || st.CompensationMs > st.PathLatencyMs+1e-9 {
		t.Errorf("testbed's emulator latency %.3f ms, %.3f ms taken off; want measured in [0, 1] and at most that taken off", st.PathLatencyMs, st.CompensationMs)
	}
	checks, err := store.Netchecks()
	if err != nil || len(checks) != 1 {
		t.Fatalf("netchecks %v, %v", checks, err)
	}
	var report netcheck.Report
	if err := json.Unmarshal([]byte(checks["lossy"]), &report); err != nil || len(report.Lines) != 6 {
		t.Fatalf("netcheck %+v, %v; want 6 checks", report, err)
	}
	// Their correctness is the netcheck package's tests' (its idle p99
	// can catch a VM pause); the loss checks must pass.
	for _, l := range report.Lines {
		if strings.HasPrefix(l.Check, "loss") && l.Result != netcheck.Pass {
			t.Errorf("netcheck %s: %s %s", l.Check, l.Result, l.Measured)
		}
	}
}

// TestRepeatVisit loads a page twice per trial in one browser with the
// servers closing their connections between the visits: h3 must come back
// with 0-RTT and h2 with TLS resumption on every connection, from the Go
// servers and from nginx; with the cache on, the second visit takes the
// images from the browser's cache.
func TestRepeatVisit(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "apt-get install chromium")
	_, store, _ := runSpec(t, `seed: 3
repetitions: 1
retries: 0
netcheck: false
factors:
  networks: [{rtt: 20ms}]
  pages: [synthetic:4x2KB]
  servers: [go, nginx]
  visits: [repeat]
  cache: [off, on]
`)
	trials := trialsOf(t, store)
	if len(trials) != 12 {
		t.Fatalf("%d trials, want 2 servers × 3 protocols × 2 cache levels", len(trials))
	}
	for _, tr := range trials {
		name := fmt.Sprintf("%s servers, cache %v, %s", tr.Server, tr.Cache, tr.Protocol)
		if tr.Status != results.StatusOK || tr.Visit != "repeat" || tr.FirstVisitPLT == nil || *tr.FirstVisitPLT < 20 {
			t.Errorf("%s: %s %q, first visit PLT %v", name, tr.Status, tr.Error, tr.FirstVisitPLT)
			continue
		}
		if tr.Cache {
			// Fresh in the cache: no image is requested again.
			if tr.ServerRequests > 1 {
				t.Errorf("%s: the servers served %d requests on the repeat visit, want the images from the cache", name, tr.ServerRequests)
			}
			continue
		}
		checkResumed(t, name, string(tr.Protocol), tr.conns)
	}
}

// checkResumed: h3 connections of a repeat visit use 0-RTT, h2 resume, and
// some h1 connections resume (Chromium keeps fewer tickets than it opens
// connections).
func checkResumed(t *testing.T, name, protocol string, conns []results.Connection) {
	t.Helper()
	want := map[string]string{"h2": server.HandshakeResumed, "h3": server.Handshake0RTT}[protocol]
	resumed := 0
	for _, c := range conns {
		if c.Requests == 0 {
			continue
		}
		if c.Handshake != server.HandshakeFull {
			resumed++
		}
		if want != "" && c.Handshake != want {
			t.Errorf("%s: a connection's handshake was %q, want %q", name, c.Handshake, want)
		}
	}
	if resumed == 0 {
		t.Errorf("%s: no connection resumed: %+v", name, conns)
	}
}

// TestWarmBrowserLoadsAreFirstVisits loads a page three times per
// protocol in warm Chromium, its headless shell and Firefox (a new browser
// or user context per load), each discovering h3 through Alt-Svc and looking the
// hosts up at the testbed's DNS: every load must pass the servers' first
// visit check (notFirstVisit: full handshakes only, every response from a
// server, a lookup per host, no h3 before its offer), h2's first byte
// must take its three round trips, and no browser may outlive the run.
func TestWarmBrowserLoadsAreFirstVisits(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "apt-get install chromium")
	testenv.RequireFile(t, chromium.DefaultShellPath, "make chromium-shell")
	testenv.RequireFile(t, firefox.DefaultPath, "apt-get install firefox-esr libnss3-tools")
	_, store, dir := runSpec(t, `seed: 5
repetitions: 3
retries: 0
netcheck: false
browser: warm
factors:
  networks: [{rtt: 30ms}]
  pages: [synthetic:4x3KB]
  protocols: [h2, h3]
  clients: [chromium, chromium-shell, firefox]
  discovery: [alt-svc]
  dns: [resolved]
`)
	trials := trialsOf(t, store)
	if len(trials) != 18 {
		t.Fatalf("%d trials, want 18", len(trials))
	}
	for _, tr := range trials {
		name := fmt.Sprintf("%s %s rep %d", tr.Client, tr.Protocol, tr.Rep)
		if tr.Status != results.StatusOK || tr.Browser != "warm" {
			t.Errorf("%s: %s %s, browser %s", name, tr.Status, tr.Error, tr.Browser)
			continue
		}
		full := 0
		for _, c := range tr.conns {
			if c.Requests > 0 && c.Handshake == server.HandshakeFull {
				full++
			}
		}
		if full == 0 || tr.DNSQueries == 0 {
			t.Errorf("%s: %d connections after full handshakes, %d lookups: the check had nothing to read", name, full, tr.DNSQueries)
		}
		// h2 needs TCP, TLS and the request: 3 round trips to the first
		// byte; a connection opened earlier would make it 1.
		if tr.Protocol == "h2" && *tr.TTFB < 2.5*30 {
			t.Errorf("%s: TTFB %.1f ms, under 3 round trips of 30 ms", name, *tr.TTFB)
		}
	}
	if procs := proc.Using(dir); len(procs) > 0 {
		t.Errorf("browsers left running: %v", procs)
	}
}

// TestQUICStacksInChromium loads a page over h3 in real Chromium from
// quic-go, and from quinn and quiche with each of their congestion
// controls, as repeat visits:
// every trial must be verified as h3, name its server and controller,
// and come back with 0-RTT; the servers' connection records name the
// controller, and each testbed records its transport.
func TestQUICStacksInChromium(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "apt-get install chromium")
	_, store, _ := runSpec(t, `seed: 5
repetitions: 1
retries: 0
netcheck: false
factors:
  networks: [{rtt: 20ms, loss: 0.5}]
  pages: [synthetic:6x20KB]
  protocols: [h3]
  quic: [quic-go, quinn+cubic, quinn+newreno, quinn+bbr, quiche+cubic, quiche+reno, quiche+bbr2]
  visits: [repeat]
`)
	const quicStacks = 7
	trials := trialsOf(t, store)
	if len(trials) != quicStacks {
		t.Fatalf("%d trials, want one per QUIC stack", len(trials))
	}
	seen := map[string]bool{}
	for _, tr := range trials {
		name := string(tr.QUICServer) + "+" + string(tr.QUICCC)
		seen[name] = true
		if tr.Status != results.StatusOK || tr.Protocol != "h3" || tr.ServerRequests == 0 {
			t.Errorf("%s: %s %q, %d requests served", name, tr.Status, tr.Error, tr.ServerRequests)
			continue
		}
		checkResumed(t, name, "h3", tr.conns)
		for _, c := range tr.conns {
			if c.Transport != "quic" || c.Congestion != string(tr.QUICCC) {
				t.Errorf("%s: connection %+v, want quic with %s", name, c, tr.QUICCC)
			}
		}
	}
	if len(seen) != quicStacks || !seen["quic-go+newreno"] || !seen["quinn+bbr"] || !seen["quiche+bbr2"] {
		t.Errorf("trials name the stacks %v", seen)
	}
	tbs, err := store.Testbeds()
	if err != nil || len(tbs) != quicStacks {
		t.Fatalf("testbeds %+v, %v", tbs, err)
	}
	profiles := map[factor.QUIC]stacks.QUICTransport{}
	for _, p := range testbed.QUICProfiles() {
		profiles[p.Name] = p.Transport
	}
	for _, tb := range tbs {
		q, _ := factor.QUICOf(factor.QUICServer(tb.QUICServer), factor.CC(tb.QUICCC))
		want, got := profiles[q], stacks.QUICTransport{Congestion: tb.QUICCC, InitialWindowBytes: int(tb.QUICInitialWindowBytes), Pacing: tb.QUICPacing, HyStart: tb.QUICHyStart}
		if want.InitialWindowBytes < 38_400 || got != want {
			t.Errorf("testbed %s: QUIC %s records %+v, its profile says %+v", tb.Key, tb.QUICServer, got, want)
		}
	}
}

// TestRunTwoClients: clients are a cell factor: one testbed, Chromium's and
// Firefox's loads of each repetition from the same link seeds, every load
// verified and stored with its client.
func TestRunTwoClients(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "apt-get install chromium")
	testenv.RequireFile(t, firefox.DefaultPath, "apt-get install firefox-esr libnss3-tools")
	res, store, _ := runSpec(t, "repetitions: 1\nnetcheck: false\nfactors:\n  networks: [{rtt: 20ms}]\n  pages: [synthetic:4x10KB]\n"+
		"  protocols: [h2, h3]\n  clients: [chromium, firefox]\n")
	if res.Done != 4 {
		t.Fatalf("result %+v", res)
	}
	seen := map[factor.Client]int{}
	seeds := map[int64]bool{}
	for _, tr := range trialsOf(t, store) {
		if tr.Status != results.StatusOK {
			t.Errorf("%s %s: %s", tr.Client, tr.Protocol, tr.Error)
		}
		seen[tr.Client]++
		seeds[tr.UpSeed] = true
	}
	if seen[factor.ClientChromium] != 2 || seen[factor.ClientFirefox] != 2 || len(seeds) != 1 {
		t.Errorf("loads per client %v, up seeds %v; want 2 each from one pair of seeds", seen, seeds)
	}
}
