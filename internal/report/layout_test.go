package report

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/chromium"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/har"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/testenv"
)

// longNetwork is a network name as long as users give them.
const longNetwork = "lte-urban-drive-test-with-handovers-%02d"

// layoutRun is a run of networks × pages settings over h1, h2 and h3,
// five loads each, with long network names and a long page name.
func layoutRun(networks, pages int) []results.Trial {
	var out []results.Trial
	seq := int64(0)
	for n := range networks {
		for pg := range pages {
			page := fmt.Sprintf("synthetic:%dx10KB", 8*(pg+1))
			if pg == 1 {
				page = "archive:www.a-long-recorded-site-name.example.org"
			}
			for i, proto := range []factor.Protocol{factor.H1, factor.H2, factor.H3} {
				for rep := int64(1); rep <= 5; rep++ {
					seq++
					v := 900 + 400*float64(n%3) + 200*float64(pg) - 120*float64(i) + 17*float64((rep*7+int64(n))%5)
					out = append(out, results.Trial{ID: fmt.Sprintf("c%04d-r%d-a1", seq, rep), Seq: seq, Rep: rep,
						Levels: results.Levels{Network: fmt.Sprintf(longNetwork, n+1), Page: page, Origins: 1, Stack: "tcp",
							Server: "go", Protocol: proto, Visit: "first", Client: "chromium", Browser: "fresh"},
						Outcome: results.Outcome{Status: results.StatusOK, Attempts: 1},
						Metrics: results.Metrics{PLT: results.F(v), TTFB: results.F(v / 5)}})
				}
			}
		}
	}
	return out
}

// layoutWaterfall is a load of resources with long URLs.
func layoutWaterfall(t results.Trial) Waterfall {
	var rs []results.Resource
	for i := range 12 {
		rs = append(rs, results.Resource{URL: fmt.Sprintf("https://static.a-long-recorded-site-name.example.org/assets/js/vendor/bundle-%d.min.js?v=20261124", i),
			StartMs: float64(30 * i), ResponseEndMs: float64(30*i + 200)})
	}
	return Waterfall{Trial: t, Resources: rs}
}

// layoutHARWaterfall is a load with a HAR of long URLs over HTTP/1.1's six
// connections, which the server saw resumed, the document's first, and
// its lanes.
func layoutHARWaterfall(t results.Trial) Waterfall {
	start := time.Unix(1_800_000_000, 0)
	h := har.New("layout", "")
	doc := "https://static.a-long-recorded-site-name.example.org/"
	h.Log.Pages = append(h.Log.Pages, har.Page{StartedDateTime: start, ID: "page_1", Title: doc})
	var conns []results.Connection
	for i := range 18 {
		url, tm := fmt.Sprintf("%sassets/js/vendor/bundle-%d.min.js?v=20261124", doc, i), har.Timings{Blocked: 2, DNS: -1, Connect: -1, SSL: -1, Send: 0.3, Wait: 60, Receive: 25}
		if i == 0 {
			url = doc
		}
		if i < 6 {
			tm.DNS, tm.Connect, tm.SSL = 3, 80, 40
			conns = append(conns, results.Connection{ServerName: "static.a-long-recorded-site-name.example.org", Handshake: "resumed", Requests: 3, OpenedAt: start.Add(time.Duration(i) * time.Millisecond)})
		}
		h.Log.Entries = append(h.Log.Entries, har.Entry{StartedDateTime: start.Add(time.Duration(40*i) * time.Millisecond), Timings: tm, Time: tm.Total(),
			Connection: fmt.Sprint(100 + i%6), Request: har.Request{URL: url}, Response: har.Response{Status: 200, HTTPVersion: "http/1.1"}})
	}
	return Waterfall{Trial: t, HAR: h, Connections: conns, Samples: layoutSamples(16)}
}

// layoutSamples are n samples 50 ms apart of a load whose browser, server
// and quicbench work and whose link carries bytes each way.
func layoutSamples(n int) []results.Sample {
	var out []results.Sample
	for i := 1; i <= n; i++ {
		k := float64(i)
		out = append(out, results.Sample{AtMs: 50 * k, ClientCPUMs: results.F(40 * k), ServerCPUMs: results.F(5 * k), QuicbenchCPUMs: 3 * k,
			UpBytes: int64(2000 * i), DownBytes: int64(i * i * 3000)})
	}
	return out
}

// TestLayoutHoldsAtOneFourAndFortySettings writes the reports of runs of
// 1, 4 and 40 settings with long names and checks in headless Chromium
// that no text leaves its figure, no two labels of a figure overlap, and
// nothing makes the page wider than the window (with
// QUICBENCH_SCREENSHOTS, it saves each page's screenshot there).
func TestLayoutHoldsAtOneFourAndFortySettings(t *testing.T) {
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "apt-get install chromium")
	ctx := reportBrowser(t)
	for _, shape := range []struct{ networks, pages int }{{1, 1}, {2, 2}, {10, 4}} {
		trials := layoutRun(shape.networks, shape.pages)
		a, err := analysis.Analyze(trials, analysis.Options{})
		if err != nil {
			t.Fatal(err)
		}
		last := trials[len(trials)-1]
		figs, err := Figures(context.Background(), a, []Waterfall{layoutWaterfall(last), layoutHARWaterfall(last)})
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if _, err := WriteFiles(dir, Page{Name: "layout"}, a, figs); err != nil {
			t.Fatal(err)
		}
		settings := shape.networks * shape.pages
		problems, figures := checkLayout(t, ctx, dir)
		t.Logf("%d settings: %d figures (%s)", settings, len(figures), strings.Join(figures, ", "))
		if len(figures) != len(figs) {
			t.Errorf("%d settings: the page shows %d figures, want %d", settings, len(figures), len(figs))
		}
		for _, p := range problems {
			t.Errorf("%d settings: %s", settings, p)
		}
		saveScreenshot(t, ctx, fmt.Sprintf("layout-%d-settings.jpg", settings))
	}
}

// TestLayoutOfReportDirs checks the reports in the directories that
// QUICBENCH_REPORT_DIRS names (separated by colons), as
// scripts/check-report-layout.sh does for real runs' reports; with
// QUICBENCH_SCREENSHOTS it also saves a screenshot of each page there.
func TestLayoutOfReportDirs(t *testing.T) {
	dirs := os.Getenv("QUICBENCH_REPORT_DIRS")
	if dirs == "" {
		t.Skip("QUICBENCH_REPORT_DIRS names no reports (scripts/check-report-layout.sh sets it)")
	}
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "apt-get install chromium")
	ctx := reportBrowser(t)
	for i, dir := range strings.Split(dirs, ":") {
		problems, figures := checkLayout(t, ctx, dir)
		t.Logf("%s: %d figures, %d problems", dir, len(figures), len(problems))
		for _, p := range problems {
			t.Errorf("%s: %s", dir, p)
		}
		saveScreenshot(t, ctx, fmt.Sprintf("report-%d.jpg", i+1))
	}
}

// saveScreenshot saves a full-page screenshot of the browser's page as
// name in the directory QUICBENCH_SCREENSHOTS names, if it names one.
func saveScreenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	out := os.Getenv("QUICBENCH_SCREENSHOTS")
	if out == "" {
		return
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(85))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, name), shot, 0o644); err != nil {
		t.Fatal(err)
	}
}

// reportBrowser starts headless Chromium with a 1400 × 1000 window
// for the test's life.
func reportBrowser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium.DefaultChromiumPath),
		chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true), chromedp.WindowSize(1400, 1000),
		chromedp.Env("TMPDIR="+t.TempDir())) // its singleton directory goes with the test's
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancelTimeout)
	return ctx
}

// layoutCheck runs in the page: for every figure, each text of its SVG
// must lie inside the SVG (a pixel's slack), no two texts may overlap by
// more than a pixel each way (rotated labels are measured by their
// boxes), the figure must tell values under the pointer, and its caption
// must not be wider than the figure's column; and
// the page must be no wider than its window (wide tables scroll in their
// own box).
const layoutCheck = `(() => {
  const problems = [], figures = [];
  const box = e => e.getBoundingClientRect();
  const overlap = (a, b) => Math.min(Math.max(0, Math.min(a.right, b.right) - Math.max(a.left, b.left)),
    Math.max(0, Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top)));
  for (const f of document.querySelectorAll('figure')) {
    figures.push(f.id);
    const svg = f.querySelector('svg');
    if (!svg) { problems.push(f.id + ': no SVG'); continue; }
    const s = box(svg);
    const texts = [...svg.querySelectorAll('text')].map(t => ({text: t.textContent, r: box(t)})).filter(x => x.r.width > 0);
    for (const x of texts) {
      if (x.r.left < s.left - 1 || x.r.right > s.right + 1 || x.r.top < s.top - 1 || x.r.bottom > s.bottom + 1)
        problems.push(f.id + ': text "' + x.text + '" leaves the figure');
    }
    for (let i = 0; i < texts.length; i++)
      for (let j = i + 1; j < texts.length; j++)
        if (overlap(texts[i].r, texts[j].r) > 1)
          problems.push(f.id + ': "' + texts[i].text + '" overlaps "' + texts[j].text + '" by ' + overlap(texts[i].r, texts[j].r).toFixed(1) + ' px');
    if (!svg.querySelector('g.tips rect')) problems.push(f.id + ': no value under the pointer');
    const c = f.querySelector('figcaption');
    if (c && c.scrollWidth > c.clientWidth + 1) problems.push(f.id + ': its caption overflows');
  }
  const root = document.documentElement;
  if (root.scrollWidth > root.clientWidth + 1)
    problems.push('the page is ' + root.scrollWidth + ' px wide in a window of ' + root.clientWidth);
  return {problems, figures};
})()`

// checkLayout opens dir/index.html in the browser of ctx and returns
// what layoutCheck found, and the figures' ids.
func checkLayout(t *testing.T, ctx context.Context, dir string) (problems, figures []string) {
	t.Helper()
	type found struct {
		Problems []string `json:"problems"`
		Figures  []string `json:"figures"`
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+filepath.Join(dir, "index.html"))); err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[found](layoutCheck))
	if err != nil {
		t.Fatal(err)
	}
	return got.Problems, got.Figures
}
