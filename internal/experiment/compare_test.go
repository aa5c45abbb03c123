package experiment

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/netcheck"
	"github.com/quicbench/quicbench/internal/origin"
	"github.com/quicbench/quicbench/internal/pcap"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/stacks"
	"github.com/quicbench/quicbench/internal/testbed"
	"github.com/quicbench/quicbench/internal/testenv"
)

// TestCompareEndToEnd runs a small real comparison: 2 rounds of h2 and h3 in
// real Chromium behind a lossy, rate-limited link, with the page on two
// origins, and checks the rounds, the summaries, the link counters and the
// files in the run directory.
func TestCompareEndToEnd(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, client.DefaultChromiumPath, "apt-get install chromium")
	dir := t.TempDir()
	var seen []Load
	res, err := Compare(context.Background(), CompareConfig{
		Link: emulator.Config{
			Up:   link.Config{Delay: 15 * time.Millisecond, Loss: 0.005, RateBitsPerSecond: 5e6, QueueBytes: 100_000},
			Down: link.Config{Delay: 15 * time.Millisecond, Loss: 0.005, RateBitsPerSecond: 20e6, QueueBytes: 200_000},
		},
		Page:      site.SyntheticSpec{Objects: 6, ObjectBytes: 3000},
		Origins:   2,
		Stack:     mustStack(t, "tcp+"),
		Pcap:      true,
		Qlog:      true,
		Protocols: []client.Protocol{client.H2, client.H3},
		Runs:      2,
		Seed:      7,
		RunDir:    dir,
		RTT:       30 * time.Millisecond,
		Netcheck:  true,
		OnLoad:    func(l Load) { seen = append(seen, l) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Loads) != 4 || len(seen) != 4 || res.Interrupted {
		t.Fatalf("%d loads (%d reported), interrupted=%v; want 4", len(res.Loads), len(seen), res.Interrupted)
	}
	for round := 1; round <= 2; round++ {
		protos := map[client.Protocol]bool{}
		for _, l := range res.Loads[2*(round-1) : 2*round] {
			if l.Round != round {
				t.Errorf("load in round %d says round %d", round, l.Round)
			}
			protos[l.Requested] = true
		}
		if !protos[client.H2] || !protos[client.H3] {
			t.Errorf("round %d did not load each protocol once: %v", round, protos)
		}
	}
	for _, l := range res.Loads {
		hosts := map[string]bool{}
		for _, r := range l.Resources {
			hosts[strings.Split(strings.TrimPrefix(r.URL, "https://"), "/")[0]] = true
		}
		if l.OK() && (!hosts["www.quicbench.test"] || !hosts["o2.quicbench.test"]) {
			t.Errorf("a verified load fetched from %v, want both origins", hosts)
		}
	}
	for _, s := range res.Summaries {
		if s.OK+s.Failed != 2 {
			t.Errorf("%s: %d ok + %d failed, want 2 loads", s.Protocol, s.OK, s.Failed)
		}
		if s.OK > 0 && (s.PLT.N != s.OK || !(s.PLT.Median > 30)) {
			t.Errorf("%s: PLT %+v from %d verified loads over a 30 ms RTT", s.Protocol, s.PLT, s.OK)
		}
		for _, l := range res.Loads {
			if l.Requested == s.Protocol && l.OK() && l.ServerRequests.Of(string(s.Protocol)) < 7 {
				t.Errorf("%s load: server saw %+v, want ≥ 7 requests over it", s.Protocol, l.ServerRequests)
			}
		}
	}
	// First visits: every connection that served a request was a full
	// handshake over the load's transport, with its statistics read.
	for _, l := range res.Loads {
		if !l.OK() {
			continue
		}
		transport := map[client.Protocol]string{client.H2: "tcp", client.H3: "quic"}[l.Requested]
		for _, c := range l.Connections {
			if c.Requests > 0 && (c.Handshake != origin.HandshakeFull || c.Transport != transport || c.BytesSent == 0 || c.SmoothedRTTMs < 30) {
				t.Errorf("%s first visit: connection %+v, want a full %s handshake with bytes sent and an RTT ≥ 30 ms", l.Requested, c, transport)
			}
		}
	}
	if res.Downlink.Packets == 0 || res.Uplink.Packets == 0 || res.Downlink.Delivered > res.Downlink.Packets {
		t.Errorf("link counters up %+v down %+v", res.Uplink, res.Downlink)
	}

	f, err := os.Open(filepath.Join(dir, "loads.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); n++ {
		var l Load
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("loads.jsonl line %d: %v", n+1, err)
		}
		if l.Requested != res.Loads[n].Requested || l.PLTMs != res.Loads[n].PLTMs {
			t.Errorf("loads.jsonl line %d differs from the result", n+1)
		}
	}
	if n != 4 {
		t.Errorf("loads.jsonl has %d lines, want 4", n)
	}
	// The stack read back from the kernel, the congestion control from a
	// socket a browser connected to.
	if st := res.Stack; st.Congestion != "cubic" || st.InitCwnd != 32 || st.SlowStartAfterIdle != "0" || !st.Pacing {
		t.Errorf("TCP stack %+v, want tcp+: cubic, initcwnd 32, no slow start after idle, pacing", st)
	}
	// The netcheck ran and stored its six checks; their correctness is
	// the netcheck package's tests' (its idle p99 can catch a VM pause).
	if res.Netcheck == nil || len(res.Netcheck.Lines) != 6 {
		t.Errorf("netcheck %+v, want 6 checks", res.Netcheck)
	}
	for _, l := range res.Netcheck.Lines {
		if strings.HasPrefix(l.Check, "loss") && l.Result != netcheck.Pass {
			t.Errorf("netcheck %s: %s %s", l.Check, l.Result, l.Measured)
		}
	}
	// The loads' counters exclude the netcheck's thousands of probes.
	if res.Uplink.Packets > 2000 {
		t.Errorf("uplink counted %d packets for 4 small page loads: the netcheck's traffic is in them", res.Uplink.Packets)
	}
	// Every load has its capture, with the load's packets in it.
	for _, l := range res.Loads {
		f, err := os.Open(filepath.Join(dir, l.Pcap))
		if err != nil {
			t.Fatalf("load %d %s: %v", l.Round, l.Requested, err)
		}
		pkts, err := pcap.Read(f)
		f.Close()
		if err != nil || len(pkts) < 20 {
			t.Errorf("%s: %d packets, %v; want the load's packets", l.Pcap, len(pkts), err)
		}
	}
	// Every h3 load has its server qlog, complete now that the run ended.
	for _, l := range res.Loads {
		if l.Requested != client.H3 {
			if l.Qlog != "" {
				t.Errorf("an %s load has a qlog", l.Requested)
			}
			continue
		}
		files, _ := os.ReadDir(filepath.Join(dir, l.Qlog))
		if len(files) == 0 {
			t.Errorf("no qlog in %s", l.Qlog)
		}
		for _, f := range files {
			data, _ := os.ReadFile(filepath.Join(dir, l.Qlog, f.Name()))
			if !strings.Contains(string(data), "transport:packet_sent") {
				t.Errorf("%s/%s has no packet events", l.Qlog, f.Name())
			}
		}
	}
	for _, name := range []string{"summary.json", "netcheck.json", "ca.pem", "leaf.pem"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s missing from the run directory: %v", name, err)
		}
	}
}

// TestRepeatVisit loads a page twice per protocol in one browser with the
// servers closing their connections between the visits: h3 must come back
// with 0-RTT and h2 with TLS resumption on every connection, from the Go
// servers and from nginx; with the cache on, the second visit takes the
// images from the browser's cache.
func TestRepeatVisit(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, client.DefaultChromiumPath, "apt-get install chromium")
	lan := emulator.Config{Up: link.Config{Delay: 10 * time.Millisecond}, Down: link.Config{Delay: 10 * time.Millisecond}}
	page := site.SyntheticSpec{Objects: 4, ObjectBytes: 2000}
	all := []client.Protocol{client.H1, client.H2, client.H3}
	for _, c := range []struct {
		server    string
		cache     bool
		protocols []client.Protocol
	}{
		{testbed.ServerGo, false, all},
		{testbed.ServerGo, true, all},
		{testbed.ServerNginx, false, all[:2]},
	} {
		cache := c.cache
		res, err := Compare(context.Background(), CompareConfig{
			Link: lan, RTT: 20 * time.Millisecond, Page: page, Stack: mustStack(t, "tcp"), Server: c.server,
			Protocols: c.protocols, Runs: 1, Seed: 3,
			RunDir: t.TempDir(), Visit: client.RepeatVisit, Cache: cache,
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Loads) != len(c.protocols) {
			t.Errorf("%s servers: %d loads, want %d", c.server, len(res.Loads), len(c.protocols))
		}
		for _, l := range res.Loads {
			if !l.OK() || l.Visit != client.RepeatVisit || !(l.FirstVisitPLTMs > 20) {
				t.Errorf("%s servers, cache %v, %s: failure %q, visit %q, first visit PLT %.1f ms", c.server, cache, l.Requested, l.Failure, l.Visit, l.FirstVisitPLTMs)
				continue
			}
			if cache {
				// Fresh in the cache: no image is requested again.
				if n := l.ServerRequests.Total(); n > 1 {
					t.Errorf("cache on, %s: the servers served %d requests on the repeat visit, want the images from the cache", l.Requested, n)
				}
				continue
			}
			want := map[client.Protocol]string{client.H2: origin.HandshakeResumed, client.H3: origin.Handshake0RTT}[l.Requested]
			resumed := 0
			for _, conn := range l.Connections {
				if conn.Requests == 0 {
					continue
				}
				if conn.Handshake != origin.HandshakeFull {
					resumed++
				}
				if want != "" && conn.Handshake != want {
					t.Errorf("%s repeat visit: a connection's handshake was %q, want %q", l.Requested, conn.Handshake, want)
				}
			}
			if resumed == 0 { // h1 too: Chromium keeps fewer tickets than it opens connections
				t.Errorf("%s repeat visit: no connection resumed: %+v", l.Requested, l.Connections)
			}
		}
	}
}

func mustStack(t *testing.T, name string) stacks.Profile {
	t.Helper()
	p, err := stacks.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBuiltInLoader loads a two-origin page with the built-in loader over
// each protocol behind a 20 ms link, as repeat visits: every load verifies
// on both sides, h3 comes back with 0-RTT, and HTTP/1.1 opens at most 6
// connections per origin.
func TestBuiltInLoader(t *testing.T) {
	testenv.RequireRoot(t)
	lan := emulator.Config{Up: link.Config{Delay: 10 * time.Millisecond}, Down: link.Config{Delay: 10 * time.Millisecond}}
	res, err := Compare(context.Background(), CompareConfig{
		Link: lan, RTT: 20 * time.Millisecond, Page: site.SyntheticSpec{Objects: 20, ObjectBytes: 5000}, Origins: 2,
		Stack: mustStack(t, "tcp"), Protocols: []client.Protocol{client.H1, client.H2, client.H3}, Runs: 1, Seed: 4,
		RunDir: t.TempDir(), Visit: client.RepeatVisit, Loader: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range res.Loads {
		if !l.OK() || len(l.Resources) != 20 || l.PLTMs < 20 || l.ServerRequests.Of(string(l.Requested)) != 21 {
			t.Errorf("%s: failure %q, %d resources, PLT %.1f ms, server requests %+v", l.Requested, l.Failure, len(l.Resources), l.PLTMs, l.ServerRequests)
		}
		perOrigin := map[string]int{}
		for _, c := range l.Connections {
			perOrigin[c.ServerName]++
			if l.Requested == client.H3 && c.Requests > 0 && c.Handshake != origin.Handshake0RTT {
				t.Errorf("h3 repeat visit: handshake %q, want 0rtt", c.Handshake)
			}
		}
		for host, n := range perOrigin {
			if (l.Requested == client.H1 && n > 6) || (l.Requested != client.H1 && n != 1) {
				t.Errorf("%s: %d connections to %s", l.Requested, n, host)
			}
		}
	}
}

// TestWarmBrowserLoadsAreFirstVisits loads a page three times per protocol
// in warm browsers (a new browser context per load): no load may resume a
// TLS or QUIC session of an earlier one or find a connection open, and no
// browser may outlive the run.
func TestWarmBrowserLoadsAreFirstVisits(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, client.DefaultChromiumPath, "apt-get install chromium")
	lan := emulator.Config{Up: link.Config{Delay: 15 * time.Millisecond}, Down: link.Config{Delay: 15 * time.Millisecond}}
	dir := t.TempDir()
	res, err := Compare(context.Background(), CompareConfig{
		Link: lan, RTT: 30 * time.Millisecond, Page: site.SyntheticSpec{Objects: 4, ObjectBytes: 3000}, Stack: mustStack(t, "tcp"),
		Protocols: []client.Protocol{client.H2, client.H3}, Runs: 3, Seed: 5, RunDir: dir, WarmBrowser: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range res.Loads {
		if !l.OK() {
			t.Errorf("%s round %d: %s", l.Requested, l.Round, l.Failure)
			continue
		}
		for _, c := range l.Connections {
			if c.Requests > 0 && c.Handshake != origin.HandshakeFull {
				t.Errorf("%s round %d: a %s handshake in a fresh browser context", l.Requested, l.Round, c.Handshake)
			}
		}
		// h2 needs TCP, TLS and the request: 3 round trips to the first
		// byte; a connection opened earlier would make it 1.
		if l.Requested == client.H2 && l.TTFBMs < 2.5*30 {
			t.Errorf("h2 round %d: TTFB %.1f ms, under 3 round trips of 30 ms", l.Round, l.TTFBMs)
		}
	}
	if procs := chromiumProcessesUsing(dir); len(procs) > 0 {
		t.Errorf("browsers left running: %v", procs)
	}
}

// chromiumProcessesUsing lists live processes whose command line mentions
// dir.
func chromiumProcessesUsing(dir string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), dir) {
			out = append(out, e.Name())
		}
	}
	return out
}
