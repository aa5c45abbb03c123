package emulator

import (
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/netns"
)

// echoRTTs measures n UDP round trips from the client namespace to an echo
// server on the first server address, one every interval, with the Go
// monotonic clock (nanosecond resolution, unlike ping's 1 ms above 100 ms).
func echoRTTs(t *testing.T, topo *netns.Topology, n int, interval time.Duration) []float64 {
	t.Helper()
	server, err := topo.Servers.ListenPacket("udp4", netip.AddrPortFrom(topo.ServerAddrs[0], 7).String())
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	go func() {
		buf := make([]byte, 1500)
		for {
			k, addr, err := server.ReadFrom(buf)
			if err != nil {
				return
			}
			server.WriteTo(buf[:k], addr)
		}
	}()
	conn, err := topo.Client.DialContext(t.Context(), "udp4", server.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var rtts []float64
	buf := make([]byte, 64)
	for range n {
		start := time.Now()
		if _, err := conn.Write(buf); err != nil {
			t.Fatal(err)
		}
		conn.SetReadDeadline(start.Add(5 * time.Second))
		if _, err := conn.Read(buf); err != nil {
			t.Fatalf("echo: %v", err)
		}
		rtts = append(rtts, float64(time.Since(start))/float64(time.Millisecond))
		time.Sleep(interval)
	}
	return rtts
}

// rttSlack is how far above the configured RTT want (ms) a median may lie in
// a test, in ms: 1 ms plus 2 % of want. Idle, this machine's error is about
// +0.3 ms at every RTT (BENCHMARKS.md, which holds the accuracy target); a CI
// host under load measured +2.2 ms at 200 ms. The tests check that the
// emulator never delays less than configured, beyond what its design
// allows (rttEarly), and not grossly more.
func rttSlack(want float64) float64 { return 1 + 0.02*want }

// rttEarly is how far below the configured RTT a median may lie, in ms: a
// delivery may come up to the wake-up lateness estimate early (at most
// maxLateness), so that deliveries straddle their times, once each way.
// A make test run measured a median 10 µs under 20 ms.
var rttEarly = 2 * float64(maxLateness) / float64(time.Millisecond)

// TestUDPEchoRTT measures the RTT error with nanosecond resolution; with -v
// it prints median and p99 (the RTT benchmark of BENCHMARKS.md).
func TestUDPEchoRTT(t *testing.T) {
	for _, rtt := range []time.Duration{0, 20 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond} {
		t.Run(rtt.String(), func(t *testing.T) {
			topo := startReal(t, Config{Up: link.Config{Delay: rtt / 2}, Down: link.Config{Delay: rtt - rtt/2}})
			rtts := echoRTTs(t, topo, pingCount(t), 10*time.Millisecond)
			want := float64(rtt) / float64(time.Millisecond)
			sorted := slices.Clone(rtts)
			slices.Sort(sorted)
			m, p99 := median(rtts), sorted[min(len(sorted)-1, int(float64(len(sorted))*0.99))]
			t.Logf("configured RTT %.0f ms: UDP echo median %.3f ms (error %+.3f), p99 %.3f ms (error %+.3f), max %.3f, %d probes",
				want, m, m-want, p99, p99-want, sorted[len(sorted)-1], len(rtts))
			if lo, hi := want-rttEarly, want+rttSlack(want); m < lo || m > hi {
				t.Errorf("median RTT %.3f ms, want %.1f to %.1f ms", m, lo, hi)
			}
		})
	}
}
