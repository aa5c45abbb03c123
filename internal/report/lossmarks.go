package report

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/quicbench/quicbench/internal/results"
)

// lossColor marks losses on a waterfall's rows.
var lossColor = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}

// drawnRow is one drawn row of a waterfall: the host its request went to,
// when it ran (ms) and where it is drawn.
type drawnRow struct {
	host     string
	from, to float64
	y        float64
}

// maxLossMarks bounds the marks a waterfall draws: a load that lost more
// packets shows its first ones.
const maxLossMarks = 400

// lossesCaption tells a waterfall's loss marks.
const lossesCaption = " Red crosses on a row mark packets the emulated link dropped on that request's connection while the request was under way (▲ towards the server), and a thin red line above a row the time the connection's data stood still for lost data until it arrived, or over QUIC was sent again (dashed: QUIC's wait is one stream's, which the HAR cannot name, so it is drawn on every row of the connection, where TCP's holds every stream); they are on the link's clock, which starts just before navigation. A host's connections are marked only where the server saw one connection to it (h2, h3): the HAR's connections cannot be matched to the server's when HTTP/1.1 opens several."

// drawLosses marks w's losses on the rows of the connection each belongs
// to (see lossesCaption), with tips; it returns how many it drew.
func drawLosses(p *plot.Plot, rows []drawnRow, w Waterfall, marks *tips) (int, error) {
	hostOf := soleConnections(w.Connections)
	drawn := 0
	for _, l := range w.Losses {
		host, ok := hostOf[l.Client]
		if !ok || (l.Kind == results.LossDrop && l.Bytes == 0) { // a bare TCP acknowledgement: no data lost
			continue
		}
		for _, r := range rows {
			if drawn >= maxLossMarks {
				return drawn, nil
			}
			if r.host != host || l.ToMs < r.from || l.FromMs > r.to {
				continue
			}
			if err := drawLoss(p, l, r, marks); err != nil {
				return drawn, err
			}
			drawn++
		}
	}
	return drawn, nil
}

// soleConnections maps the client address of each connection that was
// the only one with requests to its host to that host.
func soleConnections(conns []results.Connection) map[string]string {
	count := map[string]int{}
	for _, c := range conns {
		if c.Requests > 0 {
			count[c.ServerName]++
		}
	}
	out := map[string]string{}
	for _, c := range conns {
		if c.Requests > 0 && count[c.ServerName] == 1 && c.ServerName != "" {
			out[c.Remote] = c.ServerName
		}
	}
	return out
}

// drawLoss marks loss l on row r: a cross (a triangle for a packet
// towards the server) at a drop, a thin line over a wait, within the row.
func drawLoss(p *plot.Plot, l results.Loss, r drawnRow, marks *tips) error {
	if l.Kind == results.LossWait {
		from, to := max(l.FromMs, r.from), min(l.ToMs, r.to)
		line, err := plotter.NewLine(plotter.XYs{{X: from, Y: r.y + 0.38}, {X: to, Y: r.y + 0.38}})
		if err != nil {
			return err
		}
		line.Color, line.Width = lossColor, vg.Points(1.5)
		what := "the connection's data"
		if l.Transport == "udp" {
			line.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
			what = "one stream of the QUIC connection"
		}
		p.Add(line)
		marks.add(from, r.y+0.3, to, r.y+0.45, fmt.Sprintf("%s to %s stood still for lost data from %s to %s ms", what, r.host, num(l.FromMs, 1), num(l.ToMs, 1)), "")
		return nil
	}
	dot, err := plotter.NewScatter(plotter.XYs{{X: l.FromMs, Y: r.y}})
	if err != nil {
		return err
	}
	dot.GlyphStyle = draw.GlyphStyle{Color: lossColor, Radius: vg.Points(3), Shape: draw.CrossGlyph{}}
	where := "to the client"
	if !l.Down {
		dot.GlyphStyle.Shape, where = draw.TriangleGlyph{}, "to the server"
	}
	p.Add(dot)
	marks.add(l.FromMs-2, r.y-0.3, l.FromMs+2, r.y+0.3, fmt.Sprintf("the link dropped a packet of %d bytes %s at %s ms", l.Bytes, where, num(l.FromMs, 1)), "")
	return nil
}
