package netcheck

import (
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/link"
)

// TestTheLoadedRTTIsJudgedOnlyAgainstABottleneck: behind a rate limit and
// its queue the loaded RTT has a bound, and a p99 above it fails; a link
// without a rate has no bottleneck queue, so what a download adds (this
// machine's own queueing: Masri et al.'s 5 ms network read a p99 of 21.5
// ms) is shown, not judged. It passed against a bound of 12,000 s before.
func TestTheLoadedRTTIsJudgedOnlyAgainstABottleneck(t *testing.T) {
	rtts := []float64{5.1, 8.0, 11.2, 14.0, 21.5}
	unlimited := &checker{cfg: Config{RTT: 5 * time.Millisecond, Link: emulator.Config{Up: link.Config{Delay: 2500 * time.Microsecond}, Down: link.Config{Delay: 2500 * time.Microsecond}}}}
	if l := unlimited.loadedRTTLine(rtts); l.Result != Info || !strings.Contains(l.Configured, "no rate limit") || strings.Contains(l.Rule, "at most") {
		t.Errorf("a link without a rate: %+v, want information, no bound", l)
	}
	limited := &checker{cfg: Config{RTT: 5 * time.Millisecond, Link: emulator.Config{
		Up:   link.Config{Delay: 2500 * time.Microsecond, RateBitsPerSecond: 10e6},
		Down: link.Config{Delay: 2500 * time.Microsecond, RateBitsPerSecond: 10e6, QueueBytes: 12500}}}} // 10 ms of queue
	l := limited.loadedRTTLine(rtts)
	if l.Result != Fail || l.Values["bound_ms"] < 17 || l.Values["bound_ms"] > 19 {
		t.Errorf("10 Mbit/s with a 10 ms queue: %+v, want a bound near 18 ms that a p99 of 21.5 ms fails", l)
	}
	if l := limited.loadedRTTLine(rtts[:4]); l.Result != Pass {
		t.Errorf("10 Mbit/s with a 10 ms queue, p99 14 ms: %+v, want pass", l)
	}
}
