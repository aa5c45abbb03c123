package report

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/stats"
)

// Figure is one rendered figure.
type Figure struct {
	// Name is the file stem, such as "cdf-gain".
	Name string
	// Title says what the figure shows, with n, the metric and the unit.
	Title string
	// Caption says which paper's figure it follows and how to read it.
	Caption  string
	SVG, PNG []byte
	// Trials are the loads the figure shows one by one (a waterfall's,
	// a filmstrip's), which the list of loads links to it.
	Trials []string
}

var (
	baselineColor = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff} // blue
	compareColor  = color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff} // orange
	fasterColor   = color.RGBA{R: 0xa6, G: 0xdb, B: 0xa0, A: 0xff} // green
	slowerColor   = color.RGBA{R: 0xf4, G: 0xa5, B: 0x82, A: 0xff} // red
	neutralColor  = color.RGBA{R: 0xe0, G: 0xe0, B: 0xe0, A: 0xff}
)

// render draws p as SVG and PNG of w × h; the SVG carries marks'
// regions (the values under the pointer, and links).
func render(name, title, caption string, p *plot.Plot, w, h vg.Length, marks ...*tips) (Figure, error) {
	f := Figure{Name: name, Title: title, Caption: caption}
	for _, m := range marks {
		p.Add(m)
	}
	for _, format := range []string{"svg", "png"} {
		wt, err := p.WriterTo(w, h, format)
		if err != nil {
			return f, fmt.Errorf("figure %s: %w", name, err)
		}
		var buf bytes.Buffer
		if _, err := wt.WriteTo(&buf); err != nil {
			return f, fmt.Errorf("figure %s: %w", name, err)
		}
		if format == "svg" {
			var placed []placedTip
			for _, m := range marks {
				placed = append(placed, m.placed...)
			}
			f.SVG = withTips(buf.Bytes(), placed)
		} else {
			f.PNG = buf.Bytes()
		}
	}
	return f, nil
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	// Space between legend rows: without it a browser's text boxes of
	// neighbouring entries overlap.
	p.Legend.Padding = vg.Points(4)
	return p
}

// Figures draws every figure the run's shape supports: a figure over pages
// only where a network has two pages or more, bars only where there are
// two, a grid only of two cells or more; each setting's loads (a strip and
// a CDF per setting) for a run of a few settings, boxes per page for more;
// and a waterfall per load of waterfalls, one above the other on one time
// axis. Canceling ctx stops it between figures.
func Figures(ctx context.Context, a *analysis.Analysis, waterfalls []Waterfall) ([]Figure, error) {
	var figs []Figure
	add := func(f Figure, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if f.Name != "" {
			figs = append(figs, f)
		}
		return nil
	}
	for _, build := range []func(*analysis.Analysis) (Figure, error){gainCDF, ratioBars, winnerGrid, diffCurves} {
		if err := add(build(a)); err != nil {
			return nil, err
		}
	}
	loads, err := loadFigures(a)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	figs = append(figs, loads...)
	if err := add(partsBars(a)); err != nil {
		return nil, err
	}
	if len(loads) == 0 { // many settings: boxes per page instead
		boxes, err := boxplots(a)
		if err != nil {
			return nil, err
		}
		figs = append(figs, boxes...)
	}
	axes := axesOf(waterfalls)
	for i, w := range waterfalls {
		name := "waterfall"
		if len(waterfalls) > 1 {
			name = fmt.Sprintf("waterfall-%d", i+1)
		}
		f, err := waterfallOf(w, name, axes)
		if err := add(f, err); err != nil {
			return nil, err
		}
	}
	return figs, nil
}

// valid lists the comparisons with loads on both sides.
func valid(a *analysis.Analysis) []analysis.Comparison {
	var out []analysis.Comparison
	for _, c := range a.Comparisons {
		if len(c.Baseline.Values) > 0 && len(c.Compare.Values) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// manyPages says whether some group of cmps (byGroup) holds two pages or
// more: a figure over pages has something to show.
func manyPages(cmps []analysis.Comparison) bool {
	_, groups := byGroup(cmps, analysis.VariedIn(cmps))
	for _, g := range groups {
		if len(g) >= 2 {
			return true
		}
	}
	return false
}

// byGroup splits comparisons by their label without the page (the
// network and every other factor that varies), in first-seen order.
func byGroup(cmps []analysis.Comparison, v analysis.Varied) ([]string, map[string][]analysis.Comparison) {
	var keys []string
	m := map[string][]analysis.Comparison{}
	for _, c := range cmps {
		k := v.Label(c.Setting)
		if _, ok := m[k]; !ok {
			keys = append(keys, k)
		}
		m[k] = append(m[k], c)
	}
	return keys, m
}

// gainCDF follows Wolsing et al. 2019's Figure 3: per network, the CDF over pages of
// the gain (mean(compare) − mean(baseline)) / mean(baseline).
func gainCDF(a *analysis.Analysis) (Figure, error) {
	cmps := valid(a)
	if !manyPages(cmps) {
		return Figure{}, nil // no CDF of one page
	}
	o := a.Options
	keys, groups := byGroup(cmps, analysis.VariedIn(cmps))
	labels, key := legendLabels(keys)
	p := newPlot(fmt.Sprintf("CDF over pages of the gain of %s over %s, %s, %d settings", o.Compare, o.Baseline, o.Metric, len(cmps)),
		fmt.Sprintf("gain = (mean %s − mean %s) / mean %s, %% (negative: %s faster)", o.Compare, o.Baseline, o.Baseline, o.Compare),
		"fraction of pages")
	marks := &tips{}
	for i, k := range keys {
		gains := make([]float64, 0, len(groups[k]))
		for _, c := range groups[k] {
			gains = append(gains, 100*c.Gain)
		}
		gainTips(marks, k, groups[k])
		line, err := cdfLine(gains, plotutil.Color(i))
		if err != nil {
			return Figure{}, err
		}
		line.Dashes = seriesDashes(i)
		p.Add(line)
		p.Legend.Add(fmt.Sprintf("%s (n = %d pages)", labels[i], len(gains)), line)
	}
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, true
	p.Y.Min, p.Y.Max = 0, 1
	return render("cdf-gain", p.Title.Text, "As Wolsing et al. 2019, Figure 3: each line is a network (with the other factors that vary); a point (x, y) says that on a fraction y of the pages the gain was at most x. Left of 0, "+string(o.Compare)+" was faster."+key, p, 8*vg.Inch, 5*vg.Inch, marks)
}

// gainTips marks each page's step on a gain CDF: its setting, gain and
// means, leading to its loads.
func gainTips(marks *tips, label string, cmps []analysis.Comparison) {
	sorted := slices.Clone(cmps)
	slices.SortStableFunc(sorted, func(a, b analysis.Comparison) int { return cmp.Compare(a.Gain, b.Gain) })
	for k, c := range sorted {
		marks.point(100*c.Gain, float64(k+1)/float64(len(sorted)), fmt.Sprintf("%s, %s: gain %s (means %s and %s ms), %s",
			label, c.Setting.Page(), percent(c.Gain), num(c.Baseline.Summary.Mean, 1), num(c.Compare.Summary.Mean, 1), VerdictText(c)), "#"+settingAnchor(c.Setting))
	}
}

// cdfLine is the empirical CDF of values as a step line of colour c.
func cdfLine(values []float64, c color.Color) (*plotter.Line, error) {
	vals := slices.Sorted(slices.Values(values))
	pts := make(plotter.XYs, 0, 2*len(vals))
	for j, v := range vals {
		pts = append(pts, plotter.XY{X: v, Y: float64(j) / float64(len(vals))}, plotter.XY{X: v, Y: float64(j+1) / float64(len(vals))})
	}
	line, err := plotter.NewLine(pts)
	if err != nil {
		return nil, err
	}
	line.Color, line.Width = c, vg.Points(1.5)
	return line, nil
}

// ratioBars follows Biswal and Gnawali 2016's Figures 3–4: per network, the median over
// pages of the ratio median(compare)/median(baseline).
func ratioBars(a *analysis.Analysis) (Figure, error) {
	cmps := valid(a)
	if len(cmps) == 0 {
		return Figure{}, nil
	}
	o := a.Options
	keys, groups := byGroup(cmps, analysis.VariedIn(cmps))
	if len(keys) < 2 {
		return Figure{}, nil // no chart of one bar
	}
	values := make(plotter.Values, len(keys))
	marks := &tips{}
	for i, k := range keys {
		var ratios []float64
		for _, c := range groups[k] {
			ratios = append(ratios, c.Ratio)
		}
		values[i] = stats.Median(ratios)
		marks.add(float64(i)-0.3, 0, float64(i)+0.3, values[i], fmt.Sprintf("%s: median over %d pages of the ratio, %s", k, len(ratios), num(values[i], 3)), "#"+settingAnchor(groups[k][0].Setting))
	}
	p := newPlot(fmt.Sprintf("Median over pages of median(%s)/median(%s), %s, %d settings", o.Compare, o.Baseline, o.Metric, len(cmps)),
		"network", fmt.Sprintf("median(%s) / median(%s) (below 1: %s faster)", o.Compare, o.Baseline, o.Compare))
	bars, err := plotter.NewBarChart(values, vg.Points(18))
	if err != nil {
		return Figure{}, err
	}
	bars.Color = compareColor
	bars.LineStyle.Width = 0
	p.Add(bars)
	one, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: 1}, {X: float64(len(keys)) - 0.5, Y: 1}})
	if err != nil {
		return Figure{}, err
	}
	one.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(one)
	width := vg.Length(max(8, 0.6*float64(len(keys)))) * vg.Inch
	labels, key := axisLabels(keys, width)
	p.NominalX(labels...)
	p.Y.Min = 0
	return render("ratio-bars", p.Title.Text, "As Biswal and Gnawali 2016, Figures 3–4: one bar per network and setting of the other factors that vary; the networks' values are in the table of networks; the dashed line is parity."+key, p, width, 5*vg.Inch, marks)
}

// diffCurves follows Nepomuceno et al. 2018's Figure 3: per network, the pages' Diff =
// mean(compare) − mean(baseline), sorted.
func diffCurves(a *analysis.Analysis) (Figure, error) {
	cmps := valid(a)
	if !manyPages(cmps) {
		return Figure{}, nil // no curve of one point
	}
	o := a.Options
	keys, groups := byGroup(cmps, analysis.VariedIn(cmps))
	labels, key := legendLabels(keys)
	p := newPlot(fmt.Sprintf("Diff = mean %s − mean %s per page, sorted, %s, %d settings", o.Compare, o.Baseline, o.Metric, len(cmps)),
		"pages, sorted by Diff", "Diff, ms (negative: "+string(o.Compare)+" faster)")
	marks := &tips{}
	for i, k := range keys {
		diffs := make([]float64, 0, len(groups[k]))
		for _, c := range groups[k] {
			diffs = append(diffs, c.Diff)
		}
		slices.Sort(diffs)
		pts := make(plotter.XYs, len(diffs))
		for j, d := range diffs {
			pts[j] = plotter.XY{X: float64(j + 1), Y: d}
		}
		diffTips(marks, k, groups[k])
		line, scatter, err := plotter.NewLinePoints(pts)
		if err != nil {
			return Figure{}, err
		}
		line.Color, scatter.Color = plotutil.Color(i), plotutil.Color(i)
		line.Dashes = seriesDashes(i)
		scatter.Shape = plotutil.Shape(i)
		p.Add(line, scatter)
		p.Legend.Add(fmt.Sprintf("%s (n = %d pages)", labels[i], len(diffs)), line, scatter)
	}
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, true
	return render("diff-curves", p.Title.Text, "As Nepomuceno et al. 2018, Figure 3: each curve is a network (with the other factors that vary), its pages sorted by Diff; below 0, "+string(o.Compare)+" was faster."+key, p, 8*vg.Inch, 5*vg.Inch, marks)
}

// diffTips marks each page's point on a Diff curve (pages sorted by
// Diff), leading to its loads.
func diffTips(marks *tips, label string, cmps []analysis.Comparison) {
	sorted := slices.Clone(cmps)
	slices.SortStableFunc(sorted, func(a, b analysis.Comparison) int { return cmp.Compare(a.Diff, b.Diff) })
	for j, c := range sorted {
		marks.point(float64(j+1), c.Diff, fmt.Sprintf("%s, %s: Diff %s ms (means %s and %s ms), %s",
			label, c.Setting.Page(), num(c.Diff, 1), num(c.Baseline.Summary.Mean, 1), num(c.Compare.Summary.Mean, 1), VerdictText(c)), "#"+settingAnchor(c.Setting))
	}
}

// maxBoxGroups is the most settings one boxplot figure shows side by
// side; a page with more gets several figures.
const maxBoxGroups = 10

// boxplots follow Cook et al. 2017 and Nepomuceno et al. 2018's Figure 4: per page, Tukey boxes
// (whiskers at 1.5 IQR, outliers drawn) of both protocols per network,
// at most maxBoxGroups networks to a figure.
func boxplots(a *analysis.Analysis) ([]Figure, error) {
	cmps := valid(a)
	v := analysis.VariedIn(cmps)
	var pages []string
	byPage := map[string][]analysis.Comparison{}
	for _, c := range cmps {
		if _, ok := byPage[c.Setting.Page()]; !ok {
			pages = append(pages, c.Setting.Page())
		}
		byPage[c.Setting.Page()] = append(byPage[c.Setting.Page()], c)
	}
	var figs []Figure
	for _, page := range pages {
		group := byPage[page]
		for start := 0; start < len(group); start += maxBoxGroups {
			f, err := boxplot(fmt.Sprintf("boxplot-%02d", len(figs)+1), page, group[start:min(start+maxBoxGroups, len(group))], v, a.Options)
			if err != nil {
				return nil, err
			}
			figs = append(figs, f)
		}
	}
	return figs, nil
}

// boxplot draws the boxes of page's comparisons cmps, labelled by v.
func boxplot(name, page string, cmps []analysis.Comparison, v analysis.Varied, o analysis.Options) (Figure, error) {
	n := 0
	p := newPlot("", "", analysis.MetricLabel(o.Metric)+", ms")
	var names []string
	marks := &tips{}
	for j, c := range cmps {
		names = append(names, v.Label(c.Setting))
		for side, s := range []analysis.Sample{c.Baseline, c.Compare} {
			if len(s.Values) == 0 {
				continue
			}
			n += len(s.Values)
			box, err := plotter.NewBoxPlot(vg.Points(14), float64(j)+0.18*float64(2*side-1), plotter.Values(s.Values))
			if err != nil {
				return Figure{}, err
			}
			box.FillColor = []color.Color{baselineColor, compareColor}[side]
			p.Add(box)
			x := float64(j) + 0.18*float64(2*side-1)
			marks.add(x-0.08, s.Summary.P25, x+0.08, s.Summary.P75, fmt.Sprintf("%s, %s: median %s ms, quartiles %s–%s ms, n = %d",
				v.Label(c.Setting), s.Protocol, num(s.Summary.Median, 1), num(s.Summary.P25, 1), num(s.Summary.P75, 1), len(s.Values)), "#"+settingAnchor(c.Setting))
			if j == 0 {
				p.Legend.Add(string(s.Protocol), swatch{box.FillColor})
			}
		}
	}
	p.Title.Text = fmt.Sprintf("%s: %s (blue), %s (orange), %s, n = %d loads", page, o.Baseline, o.Compare, o.Metric, n)
	width := vg.Length(max(8, 0.9*float64(len(cmps)))) * vg.Inch
	labels, key := axisLabels(names, width)
	p.NominalX(labels...)
	p.X.Min, p.X.Max = -0.5, float64(len(cmps))-0.5 // one network's boxes in the middle, not at the ends
	p.Legend.Top = true
	return render(name, p.Title.Text,
		"As Cook et al. 2017 and Nepomuceno et al. 2018, Figure 4: Tukey boxplots; the box spans the quartiles, whiskers reach the last value within 1.5 IQR, points beyond are outliers."+key, p, width, 5*vg.Inch, marks)
}

// valueOr is *v, or NaN for nil (printed as "-").
func valueOr(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}

// swatch is a legend entry of one colour.
type swatch struct{ color.Color }

// Thumbnail fills the legend entry's box with the colour.
func (s swatch) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}}
	c.FillPolygon(s.Color, pts)
}

// winnerGrid follows Masri et al.'s Figure 10: a cell per page (row) and
// network (column) with both protocols' mean; green where the compared
// protocol is significantly faster, red where slower, grey otherwise.
func winnerGrid(a *analysis.Analysis) (Figure, error) {
	cmps := valid(a)
	if len(cmps) < 2 {
		return Figure{}, nil // no grid of one cell
	}
	o := a.Options
	v := analysis.VariedIn(cmps)
	var cols, rows []string
	cell := map[[2]string]analysis.Comparison{}
	for _, c := range cmps {
		col, row := v.Label(c.Setting), c.Setting.Page()
		if !slices.Contains(cols, col) {
			cols = append(cols, col)
		}
		if !slices.Contains(rows, row) {
			rows = append(rows, row)
		}
		cell[[2]string{row, col}] = c
	}
	n := 0
	for _, c := range cmps {
		n += len(c.Baseline.Values) + len(c.Compare.Values)
	}
	p := newPlot(fmt.Sprintf("Mean %s, ms: %s / %s (green: %s faster, red: slower), n = %d loads", analysis.MetricLabel(o.Metric), o.Baseline, o.Compare, o.Compare, n), "", "")
	p.Add(&gridPlotter{rows: rows, cols: cols, cell: cell})
	marks := &tips{}
	for r, row := range rows {
		for ci, col := range cols {
			if c, ok := cell[[2]string{row, col}]; ok {
				marks.add(float64(ci)-0.48, float64(r)-0.45, float64(ci)+0.48, float64(r)+0.45, fmt.Sprintf("%s, %s: means %s %s and %s %s ms, ratio of medians %s, %s",
					col, row, c.Baseline.Protocol, num(c.Baseline.Summary.Mean, 1), c.Compare.Protocol, num(c.Compare.Summary.Mean, 1), num(c.Ratio, 3), VerdictText(c)), "#"+settingAnchor(c.Setting))
			}
		}
	}
	w := vg.Length(max(8, 1.6*float64(len(cols))+2)) * vg.Inch
	h := vg.Length(max(3, 0.45*float64(len(rows))+2)) * vg.Inch
	var rowLabels vg.Length
	for _, r := range rows {
		rowLabels = max(rowLabels, textWidth(r, vg.Points(10)))
	}
	// Each column's label within its cell, the pages' names to the left.
	labels, key := fitLabels(cols, 0.9*(w-rowLabels-vg.Inch/2)/vg.Length(len(cols)), vg.Points(10))
	p.NominalX(labels...)
	p.NominalY(rows...)
	p.X.Min, p.X.Max = -0.5, float64(len(cols))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(rows))-0.5
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.LineStyle.Width, ax.Tick.LineStyle.Width, ax.Tick.Length = 0, 0, 0
		ax.Tick.Label.Font.Size = 10
	}
	return render("grid-winner", p.Title.Text, "As Masri et al., Figure 10: each cell holds the two means; its colour is the verdict."+key, p, w, h, marks)
}

// gridPlotter draws winnerGrid's cells.
type gridPlotter struct {
	rows, cols []string
	cell       map[[2]string]analysis.Comparison
}

// Plot draws the grid's cells, each coloured by its comparison's
// verdict and labelled with both protocols' means (ms).
func (g *gridPlotter) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	sty := text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, 9), XAlign: draw.XCenter, YAlign: draw.YCenter, Handler: plot.DefaultTextHandler}
	for r, row := range g.rows {
		for ci, col := range g.cols {
			cmp, ok := g.cell[[2]string{row, col}]
			if !ok {
				continue
			}
			fill := neutralColor
			switch cmp.Verdict {
			case stats.Faster:
				fill = fasterColor
			case stats.Slower:
				fill = slowerColor
			}
			x0, x1 := tx(float64(ci)-0.48), tx(float64(ci)+0.48)
			y0, y1 := ty(float64(r)-0.45), ty(float64(r)+0.45)
			c.FillPolygon(fill, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
			label := fmt.Sprintf("%s / %s", num(cmp.Baseline.Summary.Mean, 0), num(cmp.Compare.Summary.Mean, 0))
			c.FillText(sty, vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}, label)
		}
	}
}
