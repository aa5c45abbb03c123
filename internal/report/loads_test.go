package report

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/testenv"
)

// oneSetting is a run of one network and one page over h1, h2 and h3,
// five loads each, as the demo's.
func oneSetting() []results.Trial {
	var out []results.Trial
	for i, proto := range []factor.Protocol{factor.H1, factor.H2, factor.H3} {
		for rep := int64(1); rep <= 5; rep++ {
			v := 1300 - 250*float64(i) + 10*float64(rep)
			out = append(out, results.Trial{ID: "t", Seq: rep*3 + int64(i), Rep: rep,
				Levels:  results.Levels{Network: "demo", Page: "synthetic:32x10KB", Origins: 1, Stack: "tcp", Server: "go", Protocol: proto, Visit: "first", Client: "chromium", Browser: "fresh"},
				Outcome: results.Outcome{Status: results.StatusOK, Attempts: 1},
				Metrics: results.Metrics{PLT: results.F(v)}})
		}
	}
	return out
}

// analyzedFigures analyzes trials with the default options and draws
// their figures.
func analyzedFigures(t *testing.T, trials []results.Trial) (*analysis.Analysis, []Figure) {
	t.Helper()
	a, err := analysis.Analyze(trials, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	figs, err := Figures(context.Background(), a, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a, figs
}

func figureNames(figs []Figure) []string {
	var names []string
	for _, f := range figs {
		names = append(names, f.Name)
	}
	return names
}

// TestFiguresFitTheRunsShape: one setting gets its loads (every load per
// protocol, h1 included, and their CDF) and none of the figures over
// pages, bars or grids; a run of eight settings and two pages per network
// gets those and boxes per page, and no per-setting figures.
func TestFiguresFitTheRunsShape(t *testing.T) {
	_, figs := analyzedFigures(t, oneSetting())
	if got := figureNames(figs); !slices.Equal(got, []string{"loads-01", "cdf-loads-01"}) {
		t.Fatalf("figures of one setting: %v, want loads-01 and cdf-loads-01", got)
	}
	for _, f := range figs {
		if !strings.Contains(f.Title, "n = 15 loads") || !strings.Contains(string(f.SVG), "h1 (n = 5)") || !strings.Contains(string(f.SVG), "h3 (n = 5)") {
			t.Errorf("%s: title %q, or h1 and h3 not named in it", f.Name, f.Title)
		}
	}
	_, figs = analyzedFigures(t, fakeTrials())
	want := []string{"cdf-gain", "ratio-bars", "grid-winner", "diff-curves", "boxplot-01", "boxplot-02"}
	if got := figureNames(figs); !slices.Equal(got, want) {
		t.Errorf("figures of eight settings: %v, want %v", got, want)
	}
}

// TestARewrittenReportDropsTheFiguresItNoLongerDraws: files an earlier
// report wrote that this one does not are removed; the tables it writes
// again, and a user's own files, even with names a figure could have, stay
// (issue 44, item 3).
func TestARewrittenReportDropsTheFiguresItNoLongerDraws(t *testing.T) {
	dir := t.TempDir()
	users := []string{"boxplot-1.png", "waterfall.svg", "progress-9.png", "ratio-bars.png", "filmstrip-2.svg", "loads-7.png", "my-notes.txt"}
	for _, name := range users {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a, figs := analyzedFigures(t, oneSetting())
	if _, err := WriteFiles(dir, Page{Name: "one"}, a, figs); err != nil {
		t.Fatal(err)
	}
	names := testenv.DirNames(t, dir)
	for _, kept := range append(users, "loads-01.svg", "cdf-loads-01.png", "pairs.csv", "index.html") {
		if !slices.Contains(names, kept) {
			t.Errorf("%s is missing: %v", kept, names)
		}
	}
	// A report of eight settings, then one of one setting, in one directory.
	again := t.TempDir()
	a8, figs8 := analyzedFigures(t, fakeTrials())
	if _, err := WriteFiles(again, Page{Name: "eight"}, a8, figs8); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteFiles(again, Page{Name: "one"}, a, figs); err != nil {
		t.Fatal(err)
	}
	names = testenv.DirNames(t, again)
	for _, gone := range []string{"cdf-gain.svg", "ratio-bars.png", "boxplot-01.png", "boxplot-02.svg"} {
		if slices.Contains(names, gone) {
			t.Errorf("%s of the earlier report is still there: %v", gone, names)
		}
	}
	for _, kept := range []string{"loads-01.svg", "cdf-loads-01.png", "pairs.csv", "index.html", ManifestName} {
		if !slices.Contains(names, kept) {
			t.Errorf("%s is missing: %v", kept, names)
		}
	}
}

// TestTheAnswerInWords: one setting's answer says h3 was faster than h2
// and than h1, by how much, with the interval and the test; a run of more
// settings than get a sentence is counted.
func TestTheAnswerInWords(t *testing.T) {
	a, _ := analyzedFigures(t, oneSetting())
	answer := Answer(a)
	if len(answer) != 1 {
		t.Fatalf("answer %q, want one sentence", answer)
	}
	c := a.Comparisons[0]
	for _, want := range []string{"demo, synthetic:32x10KB, with unlimited client CPU: h3 was faster than h2 by " + percent(1-c.Estimate), "99 % CI", "Mann–Whitney p = " + pval(c.MannWhitney),
		"h3 was faster than h1 by", "median " + num(c.Compare.Summary.Median, 1) + " against " + num(c.Baseline.Summary.Median, 1) + " ms"} {
		if !strings.Contains(answer[0], want) {
			t.Errorf("answer %q lacks %q", answer[0], want)
		}
	}
	many, _ := analyzedFigures(t, fakeTrials())
	got := Answer(many)
	if len(got) != 8 || !strings.HasPrefix(got[0], "fast tcp, synthetic:8x10KB, with unlimited client CPU: h3 was not measurably different from h2 at α = 0.01 (") ||
		!strings.Contains(got[4], "faster than h2 by") || !strings.Contains(got[4], "Mann–Whitney p < 1e-6") {
		t.Errorf("answer of eight settings %q", got)
	}
	if got := tally(many); !strings.HasPrefix(got, "Over 8 settings, h3 was faster than h2 in 4, slower in 2, not measurably different in 2") {
		t.Errorf("the count of a larger run's verdicts: %q", got)
	}
}

// TestTheAnswerNamesTheClientCPUAndTheMachinesShare: a one-core client
// is named in the answer, and a setting whose loads were CPU-bound by a
// party's wait says how many and by whom.
func TestTheAnswerNamesTheClientCPUAndTheMachinesShare(t *testing.T) {
	trials := oneSetting()
	one := 1.0
	window, wait := 1000.0, 300.0
	for i := range trials {
		trials[i].ClientCPU = &one
		trials[i].CPUWindowMs, trials[i].QuicbenchCPUUserMs, trials[i].QuicbenchCPUSystemMs = &window, &wait, &wait
		if i%3 == 0 {
			trials[i].CPUBound = "client"
		}
	}
	a, _ := analyzedFigures(t, trials)
	answer := Answer(a)
	bound := 0
	for _, tr := range trials {
		if tr.CPUBound != "" && tr.Status == results.StatusOK {
			bound++
		}
	}
	for _, want := range []string{"synthetic:32x10KB, on 1 client core: h3", fmt.Sprintf("But %d of its", bound), "were CPU-bound (by the client in", "partly this machine's CPU"} {
		if len(answer) != 1 || !strings.Contains(answer[0], want) {
			t.Errorf("answer %q lacks %q", answer, want)
		}
	}
}

// TestTheMedianLoadsWaterfalls: a run of one setting draws the median load
// of each protocol, h1 first; a run of many settings the compared
// protocol's median load; a trial named draws that one alone.
func TestTheMedianLoadsWaterfalls(t *testing.T) {
	trials := oneSetting()
	for i := range trials {
		trials[i].ID = fmt.Sprintf("t%02d", i)
	}
	a, _ := analyzedFigures(t, trials)
	got, err := waterfallTrials(trials, a, "")
	if err != nil {
		t.Fatal(err)
	}
	var protocols []string
	for i, tr := range got {
		protocols = append(protocols, string(tr.Protocol))
		if sm := settingSamplesOf(a)[i]; *tr.PLT != sm.Summary.Median {
			t.Errorf("%s: the waterfall's load took %v, the median is %v", tr.Protocol, *tr.PLT, sm.Summary.Median)
		}
	}
	if !slices.Equal(protocols, []string{"h1", "h2", "h3"}) {
		t.Errorf("waterfalls of %v, want h1, h2, h3", protocols)
	}
	many := fakeTrials()
	ma, _ := analyzedFigures(t, many)
	if got, _ := waterfallTrials(many, ma, ""); len(got) != 1 || got[0].Protocol != factor.H3 {
		t.Errorf("waterfalls of eight settings: %d, want one h3 load", len(got))
	}
	if got, err := waterfallTrials(trials, a, "t04"); err != nil || len(got) != 1 || got[0].ID != "t04" {
		t.Errorf("the trial named: %v, %v", got, err)
	}
	if _, err := waterfallTrials(trials, a, "nope"); err == nil || !strings.Contains(err.Error(), `no trial "nope"`) {
		t.Errorf("a trial the run lacks: %v", err)
	}
}

// settingSamplesOf is the first setting's samples.
func settingSamplesOf(a *analysis.Analysis) []analysis.Sample {
	settings, samples := settingSamples(a)
	return samples[settings[0]]
}
