package clienttest

import (
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/proc"
	"github.com/quicbench/quicbench/internal/site/gen"
	"github.com/quicbench/quicbench/internal/stats"
	"github.com/quicbench/quicbench/internal/testbed"
)

// DemoTestbed serves the demo's page (32 objects of 10 KB) behind the
// demo's link (100 ms RTT, 10/5 Mbit/s, 200 ms of queue) without its loss,
// so that every load moves the same packets, and returns the request of
// its page over h2; the benchmark's cleanup stops it.
func DemoTestbed(b *testing.B) (*testbed.Testbed, client.Request) {
	b.Helper()
	s, err := gen.Synthetic(factor.Page{Kind: factor.PageSynthetic, Objects: 32, ObjectBytes: 10_000}, []string{"www.quicbench.test"}, 1)
	if err != nil {
		b.Fatal(err)
	}
	demo := emulator.Config{
		Up:   link.Config{Delay: 50 * time.Millisecond, RateBitsPerSecond: 5_000_000, QueueBytes: 125_000},
		Down: link.Config{Delay: 50 * time.Millisecond, RateBitsPerSecond: 10_000_000, QueueBytes: 250_000},
	}
	tb := startTestbed(b, s, demo)
	return tb, Request(tb, s, factor.H2)
}

// CPUByKind is the CPU time, in ms, of the live processes of the trees
// rooted at roots, summed by the kind kindOf gives each command line;
// "total" is their sum and "<kind>s" counts a kind's processes. Each
// process's time is its own since its start.
func CPUByKind(roots []int, kindOf func(cmdline []string) string) map[string]float64 {
	out := map[string]float64{}
	for _, p := range proc.Trees(proc.List(), roots) {
		ms := float64(p.CPUTicks) * 1000 / proc.TicksPerSecond
		kind := kindOf(proc.Cmdline(p.PID))
		out[kind] += ms
		out[kind+"s"]++
		out["total"] += ms
	}
	return out
}

// CPUModes runs the benchmark's rounds: per round one load in each mode
// (load(i) returns its CPUByKind, with "plt" added), the modes' order
// rotating per round, and reports per mode and kind the median over the
// rounds, as "<mode>-<kind>-ms".
func CPUModes(b *testing.B, modes []string, kinds []string, load func(i int) (map[string]float64, error)) {
	got := make([][]map[string]float64, len(modes))
	round := 0
	for b.Loop() {
		for k := range modes {
			i := (k + round) % len(modes)
			byKind, err := load(i)
			if err != nil {
				b.Fatalf("%s: %v", modes[i], err)
			}
			got[i] = append(got[i], byKind)
		}
		round++
	}
	for i, mode := range modes {
		for _, kind := range append([]string{"total", "plt"}, kinds...) {
			var v []float64
			for _, r := range got[i] {
				v = append(v, r[kind])
			}
			b.ReportMetric(stats.Quantile(v, 0.5), mode+"-"+kind+"-ms")
		}
	}
	b.ReportMetric(float64(round), "rounds")
}
