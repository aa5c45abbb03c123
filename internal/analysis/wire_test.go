package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/results"
)

// TestAShortRoundTripsReadingsAreNotJudged: Masri et al.'s paper-scale run
// stored, for its 5 ms network, a TCP first flight of 28 packets spread
// over 7.4 ms ("paced") and a share of 1.18 kept after the calibration's
// loss, and warned that the Go server's CUBIC with an initial window of
// 10, unpaced, was none of these. On a 5 ms round trip the wire tells
// neither pacing nor the answer to a loss, and a flight longer than its
// round trip was no window: nothing is judged. The same readings on a
// 100 ms round trip (or one not known) are judged as before.
func TestAShortRoundTripsReadingsAreNotJudged(t *testing.T) {
	f := results.F
	tb := results.Testbed{Network: "rtt5ms-loss0", Stack: "tcp", Congestion: "cubic",
		MeasuredTCPFlight: f(28), MeasuredTCPSpreadMs: f(7.4), MeasuredTCPPacing: "paced", MeasuredTCPConnections: 1,
		MeasuredTCPBackoff: f(1.18), MeasuredTCPBackoffs: 2,
		QUICServer: "quic-go", QUICCC: "newreno", QUICInitialWindowBytes: 40960, QUICPacing: true,
		MeasuredQUICFlightBytes: f(10793), MeasuredQUICSpreadMs: f(6.2), MeasuredQUICPacing: "burst"}
	if w := WireWarnings(tb, 5*time.Millisecond); len(w) != 0 {
		t.Errorf("5 ms: warnings %q, want none", w)
	}
	for _, rtt := range []time.Duration{100 * time.Millisecond, 0} {
		w := strings.Join(WireWarnings(tb, rtt), "\n")
		for _, want := range []string{"TCP pacing is off as applied, but its first flights were paced",
			"TCP's first flights were 28 packets on the wire, against an initial window of 10",
			"kept 1.18 of its sending on the wire (does not back off)",
			"QUIC pacing is on as applied, but its first flights left in one burst",
			"QUIC's first flights were 10793 B on the wire"} {
			if !strings.Contains(w, want) {
				t.Errorf("%v: warnings %q lack %q", rtt, w, want)
			}
		}
	}
	// an unpaced window's first flight left within its round trip: on 5 ms
	// its size is still judged, a paced one's not (quic-go's read 10
	// packets at 5 ms in Masri et al.'s run)
	tb.MeasuredTCPSpreadMs, tb.MeasuredQUICSpreadMs = f(0.9), f(0.7)
	if w := strings.Join(WireWarnings(tb, 5*time.Millisecond), "\n"); !strings.Contains(w, "TCP's first flights were 28 packets") || strings.Contains(w, "QUIC") || strings.Contains(w, "pacing") || strings.Contains(w, "back off") {
		t.Errorf("5 ms, flights within the round trip: warnings %q, want TCP's size only", w)
	}
	tb.QUICPacing = false
	if w := strings.Join(WireWarnings(tb, 5*time.Millisecond), "\n"); !strings.Contains(w, "QUIC's first flights were 10793 B") {
		t.Errorf("5 ms, an unpaced QUIC stack: warnings %q, want its flight's size judged", w)
	}
}
