package report

import (
	"bytes"
	"context"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/factor"
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
			for _, stack := range []factor.Stack{"tcp", "tcp+"} {
				for _, proto := range []factor.Protocol{"h2", "h3"} {
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
						t := results.Trial{ID: "t", Seq: int64(seq), Rep: int64(rep),
							Levels:  results.Levels{Network: network, Page: page, Origins: 1, Stack: stack, Server: "go", Protocol: proto, Visit: "first", Client: "chromium", Browser: "fresh"},
							Outcome: results.Outcome{Status: results.StatusOK, Attempts: 1},
							Metrics: results.Metrics{PLT: results.F(v), OnLoad: results.F(v - 1), DCL: results.F(v / 3), TTFB: results.F(v / 5)}}
						if network == "fast" && page == "synthetic:8x10KB" && stack == "tcp" && proto == "h3" && rep == 3 {
							t.Status, t.Metrics = results.StatusFailed, results.Metrics{}
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
	a, err := analysis.Analyze(fakeTrials(), analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Comparisons) != 8 || a.Failed != 1 || a.Trials != 192 {
		t.Fatalf("%d comparisons, %d failed, %d trials", len(a.Comparisons), a.Failed, a.Trials)
	}
	for _, c := range a.Comparisons {
		want := stats.NoDifference
		if c.Setting.Network() == "slow" {
			want = stats.Faster
		}
		if c.Setting.Network() == "fast" && c.Setting.Stack() == "tcp+" {
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
			t.Errorf("ANOVA %s %s %s: p %v", an.Setting.Network(), an.Setting.Page(), an.Protocol, an.Test.P)
		}
	}
	if _, err := analysis.Analyze(fakeTrials(), analysis.Options{Baseline: "h1"}); err == nil {
		t.Error("a baseline the run does not have was accepted")
	}
	if _, err := analysis.Analyze(fakeTrials(), analysis.Options{Metric: "speedindex"}); err == nil {
		t.Error("an unknown metric was accepted")
	}
}

func TestTextGolden(t *testing.T) {
	a, err := analysis.Analyze(fakeTrials(), analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	WriteText(&got, Page{Name: "fake"}, a)
	testenv.Golden(t, filepath.Join("testdata", "summary.golden"), got.Bytes(), *update)
}

// TestDefaultsFollowTheRun: without --baseline the baseline is h2 when the
// run has it, else h1; the compared protocol is h3.
func TestDefaultsFollowTheRun(t *testing.T) {
	var h1h3 []results.Trial
	for _, tr := range fakeTrials() {
		if tr.Protocol == factor.H2 {
			tr.Protocol = factor.H1
		}
		h1h3 = append(h1h3, tr)
	}
	a, err := analysis.Analyze(h1h3, analysis.Options{})
	if err != nil || a.Options.Baseline != factor.H1 || a.Options.Compare != factor.H3 {
		t.Fatalf("options %+v, %v; want h3 against h1", a.Options, err)
	}
	if a, err := analysis.Analyze(fakeTrials(), analysis.Options{}); err != nil || a.Options.Baseline != factor.H2 {
		t.Errorf("a run with h2: baseline %q, %v", a.Options.Baseline, err)
	}
	if _, err := analysis.Analyze(h1h3, analysis.Options{Baseline: "h2"}); err == nil || !strings.Contains(err.Error(), "the run has no h2 trials") {
		t.Errorf("a baseline the run lacks: %v", err)
	}
}

// TestLabelsNameEveryVaryingFactor: settings that differ only in origins
// (or visit) get labels that tell them apart, and the share table counts
// pages, never origins.
func TestLabelsNameEveryVaryingFactor(t *testing.T) {
	var trials []results.Trial
	for _, tr := range fakeTrials() {
		if tr.Stack == "tcp+" { // the second stack becomes 4 origins
			tr.Stack, tr.Origins = "tcp", 4
		}
		trials = append(trials, tr)
	}
	a, err := analysis.Analyze(trials, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := analysis.VariedIn(a.Comparisons)
	labels := map[string]bool{}
	for _, c := range a.Comparisons {
		labels[v.Label(c.Setting)+" "+c.Setting.Page()] = true
	}
	if len(labels) != len(a.Comparisons) || !labels["fast 4 origins synthetic:8x10KB"] || !labels["fast 1 origin synthetic:8x10KB"] {
		t.Errorf("labels %v for %d comparisons", labels, len(a.Comparisons))
	}
	for _, s := range a.Shares {
		if s.Pages != 2 || s.Setting.Page() != "" {
			t.Errorf("share %+v counts %d pages, want the 2 pages", s.Setting, s.Pages)
		}
	}
	figs, err := Figures(context.Background(), a, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range figs {
		if f.Name == "ratio-bars" && !strings.Contains(string(f.SVG), "4 origins") {
			t.Error("the ratio bars do not name the origins")
		}
	}
	var text bytes.Buffer
	WriteText(&text, Page{Name: "x"}, a)
	if !strings.Contains(text.String(), "network  origins  pages") {
		t.Errorf("share table without its origins column:\n%s", text.String())
	}
}

// TestVisualMetricComparesVisualTrialsOnly: with --metric si, trials
// without frames are not samples (not failures either), visual and plain
// trials are separate settings for PLT, and a run without visual trials
// says what to do.
func TestVisualMetricComparesVisualTrialsOnly(t *testing.T) {
	trials := fakeTrials()
	for i := range trials {
		if i%2 == 0 {
			tr := &trials[i]
			tr.Visual = true
			if tr.PLT != nil {
				tr.SpeedIndex = results.F(*tr.PLT * 0.8)
			}
		}
	}
	si, err := analysis.Analyze(trials, analysis.Options{Metric: "si"})
	if err != nil {
		t.Fatal(err)
	}
	plt, err := analysis.Analyze(trials, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(si.Comparisons) != 8 || len(plt.Comparisons) != 16 {
		t.Fatalf("%d comparisons of Speed Index, %d of PLT; want 8 (visual trials) and 16 (visual on and off apart)", len(si.Comparisons), len(plt.Comparisons))
	}
	for _, c := range si.Comparisons {
		if !c.Setting.Visual().On() || len(c.Baseline.Values)+len(c.Compare.Values)+c.Baseline.Failed+c.Compare.Failed != 12 {
			t.Errorf("%+v: %d and %d values, %d and %d failed", c.Setting, len(c.Baseline.Values), len(c.Compare.Values), c.Baseline.Failed, c.Compare.Failed)
		}
	}
	if _, err := analysis.Analyze(fakeTrials(), analysis.Options{Metric: "si"}); err == nil || !strings.Contains(err.Error(), "visual: on") {
		t.Errorf("Speed Index of a run without visual trials: %v", err)
	}
}

// TestPowerPlanFromAPilot: the fake run's settings spread by about 5 % a
// load; finding a 5 % difference takes more repetitions than finding 20 %,
// and each number is what stats.RepetitionsFor gives for the spread.
func TestPowerPlanFromAPilot(t *testing.T) {
	small, err := analysis.PowerPlan(fakeTrials(), analysis.Options{}, 1.05, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	large, _ := analysis.PowerPlan(fakeTrials(), analysis.Options{}, 1.20, 0.8)
	if len(small) != 8 || len(large) != 8 {
		t.Fatalf("%d and %d rows, want one per comparison", len(small), len(large))
	}
	for i, r := range small {
		if r.SDLog < 0.02 || r.SDLog > 0.09 || r.Needed != stats.RepetitionsFor(r.SDLog, 1.05, stats.Alpha, 0.8) || large[i].Needed >= r.Needed {
			t.Errorf("%s: σ %.3f, %d repetitions for 5 %%, %d for 20 %%", r.Setting, r.SDLog, r.Needed, large[i].Needed)
		}
	}
	if _, err := analysis.PowerPlan(fakeTrials(), analysis.Options{}, 1, 0.8); err == nil {
		t.Error("a ratio of 1 was planned for")
	}
}

// TestPairedAnalysis: paired loads whose shared link state dominates their
// spread get a paired interval of the ratio far narrower than the
// unpaired one, and the text report shows them; unpaired loads get none.
func TestPairedAnalysis(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var trials []results.Trial
	for rep := 1; rep <= 30; rep++ {
		state := math.Exp(0.3 * rng.NormFloat64()) // the pair's link state
		for _, proto := range []factor.Protocol{"h2", "h3"} {
			v := 1000 * state * math.Exp(0.02*rng.NormFloat64())
			if proto == "h3" {
				v *= 0.95
			}
			trials = append(trials, results.Trial{ID: "t", Rep: int64(rep),
				Levels:  results.Levels{Network: "lossy", Page: "synthetic:1x1KB", Origins: 1, Stack: "tcp", Server: "go", Protocol: proto, Visit: "first"},
				Seeds:   results.Seeds{Paired: true},
				Outcome: results.Outcome{Status: results.StatusOK}, Metrics: results.Metrics{PLT: results.F(v)}})
		}
	}
	a, err := analysis.Analyze(trials, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := a.Comparisons[0]
	if c.Paired == nil || c.Paired.Pairs != 30 || !(c.Paired.Lo < 0.95 && 0.95 < c.Paired.Hi) || c.Paired.Test.P >= 0.01 {
		t.Fatalf("paired analysis %+v", c.Paired)
	}
	if paired, unpaired := c.Paired.Hi-c.Paired.Lo, c.UnpairedHi-c.UnpairedLo; paired > unpaired/4 {
		t.Errorf("paired CI width %.3f not far below the unpaired %.3f", paired, unpaired)
	}
	var out bytes.Buffer
	WriteText(&out, Page{Name: "run"}, a)
	if !strings.Contains(out.String(), "Paired loads") || !strings.Contains(out.String(), "Wilcoxon") {
		t.Errorf("text report lacks the paired table:\n%s", out.String())
	}
	for i := range trials {
		trials[i].Paired = false
	}
	if a, _ := analysis.Analyze(trials, analysis.Options{}); a.Comparisons[0].Paired != nil {
		t.Error("unpaired loads got a paired analysis")
	}
}

// TestStoppingReplay: the report replays the until rule: a setting whose
// h3 is clearly faster stops at a sequential verdict, one without a
// difference goes on to the precision or the most repetitions, and the
// verdict is the sequential one.
func TestStoppingReplay(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var trials []results.Trial
	for _, network := range []string{"diff", "same"} {
		for rep := 1; rep <= 30; rep++ {
			for _, proto := range []factor.Protocol{"h2", "h3"} {
				v := 1000 * math.Exp(0.2*rng.NormFloat64())
				if network == "diff" && proto == "h3" {
					v *= 0.6
				}
				trials = append(trials, results.Trial{ID: "t", Rep: int64(rep),
					Levels:  results.Levels{Network: network, Page: "synthetic:1x1KB", Origins: 1, Stack: "tcp", Server: "go", Protocol: proto, Visit: "first"},
					Outcome: results.Outcome{Status: results.StatusOK}, Metrics: results.Metrics{PLT: results.F(v)}})
			}
		}
	}
	seq, err := stats.NewSequential(stats.Alpha, 5, 30, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	a, err := analysis.Analyze(trials, analysis.Options{Until: &analysis.UntilRule{Seq: seq, Seed: 1, Baseline: "h2", Compare: "h3", CIRatio: 0.01}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range a.Comparisons {
		st := c.Stopping
		switch c.Setting.Network() {
		case "diff":
			if st == nil || st.Look.Reason != stats.StopVerdict || st.Rep >= 30 || c.Verdict != stats.Faster {
				t.Errorf("diff: stopping %+v, verdict %s", st, c.Verdict)
			}
		case "same":
			if st == nil || st.Look.Reason == stats.StopVerdict || c.Verdict != stats.NoDifference {
				t.Errorf("same: stopping %+v, verdict %s", st, c.Verdict)
			}
		}
	}
	var out bytes.Buffer
	WriteText(&out, Page{Name: "run"}, a)
	if !strings.Contains(out.String(), "Repetitions until the answer is known") || !strings.Contains(out.String(), "verdict: faster") {
		t.Errorf("text lacks the stopping table:\n%s", out.String())
	}
	if answer := strings.Join(Answer(a), "\n"); !strings.Contains(answer, "99 % repeated CI") || strings.Contains(answer, " p = ") {
		t.Errorf("the answer under an until rule should give the look's repeated interval and no fixed test's p:\n%s", answer)
	}
}

// TestUntilVerdictsAgreeWithTheirIntervals: under an until rule, over
// settings from clearly different to alike, stopped or not, every
// comparison's verdict is the side of 1 its printed interval lies on, and
// a setting not yet at its first look has too few loads, saying when the
// rule looks.
func TestUntilVerdictsAgreeWithTheirIntervals(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	var trials []results.Trial
	effects := []float64{0.6, 0.8, 0.88, 0.94, 1, 1.1}
	for i, effect := range effects {
		reps := 30
		if i == len(effects)-1 {
			reps = 3 // before the first look
		}
		for rep := 1; rep <= reps; rep++ {
			link := math.Exp(0.3 * rng.NormFloat64())
			for _, proto := range []factor.Protocol{"h2", "h3"} {
				v := 1000 * link * math.Exp(0.1*rng.NormFloat64())
				if proto == "h3" {
					v *= effect
				}
				trials = append(trials, results.Trial{ID: "t", Rep: int64(rep), Seeds: results.Seeds{Paired: true},
					Levels:  results.Levels{Network: "effect-" + strconv.FormatFloat(effect, 'g', -1, 64), Page: "synthetic:1x1KB", Origins: 1, Stack: "tcp", Server: "go", Protocol: proto, Visit: "first"},
					Outcome: results.Outcome{Status: results.StatusOK}, Metrics: results.Metrics{PLT: results.F(v)}})
			}
		}
	}
	seq, _ := stats.NewSequential(stats.Alpha, 8, 30, 0.01)
	a, err := analysis.Analyze(trials, analysis.Options{Until: &analysis.UntilRule{Seq: seq, Seed: 1, Baseline: "h2", Compare: "h3", CIRatio: 0.01}})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[stats.Verdict]bool{}
	for _, c := range a.Comparisons {
		seen[c.Verdict] = true
		excludes := c.IntervalOK && (c.RatioHi < 1 || c.RatioLo > 1)
		switch {
		case c.Verdict == stats.Faster && !(excludes && c.RatioHi < 1), c.Verdict == stats.Slower && !(excludes && c.RatioLo > 1),
			c.Verdict == stats.NoDifference && excludes, c.Verdict == stats.TooFewSamples && excludes:
			t.Errorf("%s: verdict %s beside [%.3f, %.3f] (ok %v)", c.Setting.Network(), c.Verdict, c.RatioLo, c.RatioHi, c.IntervalOK)
		}
		if c.Verdict == stats.TooFewSamples && !strings.Contains(against(c, false), "the until rule looks first after 8 repetitions") {
			t.Errorf("%s: too few loads without when the rule looks: %s", c.Setting.Network(), against(c, false))
		}
	}
	if !seen[stats.Faster] || !seen[stats.NoDifference] || !seen[stats.TooFewSamples] {
		t.Errorf("verdicts seen %v: want faster, no difference and too few loads among the settings", seen)
	}
}

// TestBoundsTable: loads with lower bounds get the table that splits the
// PLT difference into the bounds' and the excess's.
func TestBoundsTable(t *testing.T) {
	var trials []results.Trial
	for rep := 1; rep <= 5; rep++ {
		for _, p := range []struct {
			proto      factor.Protocol
			plt, bound float64
			chain      float64
		}{{"h2", 900, 600, 6}, {"h3", 700, 400, 4}} {
			trials = append(trials, results.Trial{ID: "t", Rep: int64(rep),
				Levels:  results.Levels{Network: "n", Page: "synthetic:1x1KB", Origins: 1, Protocol: p.proto, Visit: "first"},
				Outcome: results.Outcome{Status: results.StatusOK}, Metrics: results.Metrics{PLT: results.F(p.plt + float64(rep))},
				Bound: results.Bound{BoundMs: results.F(p.bound), BoundChainRTTs: results.F(p.chain)}})
		}
	}
	a, err := analysis.Analyze(trials, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	WriteText(&out, Page{Name: "run"}, a)
	// Δ PLT −200 = Δ bound −200 + Δ excess 0.
	for _, want := range []string{"physical lower bound", "-200.0  -200.0   0.0", "303.0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, out.String())
		}
	}
}

// TestCalibrationNamesTheNetworksThatWereOff: a network whose stored
// netcheck failed is named with its check, configured and measured.
func TestCalibrationNamesTheNetworksThatWereOff(t *testing.T) {
	store, err := results.Create(filepath.Join(t.TempDir(), results.FileName), map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, p := range []factor.Protocol{"h2", "h3"} {
		store.AddTrial(results.Trial{ID: "t" + string(p), Rep: 1, Levels: results.Levels{Network: "lte", Page: "synthetic:1x1KB", Protocol: p},
			Outcome: results.Outcome{Status: results.StatusOK}, Metrics: results.Metrics{PLT: results.F(100)}}, nil, nil)
	}
	store.SaveNetwork("lte", []byte(`{}`), []byte(`{"lines":[{"check":"RTT, idle","configured":"70.000 ms","measured":"median 73.1 ms","result":"FAIL"},{"check":"loss","result":"pass"}]}`), time.Now())
	store.SaveNetwork("dsl", []byte(`{}`), []byte(`{"lines":[{"check":"RTT, idle","result":"pass"},{"check":"RTT under load","result":"info"}]}`), time.Now())
	store.SetMeta("netcheck failed first: lte", `{"lines":[{"check":"RTT, idle","configured":"70.000 ms","measured":"median 75.4 ms","result":"FAIL"}]}`)
	r, err := Build(context.Background(), store, "", analysis.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	WriteText(&out, Page{Name: "run"}, r.Analysis)
	if !strings.Contains(out.String(), "1 of 2 networks were not what was configured") || !strings.Contains(out.String(), "lte: RTT, idle: configured 70.000 ms, measured median 73.1 ms") {
		t.Errorf("calibration:\n%s", out.String())
	}
	if answer := strings.Join(Answer(r.Analysis), " "); !strings.Contains(answer, "Its network was not what was configured (netcheck failed, also when measured again: RTT, idle configured 70.000 ms, measured median 73.1 ms)") {
		t.Errorf("the answer does not say that the network was off: %q", answer)
	}
	dir := t.TempDir()
	if _, err := WriteFiles(dir, r.Page, r.Analysis, r.Figures); err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(html)
	for _, want := range []string{"lte: 1 checks failed, also when measured again", "lte: the first netcheck, which failed", "<td>median 75.4 ms</td>", "<td class=\"l\">RTT under load</td>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the report's netchecks lack %q", want)
		}
	}
	if strings.Contains(page, "&#34;lines&#34;") || strings.Contains(page, `"lines"`) {
		t.Error("the report shows a netcheck as JSON")
	}
}

// TestQUICStackANOVA: h3 loads of two QUIC stacks in otherwise equal
// settings get an ANOVA across the QUIC stacks (significant where one is
// 20 % slower), h2 none. (Runs recorded before the QUIC stack was read as
// quic-go: package results' TestTrialsBeforeTheQUICColumnReadAsTheirStack.)
func TestQUICStackANOVA(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	var trials []results.Trial
	for _, quic := range []struct {
		stack  factor.QUIC
		slower float64
	}{{factor.QUICGoNewReno, 1}, {factor.QUICQuinnBBR, 1.2}} {
		for _, proto := range []factor.Protocol{"h2", "h3"} {
			for rep := 1; rep <= 10; rep++ {
				v := 1000 * (1 + 0.03*rng.NormFloat64())
				if proto == "h3" {
					v *= quic.slower
				}
				trials = append(trials, results.Trial{ID: "t", Rep: int64(rep),
					Levels:  results.Levels{Network: "n", Page: "synthetic:8x10KB", Origins: 1, Stack: "tcp+", Server: "go", QUIC: quic.stack, Protocol: proto, Visit: "first", Client: "chromium", Browser: "fresh"},
					Outcome: results.Outcome{Status: results.StatusOK, Attempts: 1},
					Metrics: results.Metrics{PLT: results.F(v), OnLoad: results.F(v)}})
			}
		}
	}
	a, err := analysis.Analyze(trials, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.QUICANOVAs) != 1 || a.QUICANOVAs[0].Protocol != "h3" || strings.Join(a.QUICANOVAs[0].Stacks, ",") != "quic-go,quinn+bbr" || a.QUICANOVAs[0].Test.P >= stats.Alpha {
		t.Fatalf("QUIC ANOVAs %+v, want one significant for h3 across quic-go and quinn+bbr", a.QUICANOVAs)
	}
	var text bytes.Buffer
	WriteText(&text, Page{Name: "run"}, a)
	if !strings.Contains(text.String(), "One-way ANOVA across QUIC stacks") {
		t.Errorf("the summary has no QUIC stack ANOVA:\n%s", text.String())
	}
	// quinn+bbr is experimental, once, in the summary; quic-go is not.
	if n := strings.Count(text.String(), "Experimental QUIC stack quinn+bbr: quinn marks its BBR experimental"); n != 1 || strings.Contains(text.String(), "stack quic-go:") {
		t.Errorf("the summary marks quinn+bbr as experimental %d times, want once:\n%s", n, text.String())
	}
}

// TestClientANOVA: loads of two clients in otherwise equal settings get an
// ANOVA across the clients per protocol (significant for h3, where
// Firefox is 15 % slower here; not for h2, where they are alike), and the
// setting tables tell the clients apart.
func TestClientANOVA(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	var trials []results.Trial
	for _, c := range []factor.Client{factor.ClientChromium, factor.ClientFirefox} {
		for _, proto := range []factor.Protocol{"h2", "h3"} {
			for rep := 1; rep <= 12; rep++ {
				v := 1000 * (1 + 0.03*rng.NormFloat64())
				if proto == "h3" && c == factor.ClientFirefox {
					v *= 1.15
				}
				trials = append(trials, results.Trial{ID: "t", Rep: int64(rep),
					Levels:  results.Levels{Network: "n", Page: "synthetic:8x10KB", Origins: 1, Stack: "tcp", Server: "go", Protocol: proto, Visit: "first", Client: c, Browser: "fresh"},
					Outcome: results.Outcome{Status: results.StatusOK, Attempts: 1},
					Metrics: results.Metrics{PLT: results.F(v), OnLoad: results.F(v)}})
			}
		}
	}
	a, err := analysis.Analyze(trials, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.ClientANOVAs) != 2 {
		t.Fatalf("client ANOVAs %+v, want one per protocol", a.ClientANOVAs)
	}
	for _, an := range a.ClientANOVAs {
		if strings.Join(an.Stacks, ",") != "chromium,firefox" || (an.Test.P < stats.Alpha) != (an.Protocol == "h3") {
			t.Errorf("%s: clients %v, p %g; want a difference for h3 only", an.Protocol, an.Stacks, an.Test.P)
		}
	}
	if len(a.Comparisons) != 2 {
		t.Errorf("%d comparisons of h3 with h2, want one per client", len(a.Comparisons))
	}
	var text bytes.Buffer
	WriteText(&text, Page{Name: "run"}, a)
	if !strings.Contains(text.String(), "One-way ANOVA across clients; the clients differ where p < 0.01") || !strings.Contains(text.String(), "firefox") {
		t.Errorf("the summary has no client ANOVA:\n%s", text.String())
	}
}

// TestEveryPairOfProtocols: a run of h1, h2 and h3 compares h3 with h2 in
// its main table and every other pair, the later against the earlier, in
// Pairs; with --baseline h1 the main one is h3/h1 and Pairs holds h2/h1
// and h3/h2.
func TestEveryPairOfProtocols(t *testing.T) {
	trials := fakeTrials()
	for _, tr := range fakeTrials() {
		if tr.Protocol == factor.H2 && tr.PLT != nil { // h1 is 30 % slower than h2
			tr.Protocol, tr.PLT = factor.H1, results.F(*tr.PLT*1.3)
			trials = append(trials, tr)
		}
	}
	for _, tt := range []struct {
		baseline factor.Protocol
		want     []string
	}{{"", []string{"h2/h1", "h3/h1"}}, {"h1", []string{"h2/h1", "h3/h2"}}} {
		a, err := analysis.Analyze(trials, analysis.Options{Baseline: tt.baseline})
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Pairs) != 2*len(a.Comparisons) || len(a.Comparisons) != 8 {
			t.Fatalf("baseline %q: %d pairs for %d settings, want two each", tt.baseline, len(a.Pairs), len(a.Comparisons))
		}
		for i, c := range a.Pairs {
			pair := string(c.Compare.Protocol) + "/" + string(c.Baseline.Protocol)
			if pair != tt.want[i%2] {
				t.Errorf("baseline %q: pair %d is %s, want %s", tt.baseline, i, pair, tt.want[i%2])
			}
			if c.Ratio != stats.Median(c.Compare.Values)/stats.Median(c.Baseline.Values) {
				t.Errorf("%s %+v: ratio %v", pair, c.Setting, c.Ratio)
			}
			if pair == "h2/h1" && c.Verdict != stats.Faster {
				t.Errorf("%s %+v: verdict %q, want faster (h1 30 %% slower)", pair, c.Setting, c.Verdict)
			}
		}
		var text bytes.Buffer
		WriteText(&text, Page{Name: "fake"}, a)
		if !strings.Contains(text.String(), "Every other pair of the run's protocols") || !strings.Contains(text.String(), tt.want[0]) {
			t.Errorf("baseline %q: the text has no pairs table:\n%s", tt.baseline, text.String())
		}
	}
}
