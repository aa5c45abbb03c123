package report

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/quicbench/quicbench/internal/results"
)

// Units of the lanes: lanes of one unit share a scale.
const (
	unitCores = "cores"
	unitMbps  = "Mbit/s"
)

// lane is one quantity of a load over time, drawn under its waterfall on
// its time axis: its rate over each interval between two samples.
type lane struct {
	name, unit string
	color      color.Color
	steps      []laneStep
}

// laneStep is a lane's rate, in its unit, from one sample to the next
// (ms since the navigation started).
type laneStep struct{ from, to, rate float64 }

// laneKind is a lane a sample can give: its name, unit and colour, its
// count in a sample (false: the sample has none) and the factor that
// turns that count per ms into the unit.
type laneKind struct {
	name, unit string
	color      color.Color
	count      func(results.Sample) (float64, bool)
	perMs      float64
}

// laneKinds are the lanes in the order they are drawn: the parties' CPU
// (ms of CPU per ms: cores), then the link's bytes each way (bytes per ms
// × 0.008: Mbit/s).
var laneKinds = []laneKind{
	{"browser CPU", unitCores, color.RGBA{R: 0x6a, G: 0x3d, B: 0x9a, A: 0xff}, func(s results.Sample) (float64, bool) { return deref(s.ClientCPUMs) }, 1},
	{"server CPU", unitCores, color.RGBA{R: 0x1b, G: 0x9e, B: 0x77, A: 0xff}, func(s results.Sample) (float64, bool) { return deref(s.ServerCPUMs) }, 1},
	{"quicbench CPU", unitCores, color.RGBA{R: 0x80, G: 0x80, B: 0x80, A: 0xff}, func(s results.Sample) (float64, bool) { return s.QuicbenchCPUMs, true }, 1},
	{"link down", unitMbps, color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, func(s results.Sample) (float64, bool) { return float64(s.DownBytes), true }, 0.008},
	{"link up", unitMbps, color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, func(s results.Sample) (float64, bool) { return float64(s.UpBytes), true }, 0.008},
}

func deref(v *float64) (float64, bool) {
	if v == nil {
		return 0, false
	}
	return *v, true
}

// lanesOf are the lanes of a load's samples (counts since the navigation
// started, in time order) up to end (ms, the time axis's end: a sample
// after it is not drawn; end ≤ 0: no axis yet, none cut); a party whose CPU is counted in quicbench's
// (nil) has no lane of its own. No samples, no lanes.
func lanesOf(samples []results.Sample, end float64) []lane {
	if end <= 0 {
		end = math.Inf(1)
	}
	var out []lane
	for _, k := range laneKinds {
		l := lane{name: k.name, unit: k.unit, color: k.color}
		var at, count float64
		for _, s := range samples {
			if s.AtMs > end {
				break
			}
			v, ok := k.count(s)
			if !ok {
				l.steps = nil
				break
			}
			if s.AtMs > at {
				l.steps = append(l.steps, laneStep{from: at, to: s.AtMs, rate: max(0, v-count) / (s.AtMs - at) * k.perMs})
				at, count = s.AtMs, v
			}
		}
		if len(l.steps) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// laneScales are the full scale of each unit over every lane of ws, so
// that the waterfalls of a setting's protocols compare at a glance: the
// highest rate rounded up to 1, 2 or 5 times a power of ten; for the
// link, the fastest of its configured rates when every load's link had
// constant ones (a full lane is a full link; the samples' timing can put
// a step a little above it, drawn full).
func laneScales(ws []Waterfall) map[string]float64 {
	scales := map[string]float64{}
	end := waterfallsEnd(ws) * (1 + legendRoom)
	for _, w := range ws {
		for _, l := range lanesOf(w.Samples, end) {
			for _, s := range l.steps {
				scales[l.unit] = max(scales[l.unit], s.rate)
			}
		}
	}
	for unit, top := range scales {
		scales[unit] = niceCeil(top)
	}
	if link := linkScale(ws); link > 0 && scales[unitMbps] > 0 {
		scales[unitMbps] = link
	}
	return scales
}

// linkScale is the fastest configured rate of ws's links, in Mbit/s; 0
// if a load's link had none in a direction (unlimited, or a trace).
func linkScale(ws []Waterfall) float64 {
	fastest := 0.0
	for _, w := range ws {
		up, down := w.Trial.RateUpBps, w.Trial.RateDownBps
		if up <= 0 || down <= 0 {
			return 0
		}
		fastest = max(fastest, float64(max(up, down))/1e6)
	}
	return fastest
}

// niceCeil is the least of 1, 2 or 5 times a power of ten that is at
// least v (v > 0); 1 for v ≤ 0.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v*(1-1e-12) {
			return m * p
		}
	}
	return 10 * p
}

// laneRows is a lane's height in waterfall rows; laneGap the space
// between the last row and the first lane.
const (
	laneRows = 3.0
	laneGap  = 0.4
)

// drawLanes draws lanes under a waterfall's rows (whose lowest is at y
// 0), each in a band laneRows high, its rate as a share of its unit's
// scale, with a tip per step; it returns the ticks that name them and
// the bottom of the lowest band.
func drawLanes(p *plot.Plot, lanes []lane, scales map[string]float64, marks *tips) ([]plot.Tick, float64, error) {
	var ticks []plot.Tick
	top := -0.5 - laneGap
	for _, l := range lanes {
		base, full := top-laneRows, scales[l.unit]
		if full <= 0 {
			full = niceCeil(0)
		}
		height := 0.9 * laneRows
		pts := plotter.XYs{{X: l.steps[0].from, Y: base}}
		for _, s := range l.steps {
			y := base + height*min(s.rate/full, 1)
			pts = append(pts, plotter.XY{X: s.from, Y: y}, plotter.XY{X: s.to, Y: y})
			marks.add(s.from, base, s.to, base+height, fmt.Sprintf("%s: %s %s from %s to %s ms", l.name, num(s.rate, 2), l.unit, num(s.from, 0), num(s.to, 0)), "")
		}
		pts = append(pts, plotter.XY{X: l.steps[len(l.steps)-1].to, Y: base})
		area, err := plotter.NewPolygon(pts)
		if err != nil {
			return nil, 0, err
		}
		area.Color, area.LineStyle.Width = l.color, 0
		floor, err := plotter.NewLine(plotter.XYs{{X: 0, Y: base}, {X: l.steps[len(l.steps)-1].to, Y: base}})
		if err != nil {
			return nil, 0, err
		}
		floor.Color, floor.Width = neutralColor, vg.Points(0.5)
		p.Add(area, floor)
		ticks = append(ticks, plot.Tick{Value: base + height/2, Label: fmt.Sprintf("%s, 0–%s %s", l.name, strconv.FormatFloat(full, 'g', -1, 64), l.unit)})
		top = base
	}
	return ticks, top, nil
}
