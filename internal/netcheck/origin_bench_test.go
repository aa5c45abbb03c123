package netcheck

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/origin"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/site/gen"
	"github.com/quicbench/quicbench/internal/stats"
	"github.com/quicbench/quicbench/internal/testbed"
	"github.com/quicbench/quicbench/internal/testenv"
)

// BenchmarkIdleRTTDuringH3Transfer is issue 30's before and after of the
// Go origin in a process of its own: netcheck's idle-RTT probes (200, one
// every 10 ms) across a link of 20 ms and one of 2 ms (CPU-bound
// transfers), without a rate limit, while a quic-go client fetches a 1 MB
// file over h3 again and again, from the Go origin in quicbench's process
// ("in") and in its own ("own"), alternating, one round of each per
// iteration. It reports per place the medians over the rounds of the
// probes' median and p99 minus the configured RTT, the worst round's p99,
// the transfers' goodput, and in how many rounds the own process's p99
// was the lower. scripts/bench-origin-process.sh runs it.
func BenchmarkIdleRTTDuringH3Transfer(b *testing.B) {
	testenv.RequireRoot(b)
	for _, rtt := range []time.Duration{20 * time.Millisecond, 2 * time.Millisecond} {
		b.Run(fmt.Sprintf("rtt=%v", rtt), func(b *testing.B) { benchOriginPlaces(b, rtt) })
	}
}

// benchOriginPlaces is BenchmarkIdleRTTDuringH3Transfer at one RTT.
func benchOriginPlaces(b *testing.B, rtt time.Duration) {
	places := []struct {
		name  string
		kinds []server.Kind // nil: testbed.Kinds(), the Go origin in its own process
	}{{"in", []server.Kind{origin.Kind()}}, {"own", nil}}
	got := map[string][][3]float64{}
	round := 0
	for b.Loop() {
		for i := range places {
			p := places[(i+round)%2] // each goes first in every other round
			median, p99, goodput, err := probeDuringTransfer(b.Context(), rtt, p.kinds)
			if err != nil {
				b.Fatal(err)
			}
			got[p.name] = append(got[p.name], [3]float64{median, p99, goodput})
		}
		round++
	}
	for _, p := range places {
		rounds := got[p.name]
		for j, unit := range []string{"median-error-ms", "p99-error-ms", "goodput-Mbit/s"} {
			values := make([]float64, len(rounds))
			for k, r := range rounds {
				values[k] = r[j]
			}
			b.ReportMetric(stats.Quantile(values, 0.5), p.name+"-"+unit)
			if j == 1 {
				b.ReportMetric(slices.Max(values), p.name+"-worst-p99-error-ms")
			}
		}
	}
	lower := 0 // rounds in which the own process's p99 was the lower
	for k := range got["own"] {
		if got["own"][k][1] < got["in"][k][1] {
			lower++
		}
	}
	b.ReportMetric(float64(lower), "own-lower-p99-rounds")
	b.ReportMetric(float64(len(got["own"])), "rounds")
}

// probeDuringTransfer builds a testbed with kinds serving a 1 MB file,
// fetches it over h3 without pause while netcheck's idle-RTT probes run,
// and returns the probes' median and p99 minus the configured RTT (ms)
// and the transfers' goodput (Mbit/s).
func probeDuringTransfer(ctx context.Context, rtt time.Duration, kinds []server.Kind) (median, p99, goodput float64, err error) {
	oneWay := link.Config{Delay: rtt / 2}
	cfg := emulator.Config{Up: oneWay, Down: oneWay}
	s, err := gen.Files("www.quicbench.test", []int64{1 << 20}, 1)
	if err != nil {
		return 0, 0, 0, err
	}
	dir, err := os.MkdirTemp("", "quicbench-bench-")
	if err != nil {
		return 0, 0, 0, err
	}
	defer os.RemoveAll(dir)
	tb, err := testbed.Start(testbed.Config{Stem: netns.NewRunName("bo"), Link: cfg, Site: s, RunDir: dir, Kinds: kinds})
	if err != nil {
		return 0, 0, 0, err
	}
	defer tb.Close()
	bytes, elapsed, stop, err := transferAgainAndAgain(ctx, tb, "https://www.quicbench.test"+gen.FilePath(1<<20))
	if err != nil {
		return 0, 0, 0, err
	}
	c := &checker{n: tb.Network, cfg: Config{Link: cfg, RTT: rtt}.withDefaults(), server: tb.Topo.ServerAddrs[0]}
	if err := c.startEcho(); err != nil {
		stop()
		return 0, 0, 0, err
	}
	defer c.echo.Close()
	lines, err := c.idleRTT(ctx)
	stop()
	if err != nil {
		return 0, 0, 0, err
	}
	v := lines[0].Values
	if v["answered"] < 190 {
		return 0, 0, 0, fmt.Errorf("only %.0f of 200 probes answered during the transfers", v["answered"])
	}
	return v["median_ms"] - v["expected_ms"], v["p99_ms"] - v["expected_ms"], float64(*bytes) * 8 / elapsed().Seconds() / 1e6, nil
}

// transferAgainAndAgain fetches url over h3 on one connection until stop
// is called; it returns the bytes fetched so far, the time since the
// first fetch began, and stop, which waits for the fetch under way.
func transferAgainAndAgain(ctx context.Context, tb *testbed.Testbed, url string) (*int64, func() time.Duration, func(), error) {
	client, err := tb.NewGoClient("h3")
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	var fetched int64
	var wg sync.WaitGroup
	start := time.Now()
	var end time.Time
	wg.Go(func() {
		defer client.Close()
		for ctx.Err() == nil {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			resp, err := client.Do(req)
			if err != nil {
				time.Sleep(10 * time.Millisecond) // no spin should the server be gone
				continue
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			fetched += n
		}
		end = time.Now()
	})
	stop := func() { cancel(); wg.Wait() }
	return &fetched, func() time.Duration { return end.Sub(start) }, stop, nil
}
