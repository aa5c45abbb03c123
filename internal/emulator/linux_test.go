package emulator

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/testenv"
)

// startReal builds a real topology and runs the emulator on it.
func startReal(t *testing.T, cfg Config) *netns.Topology {
	t.Helper()
	testenv.RequireRoot(t)
	topo, err := netns.Build(netns.RunName(os.Getpid(), fmt.Sprintf("emu%d", time.Now().UnixNano()%1e6)), 1)
	if err != nil {
		t.Fatal(err)
	}
	e, err := Start(topo.ClientTUN, topo.ServersTUN, cfg, Options{})
	if err != nil {
		topo.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		e.Stop()
		if err := topo.Close(); err != nil {
			t.Error(err)
		}
		e.Wait()
	})
	return topo
}

var pingTime = regexp.MustCompile(`time=([0-9.]+) ms`)

// pingRTTs pings the first server from the client namespace and returns the
// round-trip times in milliseconds.
func pingRTTs(t *testing.T, topo *netns.Topology, count int) []float64 {
	t.Helper()
	testenv.RequireCommand(t, "ping")
	out, err := topo.Client.Command(t.Context(), "ping", "-n", "-c", strconv.Itoa(count), "-i", "0.05", "-W", "2",
		topo.ServerAddrs[0].String()).CombinedOutput()
	if err != nil {
		t.Fatalf("ping: %v\n%s", err, out)
	}
	var rtts []float64
	for _, m := range pingTime.FindAllSubmatch(out, -1) {
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		rtts = append(rtts, v)
	}
	return rtts
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// pingCount is how many pings each RTT gets: 20, or QUICBENCH_PINGS for the
// benchmark in BENCHMARKS.md.
func pingCount(t *testing.T) int {
	if v := os.Getenv("QUICBENCH_PINGS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("QUICBENCH_PINGS=%q: want a positive count", v)
		}
		return n
	}
	return 20
}

// TestPingMeasuresConfiguredRTT sends real ICMP through real namespaces and
// the emulator: the median must be at most rttSlack above the configured RTT. With
// -v it prints the median and p99 error (the RTT benchmark).
func TestPingMeasuresConfiguredRTT(t *testing.T) {
	for _, rtt := range []time.Duration{0, 20 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond} {
		t.Run(rtt.String(), func(t *testing.T) {
			topo := startReal(t, Config{Up: link.Config{Delay: rtt / 2}, Down: link.Config{Delay: rtt - rtt/2}})
			n := pingCount(t)
			rtts := pingRTTs(t, topo, n)
			if len(rtts) != n {
				t.Fatalf("got %d replies of %d on a lossless link", len(rtts), n)
			}
			want := float64(rtt) / float64(time.Millisecond)
			m := median(rtts)
			sorted := slices.Clone(rtts)
			slices.Sort(sorted)
			p99 := sorted[min(len(sorted)-1, int(float64(len(sorted))*0.99))]
			t.Logf("configured RTT %.0f ms: measured median %.3f ms (error %+.3f), p99 %.3f ms (error %+.3f), %d pings",
				want, m, m-want, p99, p99-want, len(rtts))
			if lo, hi := want-rttEarly, want+rttSlack(want); m < lo || m > hi {
				t.Errorf("median ping RTT %.3f ms, want %.1f to %.1f ms (all: %v)", m, lo, hi, rtts)
			}
		})
	}
}
