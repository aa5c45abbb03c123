package experiment

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/caddy"
	"github.com/quicbench/quicbench/internal/chromium"
	"github.com/quicbench/quicbench/internal/firefox"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/testenv"
)

// TestCaddyServesEveryProtocolFromOneProcess: Chromium loads a page over
// h1, h2 and h3 from one Caddy process, first and repeat visits; each load
// is verified by Caddy's access log (every request over the protocol
// asked for), its CPU is Caddy's, and a repeat visit over TCP resumes its
// TLS session across the reload that closes the first visit's
// connections (over QUIC, Caddy's log does not say: unknown).
func TestCaddyServesEveryProtocolFromOneProcess(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "apt-get install chromium")
	testenv.RequireFile(t, caddy.DefaultPath, "make caddy (apt-get install caddy)")
	_, store, _ := runSpec(t, `repetitions: 1
retries: 1
netcheck: false
factors:
  networks: [{name: near, rtt: 20ms}]
  pages: [synthetic:8x10KB]
  servers: [caddy]
  quic: caddy
  visits: [first, repeat]
  protocols: [h1, h2, h3]
`)
	trials := trialsOf(t, store)
	if len(trials) != 6 {
		t.Fatalf("%d trials, want 6", len(trials))
	}
	for _, tr := range trials {
		if tr.Status != results.StatusOK {
			t.Errorf("trial %s: %s (%s)", tr.ID, tr.Status, tr.Error)
			continue
		}
		if tr.ServerProcess != "caddy" {
			t.Errorf("trial %s: server process %q, want caddy", tr.ID, tr.ServerProcess)
		}
		var ok bool
		switch {
		case tr.Protocol == "h3":
			ok = strings.HasPrefix(tr.Handshakes, "unknown:") && !strings.Contains(tr.Handshakes, ",")
		case tr.Visit == "repeat": // Chromium resumes as many as it kept tickets for (h1: 3 of 6 here)
			ok = strings.HasPrefix(tr.Handshakes, "resumed:")
		default: // a first visit; h1's later connections may resume the first's session
			ok = strings.Contains(tr.Handshakes, "full:")
		}
		if !ok {
			t.Errorf("trial %s (%s, %s visit): handshakes %q", tr.ID, tr.Protocol, tr.Visit, tr.Handshakes)
		}
	}
}

// TestCaddyReplaysSharedRecordings: Chromium and Firefox load two real
// recordings made by others that need the Go origin's matching, Mahimahi
// recordings of www.wayfair.com (images asked at other sizes than
// recorded) and www.bbc.co.uk (images at other sizes, queries that differ
// from the recorded ones), from Caddy over h2 and h3: every load verified,
// no broken image the recording holds, no request unmatched that the
// recording holds a sibling of, and the requests Caddy's routes cannot take
// exactly answered as the Go origin answers them (fuzzy, variant).
func TestCaddyReplaysSharedRecordings(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "make deps")
	testenv.RequireFile(t, firefox.DefaultPath, "make deps")
	testenv.RequireFile(t, caddy.DefaultPath, "make caddy (apt-get install caddy)")
	wayfair := importShared(t, "www.wayfair.com.mahimahi")
	bbc := importShared(t, "www.bbc.co.uk.mahimahi")
	_, store, _ := runSpec(t, fmt.Sprintf(`repetitions: 1
retries: 2
netcheck: false
factors:
  networks: [{name: n, rtt: 40ms, down: 20mbit, up: 5mbit}]
  pages: ["archive:%s", "archive:%s"]
  servers: [caddy]
  quic: caddy
  protocols: [h2, h3]
  clients: [chromium, firefox]
`, wayfair, bbc))
	trials := trialsOf(t, store)
	if len(trials) != 8 {
		t.Fatalf("%d trials, want 8", len(trials))
	}
	matched := 0
	for _, tr := range trials {
		name := fmt.Sprintf("%s %s %s", filepath.Base(tr.Page), tr.Client, tr.Protocol)
		if tr.Status != results.StatusOK || tr.ServerProcess != "caddy" {
			t.Errorf("%s: %s from %q (%s)", name, tr.Status, tr.ServerProcess, tr.Error)
			continue
		}
		if slices.Contains(tr.BrokenImageCauses, results.BrokenHeld) || tr.ReplayExact == 0 || tr.SiblingUnmatched != 0 {
			t.Errorf("%s: broken images %q, %d exact, %d unmatched with a recorded sibling", name, tr.BrokenImageCauses, tr.ReplayExact, tr.SiblingUnmatched)
		}
		matched += int(tr.ReplayFuzzy + tr.ReplayVariant)
		t.Logf("%s: %d exact, %d fuzzy, %d variants, %d unmatched", name, tr.ReplayExact, tr.ReplayFuzzy, tr.ReplayVariant, tr.UnmatchedRequests)
	}
	if matched == 0 {
		t.Error("no request was answered by the nearest query or a variant: the pages need both")
	}
}
