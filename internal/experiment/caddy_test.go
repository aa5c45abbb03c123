package experiment

import (
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/caddy"
	"github.com/quicbench/quicbench/internal/chromium"
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
