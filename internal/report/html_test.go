package report

import (
	"bytes"
	"context"
	"image"
	_ "image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/chromium"
	"github.com/quicbench/quicbench/internal/har"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/testenv"
)

// TestHTMLRendersInChromium writes a report of the fake run and opens it in
// headless Chromium: every figure is an inline SVG with a size and drawn
// content, and a screenshot of the page is not blank.
func TestHTMLRendersInChromium(t *testing.T) {
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "apt-get install chromium")
	trials := fakeTrials()
	a, err := analysis.Analyze(trials, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	wf := []results.Resource{
		{URL: "https://www.quicbench.test/", StartMs: 0, ResponseEndMs: 120},
		{URL: "https://www.quicbench.test/obj/0.png", StartMs: 130, ResponseEndMs: 260},
		{URL: "https://www.quicbench.test/obj/1.png", StartMs: 131, ResponseEndMs: 300},
	}
	figs, err := Figures(context.Background(), a, []Waterfall{{Trial: trials[20], Resources: wf}})
	if err != nil {
		t.Fatal(err)
	}
	// cdf, ratio bars, grid, diff curves, a boxplot per page, the waterfall
	if len(figs) != 7 {
		t.Fatalf("%d figures, want 7", len(figs))
	}
	dir := t.TempDir()
	files, err := WriteFiles(dir, Page{Name: "fake", Facts: map[string]string{"chromium_version": "test"}}, a, figs)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2*len(figs)+7+1 { // and 7 tables, the page
		t.Errorf("%d files written", len(files))
	}
	for _, f := range figs {
		data, err := os.ReadFile(filepath.Join(dir, f.Name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		if cfg, err := png.DecodeConfig(bytes.NewReader(data)); err != nil || cfg.Width < 400 {
			t.Errorf("%s.png: %v, %dx%d", f.Name, err, cfg.Width, cfg.Height)
		}
		if !strings.Contains(f.Title, "n = ") && !strings.Contains(f.Title, "settings") && !strings.Contains(f.Title, "resources") {
			t.Errorf("figure %s does not state its n: %q", f.Name, f.Title)
		}
	}

	ctx := reportBrowser(t)
	type svgInfo struct {
		ID       string  `json:"id"`
		Width    float64 `json:"width"`
		Height   float64 `json:"height"`
		Elements int     `json:"elements"`
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+filepath.Join(dir, "index.html"))); err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(80))
	if err != nil {
		t.Fatal(err)
	}
	infos, err := chromedp.Run(ctx, chromedp.Evaluate[[]svgInfo](`Array.from(document.querySelectorAll('figure')).map(f => {
		const s = f.querySelector('svg'); if (!s) return {id: f.id, width: 0, height: 0, elements: 0};
		const r = s.getBoundingClientRect();
		return {id: f.id, width: r.width, height: r.height, elements: s.querySelectorAll('path, text, rect, polygon, line').length};
	})`))
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != len(figs) {
		t.Fatalf("the page shows %d figures, want %d", len(infos), len(figs))
	}
	for _, in := range infos {
		if in.Width < 300 || in.Height < 200 || in.Elements < 10 {
			t.Errorf("figure %s renders at %.0f×%.0f with %d elements", in.ID, in.Width, in.Height, in.Elements)
		}
	}
	img, _, err := image.Decode(bytes.NewReader(shot)) // JPEG at quality 80
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	b := img.Bounds()
	dark := 0
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			if r, g, bl, _ := img.At(x, y).RGBA(); r+g+bl < 3*0x8000 {
				dark++
			}
		}
	}
	if b.Dy() < 2000 || dark < 1000 {
		t.Errorf("screenshot %dx%d with %d dark samples: the page looks empty", b.Dx(), b.Dy(), dark)
	}
}

// TestHARWaterfall draws a load from a HAR: its phases appear in the
// legend, and the figure says where it came from.
func TestHARWaterfall(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	h := har.New("test", "")
	h.Log.Pages = append(h.Log.Pages, har.Page{StartedDateTime: start, ID: "page_1"})
	for i, url := range []string{"https://a.test/", "https://a.test/1.png", "https://a.test/2.png"} {
		tm := har.Timings{Blocked: 1, DNS: -1, Connect: -1, SSL: -1, Send: 0.2, Wait: 40, Receive: 10}
		if i == 0 {
			tm.Connect, tm.SSL = 60, 30
		}
		h.Log.Entries = append(h.Log.Entries, har.Entry{StartedDateTime: start.Add(time.Duration(i) * 120 * time.Millisecond), Timings: tm, Time: tm.Total(),
			Request: har.Request{URL: url}})
	}
	trials := fakeTrials()
	a, err := analysis.Analyze(trials, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	figs, err := Figures(context.Background(), a, []Waterfall{{Trial: trials[0], HAR: h}})
	if err != nil {
		t.Fatal(err)
	}
	w := figs[len(figs)-1]
	if w.Name != "waterfall" || !strings.Contains(w.Title, "from its HAR") || !strings.Contains(w.Title, "3 requests") {
		t.Fatalf("last figure %q: %s", w.Name, w.Title)
	}
	for _, phase := range []string{"TLS", "wait", "receive", "connect"} {
		if !bytes.Contains(w.SVG, []byte(phase)) {
			t.Errorf("the waterfall's legend lacks %q", phase)
		}
	}
}
