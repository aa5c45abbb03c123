package report

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"html"

	"github.com/quicbench/quicbench/internal/analysis"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// tip is a region of a figure, in its data's coordinates, that tells
// its value when the pointer is over it and may lead to a place in the
// report (href, such as "#load-ID"; empty: nowhere). A point has
// X0 == X1 and Y0 == Y1.
type tip struct {
	X0, Y0, X1, Y1 float64
	Text, Href     string
}

// placedTip is a tip's region on the canvas, in points (SVG units).
type placedTip struct {
	rect       vg.Rectangle
	text, href string
}

// minTipSize is the least width and height of a tip's region (points):
// a point or a thin bar is still easy to hover.
const minTipSize = 7

// tips is a plotter that draws nothing: when the plot is drawn it places
// its regions on the canvas, which render then adds to the SVG as
// transparent shapes with a title (the value under the pointer) and a
// link.
type tips struct {
	regions []tip
	placed  []placedTip
}

// add notes a region.
func (t *tips) add(x0, y0, x1, y1 float64, text, href string) {
	t.regions = append(t.regions, tip{X0: x0, Y0: y0, X1: x1, Y1: y1, Text: text, Href: href})
}

// point notes a point's region.
func (t *tips) point(x, y float64, text, href string) { t.add(x, y, x, y, text, href) }

// Plot places the regions by the plot's transforms (each draw, SVG or
// PNG, places them anew at the same size).
func (t *tips) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	t.placed = t.placed[:0]
	for _, r := range t.regions {
		x0, x1 := ordered(tx(r.X0), tx(r.X1))
		y0, y1 := ordered(ty(r.Y0), ty(r.Y1))
		if grow := minTipSize - (x1 - x0); grow > 0 {
			x0, x1 = x0-grow/2, x1+grow/2
		}
		if grow := minTipSize - (y1 - y0); grow > 0 {
			y0, y1 = y0-grow/2, y1+grow/2
		}
		t.placed = append(t.placed, placedTip{rect: vg.Rectangle{Min: vg.Point{X: x0, Y: y0}, Max: vg.Point{X: x1, Y: y1}}, text: r.Text, href: r.Href})
	}
}

func ordered(a, b vg.Length) (vg.Length, vg.Length) { return min(a, b), max(a, b) }

// tipShapes are the placed regions as SVG: a transparent rectangle each,
// with its text as a title, in a link where it has one; in the group
// class "tips" that the report's script shows on hover.
func tipShapes(placed []placedTip) []byte {
	var b bytes.Buffer
	b.WriteString(`<g class="tips" fill-opacity="0">`) // black by default, transparent
	for _, p := range placed {
		if p.href != "" {
			fmt.Fprintf(&b, `<a href="%s">`, html.EscapeString(p.href))
		}
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s</title></rect>`,
			float64(p.rect.Min.X), float64(p.rect.Min.Y), float64(p.rect.Max.X-p.rect.Min.X), float64(p.rect.Max.Y-p.rect.Min.Y), html.EscapeString(p.text))
		if p.href != "" {
			b.WriteString(`</a>`)
		}
	}
	b.WriteString("</g>\n")
	return b.Bytes()
}

// withTips adds the placed regions to a gonum SVG, inside its outermost
// group (whose transform turns the canvas's points, y up, into the
// image's), so that they lie over what they tell.
func withTips(svg []byte, placed []placedTip) []byte {
	if len(placed) == 0 {
		return svg
	}
	end := bytes.LastIndex(svg, []byte("</g>"))
	if end < 0 {
		return svg
	}
	out := make([]byte, 0, len(svg)+200*len(placed))
	out = append(out, svg[:end]...)
	out = append(out, tipShapes(placed)...)
	return append(out, svg[end:]...)
}

// settingAnchor is the id of a setting's place in the report's list of
// loads, the same wherever a figure or table names the setting.
func settingAnchor(s analysis.Setting) string {
	h := fnv.New64a()
	h.Write([]byte(analysis.LegacyText(s)))
	return fmt.Sprintf("setting-%016x", h.Sum64())
}

// loadAnchor is the id of a load's row in the report's list of loads.
func loadAnchor(id string) string { return "load-" + id }
