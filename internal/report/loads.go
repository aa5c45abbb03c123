package report

import (
	"cmp"
	"fmt"
	"image/color"
	"math/rand/v2"
	"slices"

	"github.com/quicbench/quicbench/internal/analysis"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// maxLoadFigureSettings is the most settings whose loads get figures of
// their own (a strip and a CDF each): beyond it the figures over pages
// and the grids say more.
const maxLoadFigureSettings = 4

// settingSamples lists the run's settings with every protocol's sample in
// each (from the comparisons and the other pairs), protocols in order.
func settingSamples(a *analysis.Analysis) ([]analysis.Setting, map[analysis.Setting][]analysis.Sample) {
	var settings []analysis.Setting
	samples := map[analysis.Setting][]analysis.Sample{}
	seen := map[analysis.Setting]bool{}
	add := func(s analysis.Setting, sm analysis.Sample) {
		if !seen[s] {
			seen[s] = true
			settings = append(settings, s)
		}
		if len(sm.Values) == 0 || slices.ContainsFunc(samples[s], func(x analysis.Sample) bool { return x.Protocol == sm.Protocol }) {
			return
		}
		samples[s] = append(samples[s], sm)
	}
	for _, c := range slices.Concat(a.Comparisons, a.Pairs) {
		add(c.Setting, c.Baseline)
		add(c.Setting, c.Compare)
	}
	for _, s := range settings {
		slices.SortFunc(samples[s], func(x, y analysis.Sample) int { return cmp.Compare(x.Protocol, y.Protocol) })
	}
	return settings, samples
}

// protocolColor is the colour of protocol i of a setting's samples.
func protocolColor(i int) color.Color { return plotutil.Color(i) }

// loadFigures draws, for a run of at most maxLoadFigureSettings settings,
// each setting's loads: every load's value per protocol (a strip, with
// the median marked) and the CDF of the values per protocol.
func loadFigures(a *analysis.Analysis) ([]Figure, error) {
	settings, samples := settingSamples(a)
	if len(settings) == 0 || len(settings) > maxLoadFigureSettings {
		return nil, nil
	}
	v := analysis.VariedOf(settings)
	var figs []Figure
	for i, s := range settings {
		if len(samples[s]) == 0 {
			continue
		}
		name := v.Label(s) + ", " + s.Page()
		strip, err := loadStrip(fmt.Sprintf("loads-%02d", i+1), name, samples[s], a.Options.Metric)
		if err != nil {
			return nil, err
		}
		cdf, err := loadCDF(fmt.Sprintf("cdf-loads-%02d", i+1), name, samples[s], a.Options.Metric)
		if err != nil {
			return nil, err
		}
		figs = append(figs, strip, cdf)
	}
	return figs, nil
}

// loadStrip draws every load of each sample as a point in its protocol's
// column (spread sideways so equal values stay apart), with its median as
// a bar.
func loadStrip(name, setting string, samples []analysis.Sample, metric string) (Figure, error) {
	n := 0
	var protocols []string
	p := newPlot("", "protocol", analysis.MetricLabel(metric)+", ms")
	rng := rand.New(rand.NewPCG(1, 2)) // the same spread on every render
	marks := &tips{}
	for i, sm := range samples {
		n += len(sm.Values)
		protocols = append(protocols, fmt.Sprintf("%s (n = %d)", sm.Protocol, len(sm.Values)))
		// The median's region first: the points' lie over it.
		marks.add(float64(i)-0.3, sm.Summary.Median, float64(i)+0.3, sm.Summary.Median,
			fmt.Sprintf("%s median: %s ms, %s CI %s–%s, n = %d", sm.Protocol, num(sm.Summary.Median, 1), levelText(), num(sm.MedianCILo, 1), num(sm.MedianCIHi, 1), len(sm.Values)), "")
		pts := make(plotter.XYs, len(sm.Values))
		for j, val := range sm.Values {
			pts[j] = plotter.XY{X: float64(i) + 0.25*(rng.Float64()-0.5), Y: val}
			marks.point(pts[j].X, val, loadTip(sm, j), loadAnchorOf(sm, j))
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return Figure{}, err
		}
		sc.Color, sc.Shape, sc.Radius = protocolColor(i), draw.CircleGlyph{}, vg.Points(3)
		median, err := plotter.NewLine(plotter.XYs{{X: float64(i) - 0.3, Y: sm.Summary.Median}, {X: float64(i) + 0.3, Y: sm.Summary.Median}})
		if err != nil {
			return Figure{}, err
		}
		median.Width, median.Color = vg.Points(2), color.Black
		p.Add(sc, median)
	}
	// The figure's own title stays short enough for its width; the
	// caption's title names the setting.
	p.Title.Text = fmt.Sprintf("Every load, n = %d", n)
	p.NominalX(protocols...)
	p.X.Min, p.X.Max = -0.5, float64(len(samples))-0.5
	p.Add(plotter.NewGrid())
	return render(name, fmt.Sprintf("Every load: %s, %s, n = %d loads", analysis.MetricLabel(metric), setting, n), "Each point is one verified load (spread sideways within its protocol's column so that equal values stay apart); the black bar is the protocol's median. The setting is named under the title. A point tells its load under the pointer and leads to it.", p, 6*vg.Inch, 4.5*vg.Inch, marks)
}

// loadCDF draws the CDF of each sample's values.
func loadCDF(name, setting string, samples []analysis.Sample, metric string) (Figure, error) {
	n := 0
	p := newPlot("", analysis.MetricLabel(metric)+", ms", "fraction of loads")
	marks := &tips{}
	for i, sm := range samples {
		n += len(sm.Values)
		line, err := cdfLine(sm.Values, protocolColor(i))
		if err != nil {
			return Figure{}, err
		}
		cdfTips(marks, sm)
		p.Add(line)
		p.Legend.Add(fmt.Sprintf("%s (n = %d)", sm.Protocol, len(sm.Values)), line)
	}
	p.Title.Text = fmt.Sprintf("CDF per protocol, n = %d", n)
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = false, false // below the curves' right ends, where a CDF leaves room
	p.Y.Min, p.Y.Max = 0, 1
	return render(name, fmt.Sprintf("CDF of %s per protocol: %s, n = %d loads", analysis.MetricLabel(metric), setting, n), "A point (x, y) says that a fraction y of the protocol's verified loads took at most x; the further left a line, the faster its loads.", p, 6*vg.Inch, 4.5*vg.Inch, marks)
}

// loadTip tells load j of sm: its protocol, trial and value.
func loadTip(sm analysis.Sample, j int) string {
	text := fmt.Sprintf("%s: %s ms", sm.Protocol, num(sm.Values[j], 1))
	if j < len(sm.IDs) {
		text = fmt.Sprintf("%s, trial %s: %s ms", sm.Protocol, sm.IDs[j], num(sm.Values[j], 1))
	}
	return text
}

// loadAnchorOf is the link to load j of sm in the list of loads ("" when
// the sample does not know its trials).
func loadAnchorOf(sm analysis.Sample, j int) string {
	if j >= len(sm.IDs) {
		return ""
	}
	return "#" + loadAnchor(sm.IDs[j])
}

// cdfTips marks each step of sm's CDF: how many of its loads took at
// most that long.
func cdfTips(marks *tips, sm analysis.Sample) {
	order := make([]int, len(sm.Values))
	for j := range order {
		order[j] = j
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(sm.Values[a], sm.Values[b]) })
	for k, j := range order {
		marks.point(sm.Values[j], float64(k+1)/float64(len(order)),
			fmt.Sprintf("%s: %d of %d loads took at most %s ms (this one: %s)", sm.Protocol, k+1, len(order), num(sm.Values[j], 1), loadTip(sm, j)), loadAnchorOf(sm, j))
	}
}
