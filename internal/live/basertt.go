package live

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"time"
)

// DialFunc opens a connection (a namespace's DialContext).
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// BaseRTT is the round trip of the path beyond the emulator, from the
// servers namespace to a live origin, as TCP handshakes measured it: what
// a load's RTT adds to the emulated one.
type BaseRTT struct {
	Target           netip.AddrPort
	Median, Min, Max time.Duration
	// Handshakes is how many of the tries completed.
	Handshakes int
}

// String is the base RTT as the answer gives it: "23.1 ms (TCP
// handshakes to 203.0.113.10:443, median of 5, 22.8–24.0)".
func (b BaseRTT) String() string {
	return fmt.Sprintf("%.1f ms (TCP handshakes to %s, median of %d, %.1f–%.1f)", ms(b.Median), b.Target, b.Handshakes, ms(b.Min), ms(b.Max))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// MeasureBaseRTT times tries TCP handshakes to target with dial, one
// after another, each within timeout; it fails when none completes.
func MeasureBaseRTT(ctx context.Context, dial DialFunc, target netip.AddrPort, tries int, timeout time.Duration) (BaseRTT, error) {
	var times []time.Duration
	var lastErr error
	for range tries {
		attempt, cancel := context.WithTimeout(ctx, timeout)
		start := time.Now()
		c, err := dial(attempt, "tcp4", target.String())
		took := time.Since(start)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return BaseRTT{}, ctx.Err()
			}
			lastErr = err
			continue
		}
		c.Close()
		times = append(times, took)
	}
	if len(times) == 0 {
		return BaseRTT{}, fmt.Errorf("base RTT to %s: no TCP handshake of %d completed (%v): is the site reachable from this machine?", target, tries, lastErr)
	}
	slices.Sort(times)
	return BaseRTT{Target: target, Median: times[len(times)/2], Min: times[0], Max: times[len(times)-1], Handshakes: len(times)}, nil
}

// PathTolerance is how far a base RTT measured after a run may be from
// the one before, as a fraction of it, before the answer says the path
// changed during the run.
const PathTolerance = 0.25

// Changed says whether a base RTT measured again after a run differs from
// b by more than tolerance of b (and more than a millisecond): the path
// changed during the run.
func (b BaseRTT) Changed(after BaseRTT, tolerance float64) bool {
	return MedianChanged(b.Median, after.Median, tolerance)
}

// MedianChanged says whether after differs from before by more than
// tolerance of before and more than a millisecond.
func MedianChanged(before, after time.Duration, tolerance float64) bool {
	diff := after - before
	if diff < 0 {
		diff = -diff
	}
	return diff > time.Millisecond && float64(diff) > tolerance*float64(before)
}
