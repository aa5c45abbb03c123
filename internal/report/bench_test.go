package report

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
)

// BenchmarkReport150k builds the full report (analysis, terminal summary,
// figures, HTML, CSV) of a generated database of 150,000 trials: 12
// networks × 25 pages × h2/h3 × 2 cache levels × 125 repetitions, each with
// 10 resources. It logs the time and the process's peak memory (VmHWM).
// Run it with scripts/bench-report.sh.
func BenchmarkReport150k(b *testing.B) {
	dir := b.TempDir()
	store, err := results.Create(filepath.Join(dir, results.FileName), map[string]string{"spec_name": "bench-150k"})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	resources := make([]results.Resource, 10)
	for i := range resources {
		resources[i] = results.Resource{URL: fmt.Sprintf("https://www.quicbench.test/obj/%d.png", i), Protocol: "h3", StartMs: float64(10 * i), ResponseEndMs: float64(10*i + 50), TransferBytes: 10_100, Status: 200}
	}
	seq := 0
	fill := time.Now()
	for n := range 12 {
		for pg := 1; pg <= 25; pg++ {
			for _, proto := range []factor.Protocol{"h2", "h3"} {
				for _, cache := range []bool{false, true} {
					for rep := 1; rep <= 125; rep++ {
						seq++
						v := 200 + 40*float64(n) + 10*float64(pg)
						if proto == "h3" {
							v *= 0.9
						}
						v *= 1 + 0.1*rng.NormFloat64()
						t := results.Trial{ID: "t" + strconv.Itoa(seq), Seq: int64(seq), Rep: int64(rep),
							Levels: results.Levels{Network: fmt.Sprintf("net%02d", n), Page: fmt.Sprintf("synthetic:%dx10KB", pg),
								Origins: 1, Stack: "tcp", Server: "go", Protocol: proto, Visit: "repeat", Cache: cache, Client: "chromium", Browser: "fresh"},
							Outcome: results.Outcome{Status: results.StatusOK, Attempts: 1},
							Metrics: results.Metrics{PLT: results.F(v), OnLoad: results.F(v), DCL: results.F(v / 3), TTFB: results.F(v / 5)}, StartedAt: time.Now(), FinishedAt: time.Now()}
						if err := store.AddTrial(t, resources, nil); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
		}
	}
	b.Logf("filled %d trials in %v", seq, time.Since(fill).Round(time.Second))
	runtime.GC()
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		r, err := Build(context.Background(), store, "", analysis.Options{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		WriteText(io.Discard, r.Page, r.Analysis)
		if _, err := WriteFiles(filepath.Join(dir, "report"), r.Page, r.Analysis, r.Figures); err != nil {
			b.Fatal(err)
		}
		b.Logf("report of %d trials: %d comparisons, %d figures in %v; peak memory of the process %s; %s",
			r.Analysis.Trials, len(r.Analysis.Comparisons), len(r.Figures), time.Since(start).Round(10*time.Millisecond), peakMemory(), htmlSize(filepath.Join(dir, "report")))
	}
	store.Close()
}

// BenchmarkReportHTML1000Settings writes the report of a run of 1,000
// settings (layoutRun's 40 long-named networks × 25 pages, h1, h2 and h3,
// 5 loads each: 15,000 trials, analysed in memory) and logs the size of its index.html
// (issue 31's target: ≤ 5 MB). Run it with scripts/bench-report.sh.
func BenchmarkReportHTML1000Settings(b *testing.B) {
	trials := layoutRun(40, 25)
	dir := b.TempDir()
	for b.Loop() {
		start := time.Now()
		a, err := analysis.Analyze(trials, analysis.Options{})
		if err != nil {
			b.Fatal(err)
		}
		figs, err := Figures(context.Background(), a, nil)
		if err != nil {
			b.Fatal(err)
		}
		listed, count := analysis.Loads(trials, "plt")
		if _, err := WriteFiles(dir, Page{Name: "bench-1000", Loads: listed, LoadCount: count}, a, figs); err != nil {
			b.Fatal(err)
		}
		b.Logf("report of %d settings (%d trials): %d figures in %v; %s", len(a.Comparisons), len(trials), len(figs), time.Since(start).Round(10*time.Millisecond), htmlSize(dir))
	}
}

// htmlSize says how large dir/index.html is.
func htmlSize(dir string) string {
	fi, err := os.Stat(filepath.Join(dir, "index.html"))
	if err != nil {
		return "no index.html"
	}
	return fmt.Sprintf("index.html %.2f MB", float64(fi.Size())/1e6)
}

// peakMemory is the process's peak resident memory (VmHWM).
func peakMemory() string {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
