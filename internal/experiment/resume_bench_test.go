package experiment

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/spec"
)

// BenchmarkResumeStart150k measures what `quicbench run --resume` does
// before its first trial (parse the spec, build the plan, open the
// database, read the recorded trials, list the rest) on a database of
// 150,000 trials with 10 resources each, Nepomuceno et al. 2018's scale. Run it with
// scripts/bench-store.sh; it takes a few minutes to fill the database.
func BenchmarkResumeStart150k(b *testing.B) {
	text := spec150k()
	s, err := spec.Parse([]byte(text))
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	p := plan.Build(s)
	if len(p.Trials) != 150_000 {
		b.Fatalf("%d trials", len(p.Trials))
	}
	store, err := openStore(RunConfig{Spec: s, Dir: dir}, p)
	if err != nil {
		b.Fatal(err)
	}
	fill := time.Now()
	// The last 1000 trials are left for the resumed run.
	fillTrials(b, store, s, p.Trials[:len(p.Trials)-1000])
	store.Close()
	b.Logf("filled 149,000 trials with 10 resources and a connection each in %v", time.Since(fill).Round(time.Second))
	if size, err := fileSize(filepath.Join(dir, results.FileName)); err == nil {
		b.Logf("database: %.0f MB", float64(size)/1e6)
	}

	b.ResetTimer()
	for b.Loop() {
		reparsed, err := spec.Parse([]byte(text))
		if err != nil {
			b.Fatal(err)
		}
		r, err := newRunner(RunConfig{Spec: reparsed, Dir: dir, Resume: true})
		if err != nil {
			b.Fatal(err)
		}
		r.store.Close()
		if r.res.Done != 149_000 || len(r.todo) != 1000 {
			b.Fatalf("done %d, todo %d", r.res.Done, len(r.todo))
		}
	}
}

// BenchmarkMerge150k measures quicbench merge of 150,000 trials (10
// resources and a connection each, Nepomuceno et al. 2018's scale) from 20 shards.
// Run it with scripts/bench-store.sh; filling the shards takes minutes.
func BenchmarkMerge150k(b *testing.B) {
	s, err := spec.Parse([]byte(spec150k()))
	if err != nil {
		b.Fatal(err)
	}
	p := plan.Build(s)
	root := b.TempDir()
	var dirs []string
	fill := time.Now()
	for i := 1; i <= 20; i++ {
		id := plan.ShardID{I: i, N: 20}
		sh := p.Shard(s, id)
		dir := filepath.Join(root, fmt.Sprintf("shard%02d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		store, err := openStore(RunConfig{Spec: s, Dir: dir, Shard: id}, sh)
		if err != nil {
			b.Fatal(err)
		}
		fillTrials(b, store, s, sh.Trials)
		store.Close()
		dirs = append(dirs, dir)
	}
	b.Logf("filled 20 shards of 150,000 trials in all in %v", time.Since(fill).Round(time.Second))
	b.ResetTimer()
	for k := 0; b.Loop(); k++ {
		res, err := Merge(context.Background(), filepath.Join(root, fmt.Sprintf("merged%d", k)), dirs)
		if err != nil || res.Trials != 150_000 {
			b.Fatalf("merged %d trials: %v", res.Trials, err)
		}
	}
}

// spec150k is a spec of 150,000 trials: 12 networks × 25 pages × 2
// protocols × 2 cache levels = 1200 cells, × 125 repetitions.
func spec150k() string {
	var pages []string
	for i := 1; i <= 25; i++ {
		pages = append(pages, fmt.Sprintf("synthetic:%dx10KB", i))
	}
	var nets []string
	for _, rtt := range []int{20, 100, 200} {
		for _, loss := range []string{"0", "0.5", "1", "2"} {
			nets = append(nets, fmt.Sprintf("{rtt: %dms, loss: %s}", rtt, loss))
		}
	}
	text := fmt.Sprintf("repetitions: 125\nfactors:\n  networks: [%s]\n  pages: [%s]\n  protocols: [h1, h3]\n  cache: [off, on]\n",
		strings.Join(nets, ", "), strings.Join(pages, ", "))
	return text
}

// fillTrials records trials as verified loads with 10 resources and a
// connection each.
func fillTrials(b *testing.B, store *results.Store, s *spec.Spec, trials []plan.Trial) {
	resources := make([]results.Resource, 10)
	for i := range resources {
		resources[i] = results.Resource{URL: fmt.Sprintf("https://www.quicbench.test/obj/%d.png", i), Protocol: "h3", StartMs: 10, ResponseEndMs: 20, TransferBytes: 10_100, Status: 200}
	}
	conns := []results.Connection{{Conn: 1, Transport: "quic", ALPN: "h3", Handshake: "full", Requests: 11, OpenedAt: time.Now(), BytesSent: 110_000}}
	for _, t := range trials {
		rec, err := newRecord(s, t, nil)
		if err != nil {
			b.Fatal(err)
		}
		rec.Status, rec.Attempts, rec.ServerRequests, rec.Connections, rec.Handshakes = results.StatusOK, 1, 11, 1, "full:1"
		rec.Metrics = results.Metrics{PLT: results.F(900), OnLoad: results.F(899), DCL: results.F(300), TTFB: results.F(200), Wall: results.F(1500),
			Overhead: results.F(600), BrowserStart: results.F(450)}
		rec.StartedAt, rec.FinishedAt = time.Now(), time.Now()
		if err := store.AddTrial(rec, resources, conns); err != nil {
			b.Fatal(err)
		}
	}
}

func fileSize(path string) (int64, error) {
	info, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return info.Size(), nil
}
