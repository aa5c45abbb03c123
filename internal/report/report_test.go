package report

import (
	"bytes"
	"flag"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/stats"
	"github.com/quicbench/quicbench/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// fakeTrials makes a deterministic run: 2 networks × 2 pages × 2 stacks ×
// h2/h3 × 12 repetitions. On "slow" h3 is about 30% faster, on "fast" the
// same as h2; tcp+ is 10% faster than tcp for h2. One h3 trial failed.
func fakeTrials() []results.Trial {
	rng := rand.New(rand.NewPCG(7, 7))
	var out []results.Trial
	seq := 0
	for _, network := range []string{"fast", "slow"} {
		for _, page := range []string{"synthetic:8x10KB", "synthetic:64x1KB"} {
			for _, stack := range []string{"tcp", "tcp+"} {
				for _, proto := range []string{"h2", "h3"} {
					for rep := 1; rep <= 12; rep++ {
						seq++
						base := 500.0
						if network == "slow" {
							base = 1500
						}
						if page == "synthetic:64x1KB" {
							base *= 1.4
						}
						if proto == "h3" && network == "slow" {
							base *= 0.7
						}
						if proto == "h2" && stack == "tcp+" {
							base *= 0.9
						}
						v := base * (1 + 0.05*rng.NormFloat64())
						t := results.Trial{ID: "t", Seq: seq, Rep: rep, Network: network, Page: page, Origins: 1, Stack: stack, Server: "go",
							Protocol: proto, Visit: "first", Client: "chromium", Status: results.StatusOK, Attempts: 1,
							PLT: results.F(v), OnLoad: results.F(v - 1), DCL: results.F(v / 3), TTFB: results.F(v / 5)}
						if network == "fast" && page == "synthetic:8x10KB" && stack == "tcp" && proto == "h3" && rep == 3 {
							t.Status, t.PLT, t.OnLoad, t.DCL, t.TTFB = results.StatusFailed, results.Float{}, results.Float{}, results.Float{}, results.Float{}
						}
						out = append(out, t)
					}
				}
			}
		}
	}
	return out
}

func TestAnalysis(t *testing.T) {
	a, err := Analyze(fakeTrials(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Comparisons) != 8 || a.Failed != 1 || a.Trials != 192 {
		t.Fatalf("%d comparisons, %d failed, %d trials", len(a.Comparisons), a.Failed, a.Trials)
	}
	for _, c := range a.Comparisons {
		want := stats.NoDifference
		if c.Setting.Network == "slow" {
			want = stats.Faster
		}
		if c.Setting.Network == "fast" && c.Setting.Stack == "tcp+" {
			want = stats.Slower // h2 with tcp+ is 10% faster than h3
		}
		if c.Verdict != want {
			t.Errorf("%+v: verdict %q, want %q (p %v)", c.Setting, c.Verdict, want, c.MannWhitney.P)
		}
		if c.Ratio != stats.Median(c.Compare.Values)/stats.Median(c.Baseline.Values) || math.IsNaN(c.Gain) {
			t.Errorf("%+v: ratio %v", c.Setting, c.Ratio)
		}
		if !(c.Compare.MedianCILo <= c.Compare.Summary.Median && c.Compare.Summary.Median <= c.Compare.MedianCIHi) {
			t.Errorf("%+v: CI [%v, %v] misses the median %v", c.Setting, c.Compare.MedianCILo, c.Compare.MedianCIHi, c.Compare.Summary.Median)
		}
	}
	// h2's stacks differ by 10 %: significant; h3's do not differ.
	if len(a.ANOVAs) != 8 {
		t.Fatalf("%d ANOVAs, want one per network, page and protocol", len(a.ANOVAs))
	}
	for _, an := range a.ANOVAs {
		if differ := an.Test.P < stats.Alpha; differ != (an.Protocol == "h2") {
			t.Errorf("ANOVA %s %s %s: p %v", an.Setting.Network, an.Setting.Page, an.Protocol, an.Test.P)
		}
	}
	if _, err := Analyze(fakeTrials(), Options{Baseline: "h1"}); err == nil {
		t.Error("a baseline the run does not have was accepted")
	}
	if _, err := Analyze(fakeTrials(), Options{Metric: "speedindex"}); err == nil {
		t.Error("an unknown metric was accepted")
	}
}

func TestTextGolden(t *testing.T) {
	a, err := Analyze(fakeTrials(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	WriteText(&got, "fake", a)
	testenv.Golden(t, filepath.Join("testdata", "summary.golden"), got.Bytes(), *update)
}
