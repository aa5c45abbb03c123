package report

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/chromium"
	"github.com/quicbench/quicbench/internal/testenv"
)

// TestReportNavigatesWithoutAServer opens a one-setting report from disk
// in headless Chromium and uses it as a reader would: the pointer over a
// load's point shows that load's value at once, a click on the point
// goes to the load's row, whose links reach its file and its waterfall; a
// network in the comparisons table leads to its setting's loads; and a
// click on a column's heading sorts the table.
func TestReportNavigatesWithoutAServer(t *testing.T) {
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "apt-get install chromium")
	trials := layoutRun(1, 1)
	runDir := t.TempDir()
	if err := os.Mkdir(filepath.Join(runDir, "artifacts"), 0o755); err != nil {
		t.Fatal(err)
	}
	har := filepath.Join("artifacts", trials[7].ID+".har")
	if err := os.WriteFile(filepath.Join(runDir, har), []byte(`{"log":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	trials[7].Artifacts = har
	a, err := analysis.Analyze(trials, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	figs, err := Figures(context.Background(), a, []Waterfall{layoutWaterfall(trials[7])})
	if err != nil {
		t.Fatal(err)
	}
	listed, count := analysis.Loads(trials, "plt")
	out := filepath.Join(runDir, "report")
	if _, err := WriteFiles(out, Page{Name: "navigate", Loads: listed, LoadCount: count, RunDir: runDir}, a, figs); err != nil {
		t.Fatal(err)
	}
	ctx := reportBrowser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+filepath.Join(out, "index.html"))); err != nil {
		t.Fatal(err)
	}

	// The pointer over the first load's point of the strip of loads.
	type region struct {
		X, Y  float64
		Tip   string
		Href  string
		Count int
	}
	r, err := chromedp.Run(ctx, chromedp.Evaluate[region](`(() => {
		const rects = [...document.querySelectorAll('#loads-01 g.tips rect')];
		const r = rects.find(x => x.parentNode.tagName === 'a');
		r.scrollIntoView({block: 'center'});
		const b = r.getBoundingClientRect();
		return {x: b.left + b.width / 2, y: b.top + b.height / 2, tip: r.dataset.tip, href: r.parentNode.getAttribute('href'), count: rects.length};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Count != len(trials)+3 { // a point per load, a bar per median
		t.Errorf("the strip of loads has %d regions, want %d", r.Count, len(trials)+3)
	}
	id := strings.TrimPrefix(r.Href, "#load-")
	if !strings.HasPrefix(r.Href, "#load-") || !strings.Contains(r.Tip, "trial "+id+": ") || !strings.HasSuffix(r.Tip, " ms") {
		t.Fatalf("the point's tip %q and link %q do not name one load", r.Tip, r.Href)
	}
	if err := chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, r.X, r.Y)); err != nil {
		t.Fatal(err)
	}
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { const t = document.getElementById('tip'); return t.style.display === 'block' ? t.textContent : ''; })()`))
	if err != nil || shown != r.Tip {
		t.Errorf("under the pointer: %q (%v), want %q", shown, err, r.Tip)
	}

	// A click on the point goes to the load's row.
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(r.X, r.Y)); err != nil {
		t.Fatal(err)
	}
	row, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash + ' ' + (document.querySelector(':target') ? document.querySelector(':target').textContent : 'nothing')`))
	if err != nil || !strings.HasPrefix(row, "#load-"+id+" "+id) {
		t.Errorf("after the click: %q (%v), want the row of %s", row, err, id)
	}

	// The waterfall's load links to its figure and its HAR file.
	links, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](fmt.Sprintf(
		`[...document.getElementById('load-%s').querySelectorAll('a')].map(a => a.textContent + '=' + a.href)`, trials[7].ID)))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(links, "waterfall=file://"+filepath.Join(out, "index.html")+"#waterfall") ||
		!slices.Contains(links, "HAR=file://"+filepath.Join(runDir, har)) {
		t.Errorf("the waterfall's load links to %q", links)
	}

	// The network leads to its setting's loads.
	setting, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const a = document.querySelector('table a[href^="#setting-"]');
		const h = a && document.getElementById(a.getAttribute('href').slice(1));
		return h ? h.tagName + ' ' + h.textContent + ' ' + h.nextElementSibling.rows.length : 'no link';
	})()`))
	if err != nil || !strings.HasPrefix(setting, "H3 "+fmt.Sprintf(longNetwork, 1)) || !strings.HasSuffix(setting, fmt.Sprint(" ", len(trials)+1)) {
		t.Errorf("the network's link: %q (%v)", setting, err)
	}

	// A click on the heading of the loads' values sorts them, twice the
	// other way.
	for _, want := range []string{"asc", "desc"} {
		values, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => {
			const table = document.querySelector('h3[id^="setting-"]').nextElementSibling;
			const col = [...table.rows[0].cells].findIndex(c => c.textContent.startsWith('PLT'));
			table.rows[0].cells[col].click();
			return [...table.rows].slice(1).map(r => parseFloat(r.cells[col].textContent));
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		sorted := slices.IsSorted(values)
		if want == "desc" {
			slices.Reverse(values)
			sorted = slices.IsSorted(values)
		}
		if len(values) != len(trials) || !sorted {
			t.Errorf("after a click (%s): %v", want, values)
		}
	}
}

// TestSettingLinksLandWithoutTheListOfLoads: a report that lists no
// loads (a large run) gives each comparison's row its setting's anchor,
// so that every figure's link to a setting lands somewhere.
func TestSettingLinksLandWithoutTheListOfLoads(t *testing.T) {
	a, figs := analyzedFigures(t, layoutRun(10, 4))
	dir := t.TempDir()
	if _, err := WriteFiles(dir, Page{Name: "large", LoadCount: 1_000_000}, a, figs); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	links := 0
	for _, f := range figs {
		for _, part := range strings.Split(string(f.SVG), `href="#`)[1:] {
			target := part[:strings.IndexByte(part, '"')]
			if !strings.HasPrefix(target, "setting-") {
				t.Errorf("%s links to %s, which a report without its loads lacks", f.Name, target)
			} else if !strings.Contains(string(page), `id="`+target+`"`) {
				t.Errorf("%s links to %s, which is nowhere on the page", f.Name, target)
			}
			links++
		}
	}
	if links == 0 || !strings.Contains(string(page), "This run has 1000000 loads") {
		t.Errorf("%d links in the figures; the page says nothing of the loads it does not list", links)
	}
}
