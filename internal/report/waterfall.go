package report

import (
	"cmp"
	"fmt"
	"image/color"
	"maps"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/quicbench/quicbench/internal/har"
	"github.com/quicbench/quicbench/internal/results"
)

// Waterfall is one load to draw as a waterfall: its trial, its Resource
// Timing, its HAR when the run kept one (nil otherwise), whose phases the
// waterfall then shows, the connections the servers saw, whose resumed
// and 0-RTT handshakes the HAR's rows then mark, its samples, drawn as
// lanes under it, and its losses, marked on its rows.
type Waterfall struct {
	Trial     results.Trial
	Resources []results.Resource
	HAR       *har.HAR
	// HARNote says why the load's HAR artifact was not drawn ("" where
	// it was, or where the run kept none).
	HARNote     string
	Connections []results.Connection
	Samples     []results.Sample
	Losses      []results.Loss
}

// sharedAxes are what the waterfalls of a report share, so that a
// setting's protocols compare at a glance: where the time axis ends (ms;
// 0: each its own end) and the lanes' scales by unit (none: each its own).
type sharedAxes struct {
	end   float64
	lanes map[string]float64
}

// axesOf are the axes ws share.
func axesOf(ws []Waterfall) sharedAxes {
	return sharedAxes{end: waterfallsEnd(ws), lanes: laneScales(ws)}
}

// waterfallOf draws w from its HAR when it has entries, else from its
// Resource Timing, with its lanes under it; named name, on axes.
func waterfallOf(w Waterfall, name string, axes sharedAxes) (Figure, error) {
	if axes.end <= 0 || axes.lanes == nil {
		axes = axesOf([]Waterfall{w})
	}
	if w.HAR != nil && len(w.HAR.Log.Entries) > 0 {
		return harWaterfall(w, name, axes)
	}
	return waterfallFigure(w, name, axes)
}

// waterfallsEnd is where the waterfalls' shared time axis ends, in ms
// from navigation start: the latest of their requests' ends and their
// loads' marks (DCL, FCP, LCP, the load event).
func waterfallsEnd(ws []Waterfall) float64 {
	end := 0.0
	for _, w := range ws {
		for _, m := range loadMarks(w.Trial) {
			end = max(end, m.ms)
		}
		if w.HAR != nil && len(w.HAR.Log.Entries) > 0 {
			start := harStart(w.HAR)
			for _, e := range drawnEntries(w.HAR.Log.Entries) {
				end = max(end, axisMs(float64(e.StartedDateTime.Sub(start))/1e6+axisMs(e.Time)))
			}
			continue
		}
		for _, r := range drawnResources(w.Resources) {
			end = max(end, axisMs(r.ResponseEndMs))
		}
	}
	return end
}

// maxWaterfallRows bounds the requests a waterfall draws (the first by
// start, the document first): a real page's HAR has a few hundred, and a
// HAR of tens of thousands took minutes and gigabytes to draw.
const maxWaterfallRows = 400

// drawnEntries are the HAR entries a waterfall draws: the first
// maxWaterfallRows.
func drawnEntries(entries []har.Entry) []har.Entry {
	return entries[:min(len(entries), maxWaterfallRows)]
}

// drawnResources are the resources a waterfall draws: the first
// maxWaterfallRows.
func drawnResources(rs []results.Resource) []results.Resource {
	return rs[:min(len(rs), maxWaterfallRows)]
}

// rowsNote says how many of total rows a waterfall drew, when it drew
// fewer; "" when it drew them all.
func rowsNote(drawn, total int) string {
	if drawn == total {
		return ""
	}
	return fmt.Sprintf("; the first %d drawn", drawn)
}

// axisMs is a time on a waterfall's axis (ms from navigation start),
// within 0 and results.MaxMillis: a HAR a user edited may say anything,
// and a coordinate near the largest float took minutes to draw.
func axisMs(v float64) float64 {
	if !(v > 0) {
		return 0
	}
	return min(v, results.MaxMillis)
}

// loadMark is a moment of a load drawn across its waterfall.
type loadMark struct {
	name   string
	ms     float64
	color  color.Color
	dashes []vg.Length
}

// loadMarks are the moments of t that it has, in the order a page reaches
// them: DOMContentLoaded, first and largest contentful paint, and the
// load event's end (the PLT).
func loadMarks(t results.Trial) []loadMark {
	all := []struct {
		name   string
		v      *float64
		color  color.Color
		dashes []vg.Length
	}{
		{"DCL", t.DCL, color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, []vg.Length{vg.Points(2), vg.Points(2)}},
		{"FCP", t.FCP, color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, []vg.Length{vg.Points(6), vg.Points(2)}},
		{"LCP", t.LCP, color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, []vg.Length{vg.Points(6), vg.Points(2), vg.Points(2), vg.Points(2)}},
		{"load (PLT)", t.PLT, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, []vg.Length{vg.Points(4), vg.Points(3)}},
	}
	var out []loadMark
	for _, m := range all {
		if m.v != nil && *m.v > 0 {
			out = append(out, loadMark{name: m.name, ms: *m.v, color: m.color, dashes: m.dashes})
		}
	}
	return out
}

// waterfallFigure draws one load's resources from its Resource Timing,
// the document's Navigation Timing row first, then in start order: each
// row in its phases (rtPhases), a phase the browser did not expose drawn
// as unknown.
func waterfallFigure(w Waterfall, name string, axes sharedAxes) (Figure, error) {
	if len(w.Resources) == 0 {
		return Figure{}, nil
	}
	t := w.Trial
	all := documentFirstResources(w.Resources)
	rs := drawnResources(all)
	p := newPlot(fmt.Sprintf("Waterfall of trial %s: %s on %s, %s, PLT %s ms (%d resources%s)", t.ID, t.Protocol, t.Network, t.Page, num(valueOr(t.PLT), 1), len(all), rowsNote(len(rs), len(all))),
		"ms from navigation start", "")
	var names []string
	var drawn []drawnRow
	marks := &tips{}
	legend := map[string]bool{}
	conns, unplaced := rtConnections(rs)
	markKinds(conns, w.Connections)
	offset := connRowsOffset(conns)
	for i, r := range rs {
		y := float64(len(rs)-1-i) + offset
		from, to := axisMs(r.StartMs), axisMs(r.ResponseEndMs)
		drawn = append(drawn, drawnRow{host: serverName(r.URL), from: from, to: to, y: y})
		marks.add(from, y-0.3, to, y+0.3, fmt.Sprintf("%s: %s to %s ms", r.URL, num(r.StartMs, 1), num(r.ResponseEndMs, 1)), "")
		for _, ph := range rtPhases(r) {
			seg, err := plotter.NewLine(plotter.XYs{{X: axisMs(ph.from), Y: y}, {X: axisMs(ph.to), Y: y}})
			if err != nil {
				return Figure{}, err
			}
			seg.Width, seg.Color = vg.Points(6), ph.phase.color
			p.Add(seg)
			if !legend[ph.phase.name] {
				legend[ph.phase.name] = true
				p.Legend.Add(ph.phase.name, swatch{ph.phase.color})
			}
		}
		names = append(names, shortURL(r.URL))
	}
	connNames, err := connViewRows(p, conns, marks)
	if err != nil {
		return Figure{}, err
	}
	names = append(names, connNames...)
	caption := "One load's Resource Timing, as WebPageTest draws it: the document's row (Navigation Timing) first, then each resource from its start, in its phases (blocked, DNS, TCP connect and TLS, or QUIC's handshake, waiting for the first byte, content download); a row whose phases the client did not expose (a cross-origin response without Timing-Allow-Origin, or the built-in loader, which times none) is drawn as not exposed, never as zero; the lines across mark DCL, FCP, LCP and the load event (PLT)." + lanesCaption
	if len(conns) > 0 {
		caption += connCaption + connCaptionRT + unplacedWords(unplaced)
	}
	if n, err := drawLosses(p, drawn, w, marks); err != nil {
		return Figure{}, err
	} else if n > 0 {
		caption += lossesCaption
	}
	if w.HARNote != "" {
		caption += " " + w.HARNote
	}
	return finishWaterfall(p, names, w, name, caption, marks, axes)
}

// legendRoom is how far a waterfall's time axis runs past its end, as a
// share of it: room for the legend at the top right.
const legendRoom = 0.25

// lanesCaption tells a waterfall's lanes.
const lanesCaption = " Under it, on the same time axis, the load's lanes where it was sampled: the browser's, the server's and quicbench's CPU in cores (a party in quicbench's process has no lane of its own), and the bytes the emulated link delivered each way in Mbit/s, each over the 100 ms between two samples (250 ms where /proc counts the CPU) from when quicbench let the browser navigate; lanes of one unit share a scale across the report's waterfalls."

// finishWaterfall labels a waterfall's rows (top to bottom), draws w's
// lanes under them and its load's marks across both, ends its time axis
// past the axes' end and renders it.
func finishWaterfall(p *plot.Plot, rows []string, w Waterfall, name, caption string, marks *tips, axes sharedAxes) (Figure, error) {
	t := w.Trial
	lanes := lanesOf(w.Samples, axes.end*(1+legendRoom))
	laneTicks, bottom, err := drawLanes(p, lanes, axes.lanes, marks)
	if err != nil {
		return Figure{}, err
	}
	if len(lanes) == 0 {
		bottom = -0.5
	}
	for _, m := range loadMarks(t) {
		line, err := plotter.NewLine(plotter.XYs{{X: m.ms, Y: bottom}, {X: m.ms, Y: float64(len(rows)) - 0.5}})
		if err != nil {
			return Figure{}, err
		}
		line.Color, line.Dashes = m.color, m.dashes
		p.Add(line)
		p.Legend.Add(fmt.Sprintf("%s %s ms", m.name, num(m.ms, 0)), line)
	}
	p.Legend.Top = true
	nameRows(p, rows, laneTicks)
	// The axis runs past the last request by legendRoom, where the
	// legend stands clear of the rows.
	p.X.Min, p.X.Max = 0, axes.end*(1+legendRoom)
	h := vg.Length(max(3, 0.17*(float64(len(rows))-bottom)+1.5)) * vg.Inch
	// The figure's own title stays short enough for its width (a long
	// network name cut it); the caption's title says it all.
	title := p.Title.Text
	p.Title.Text = fmt.Sprintf("Waterfall: %s, PLT %s ms (%d rows)", t.Protocol, num(valueOr(t.PLT), 1), len(rows))
	f, err := render(name, title, caption, p, 9*vg.Inch, h, marks)
	f.Trials = []string{t.ID}
	return f, err
}

// nameRows labels a waterfall's rows (top to bottom) and its lanes
// (ticks) on the y axis, as plot.NominalY labels rows alone.
func nameRows(p *plot.Plot, rows []string, lanes []plot.Tick) {
	ticks := slices.Clone(lanes)
	for i, r := range rows {
		ticks = append(ticks, plot.Tick{Value: float64(len(rows) - 1 - i), Label: r})
	}
	p.Y.Tick.Width, p.Y.Tick.Length, p.Y.Width = 0, 0, 0
	p.Y.Tick.Label.Font.Size = 8
	p.X.Padding = p.Y.Tick.Label.Height("0") / 2
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
}

// shortURL is u without its scheme, cut in the middle to maxRowLabel
// characters where longer (a query string of hundreds pushed the rows off
// the figure): its host and path's start, "…", its end.
func shortURL(u string) string {
	if _, rest, ok := strings.Cut(u, "://"); ok {
		u = rest
	}
	r := []rune(u)
	if len(r) <= maxRowLabel {
		return u
	}
	head := maxRowLabel * 2 / 3
	return string(r[:head]) + "…" + string(r[len(r)-(maxRowLabel-head-1):])
}

// maxRowLabel is the most characters of a waterfall row's URL.
const maxRowLabel = 64

// harPhase is one phase of a request as a HAR times it, with its colour.
type harPhase struct {
	name  string
	color color.Color
	get   func(har.Timings) float64
}

// harPhases are the HAR timing phases in order, with their colours; over
// QUIC, connect and TLS are one handshake (quicPhases).
var harPhases = []harPhase{
	{"blocked", color.RGBA{R: 0xbb, G: 0xbb, B: 0xbb, A: 0xff}, func(t har.Timings) float64 { return t.Blocked }},
	{"dns", color.RGBA{R: 0x1b, G: 0x9e, B: 0x77, A: 0xff}, func(t har.Timings) float64 { return t.DNS }},
	{"connect (TCP)", color.RGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff}, func(t har.Timings) float64 { return t.Connect - max(t.SSL, 0) }},
	{"TLS", color.RGBA{R: 0x75, G: 0x70, B: 0xb3, A: 0xff}, func(t har.Timings) float64 { return t.SSL }},
	{"send", color.RGBA{R: 0x66, G: 0xa6, B: 0x1e, A: 0xff}, func(t har.Timings) float64 { return t.Send }},
	{"wait", color.RGBA{R: 0xe6, G: 0xab, B: 0x02, A: 0xff}, func(t har.Timings) float64 { return t.Wait }},
	{"receive", color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, func(t har.Timings) float64 { return t.Receive }},
}

// quicPhases are a QUIC request's phases: its connection's handshake (UDP
// and TLS 1.3 in one) in a colour of its own.
var quicPhases = []harPhase{
	harPhases[0], harPhases[1],
	{"QUIC handshake", color.RGBA{R: 0xe7, G: 0x29, B: 0x8a, A: 0xff}, func(t har.Timings) float64 { return t.Connect }},
	harPhases[4], harPhases[5], harPhases[6],
}

// phasesOf are the phases of entry e: QUIC's for a response over HTTP/3.
func phasesOf(e har.Entry) []harPhase {
	if shortProtocol(e.Response.HTTPVersion) == "h3" {
		return quicPhases
	}
	return harPhases
}

// harStart is where a HAR's times count from: its page's start, or its
// first request's if that is earlier.
func harStart(h *har.HAR) (start time.Time) {
	start = h.Log.Entries[0].StartedDateTime
	for _, e := range h.Log.Entries {
		if e.StartedDateTime.Before(start) {
			start = e.StartedDateTime
		}
	}
	if len(h.Log.Pages) > 0 && h.Log.Pages[0].StartedDateTime.Before(start) {
		start = h.Log.Pages[0].StartedDateTime
	}
	return start
}

// documentFirst orders a HAR's entries by start, the page's document
// (the entry of the page's URL) first.
func documentFirst(h *har.HAR) []har.Entry {
	entries := slices.Clone(h.Log.Entries)
	slices.SortStableFunc(entries, func(a, b har.Entry) int { return a.StartedDateTime.Compare(b.StartedDateTime) })
	if len(h.Log.Pages) == 0 {
		return entries
	}
	if i := slices.IndexFunc(entries, func(e har.Entry) bool { return e.Request.URL == h.Log.Pages[0].Title }); i > 0 {
		doc := entries[i]
		copy(entries[1:i+1], entries[:i])
		entries[0] = doc
	}
	return entries
}

// connectionNumbers numbers the connections of entries in the order they
// are first used, from 1 (as WebPageTest's connection view): h1's six, h2's
// and h3's one each. An entry without a connection ID gets 0.
func connectionNumbers(entries []har.Entry) []int {
	seen := map[string]int{}
	out := make([]int, len(entries))
	for i, e := range entries {
		if e.Connection == "" || e.Connection == "0" {
			continue
		}
		if _, ok := seen[e.Connection]; !ok {
			seen[e.Connection] = len(seen) + 1
		}
		out[i] = seen[e.Connection]
	}
	return out
}

// harWaterfall draws one load from its HAR: a row per request from its
// start, the document first, split into its phases (blocked, DNS, TCP
// connect and TLS or QUIC's handshake, send, wait, receive), each row
// labelled with the connection it used (c1, c2, … in order of first use)
// and that connection's handshake when the server saw it resume or
// accept 0-RTT data.
func harWaterfall(w Waterfall, name string, axes sharedAxes) (Figure, error) {
	h, t := w.HAR, &w.Trial
	all := documentFirst(h)
	entries := drawnEntries(all)
	start := harStart(h)
	conns := connectionNumbers(entries)
	marks, mixed := handshakeMarks(entries, conns, w.Connections)
	p := newPlot(harTitle(t, len(all), len(entries), slices.Max(append(conns, 0)), mixed), "ms from navigation start", "")
	var rows []string
	var drawn []drawnRow
	legend := map[string]bool{}
	tipped := &tips{}
	view := harConnections(entries, conns, start)
	markKinds(view, w.Connections)
	offset := connRowsOffset(view)
	for i, e := range entries {
		y := float64(len(entries)-1-i) + offset
		x := axisMs(float64(e.StartedDateTime.Sub(start)) / 1e6)
		drawn = append(drawn, drawnRow{host: serverName(e.Request.URL), from: x, to: axisMs(x + axisMs(e.Time)), y: y})
		label := connectionLabel(conns[i], marks[conns[i]])
		tipped.add(x, y-0.3, axisMs(x+axisMs(e.Time)), y+0.3, harTip(e, x, label), "")
		if err := drawPhases(p, e, x, y, legend); err != nil {
			return Figure{}, err
		}
		rows = append(rows, label+shortURL(e.Request.URL))
	}
	lossWords := ""
	if n, err := drawLosses(p, drawn, w, tipped); err != nil {
		return Figure{}, err
	} else if n > 0 {
		lossWords = lossesCaption
	}
	connNames, err := connViewRows(p, view, tipped)
	if err != nil {
		return Figure{}, err
	}
	rows = append(rows, connNames...)
	if len(view) > 0 {
		lossWords = connCaption + lossWords
	}
	return finishWaterfall(p, rows, w, name, "One load's HAR, as WebPageTest draws it: each request from its start, the document first, in its phases (blocked, DNS, TCP connect and TLS, or QUIC's handshake, send, wait, receive); c1, c2, … name the connection each request used, in order of first use (h1 opens up to six to a host, h2 and h3 one), marked resumed or 0-RTT when the server saw its TLS session resumed, or its early data accepted (where a host's connections differ, the title counts them: which is which, the HAR cannot tell); the lines across mark DCL, FCP, LCP and the load event (PLT). Every protocol's waterfall of a setting shares one time axis."+lanesCaption+lossWords, tipped, axes)
}

// harTitle is the title of trial t's waterfall from its HAR: its setting
// and PLT, its requests (all, of which drawn are drawn), the connections
// they used and the handshakes of a host's connections where they differ
// (mixed).
func harTitle(t *results.Trial, all, drawn, connections int, mixed []string) string {
	noun := "connections"
	if connections == 1 {
		noun = "connection"
	}
	title := fmt.Sprintf("Waterfall of trial %s from its HAR: %s on %s, %s, PLT %s ms (%d requests%s over %d %s",
		t.ID, t.Protocol, t.Network, t.Page, num(valueOr(t.PLT), 1), all, rowsNote(drawn, all), connections, noun)
	if len(mixed) > 0 {
		title += "; the server saw " + strings.Join(mixed, ", ")
	}
	return title + ")"
}

// drawPhases draws entry e's phases on row y from x (ms), one after
// another, each in its colour, adding a phase's colour to the legend the
// first time it is drawn.
func drawPhases(p *plot.Plot, e har.Entry, x, y float64, legend map[string]bool) error {
	for _, ph := range phasesOf(e) {
		d := axisMs(ph.get(e.Timings))
		if d <= 0 {
			continue
		}
		seg, err := plotter.NewLine(plotter.XYs{{X: x, Y: y}, {X: x + d, Y: y}})
		if err != nil {
			return err
		}
		seg.Width, seg.Color = vg.Points(6), ph.color
		p.Add(seg)
		if !legend[ph.name] {
			legend[ph.name] = true
			p.Legend.Add(ph.name, swatch{ph.color})
		}
		x = axisMs(x + d)
	}
	return nil
}

// connectionLabel prefixes a row with its connection's number and its
// handshake's mark ("c3 ", "c1 0-RTT ").
func connectionLabel(n int, mark string) string {
	if n == 0 {
		return ""
	}
	if mark != "" {
		return fmt.Sprintf("c%d %s ", n, mark)
	}
	return fmt.Sprintf("c%d ", n)
}

// handshakeMarks marks the numbered connections of entries (numbers, from
// connectionNumbers) that the server saw resume a TLS session ("resumed")
// or accept 0-RTT data ("0-RTT"); a full handshake has no mark. The
// browser's connection IDs are not the server's, and HTTP/1.1 opens its
// connections to a host within a millisecond or two, so a host's
// connections are marked only when the server saw every one of them (with
// a request on it) alike; for a host whose connections differ, mixed says
// how many were resumed or sent 0-RTT data ("1 of 6 to a.test resumed").
func handshakeMarks(entries []har.Entry, numbers []int, server []results.Connection) (marks map[int]string, mixed []string) {
	byHost := map[string][]int{} // a host's connection numbers
	for i, e := range entries {
		host := serverName(e.Request.URL)
		if n := numbers[i]; n > 0 && !slices.Contains(byHost[host], n) {
			byHost[host] = append(byHost[host], n)
		}
	}
	kinds := map[string]map[string]int{} // by host, the server's connections by kind
	for _, c := range server {
		if c.Requests > 0 {
			if kinds[c.ServerName] == nil {
				kinds[c.ServerName] = map[string]int{}
			}
			kinds[c.ServerName][c.Handshake]++
		}
	}
	marks = map[int]string{}
	for _, host := range slices.Sorted(maps.Keys(byHost)) {
		seen := kinds[host]
		if len(seen) == 1 {
			for _, n := range byHost[host] {
				marks[n] = handshakeMark(slices.Collect(maps.Keys(seen))[0])
			}
			continue
		}
		total := 0
		for _, k := range seen {
			total += k
		}
		for _, kind := range []string{results.HandshakeResumed, results.Handshake0RTT} {
			if seen[kind] > 0 {
				mixed = append(mixed, fmt.Sprintf("%d of %d to %s %s", seen[kind], total, cmp.Or(host, "its address"), handshakeMark(kind)))
			}
		}
	}
	return marks, mixed
}

// handshakeMark is the waterfall's mark of a server's handshake kind.
func handshakeMark(kind string) string {
	switch kind {
	case results.HandshakeResumed:
		return "resumed"
	case results.Handshake0RTT:
		return "0-RTT"
	}
	return ""
}

// serverName is the name a client sends in TLS's SNI for url: its host,
// or nothing for an IP address (or a URL that does not parse).
func serverName(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || net.ParseIP(u.Hostname()) != nil {
		return ""
	}
	return u.Hostname()
}

// harTip tells one request of a HAR waterfall: its URL, status, protocol,
// connection (its label, as connectionLabel makes it), start and each
// phase that took time.
func harTip(e har.Entry, startMs float64, conn string) string {
	text := fmt.Sprintf("%s (%d, %s", e.Request.URL, e.Response.Status, e.Response.HTTPVersion)
	if conn != "" {
		text += ", connection " + strings.TrimSpace(conn)
	}
	text += fmt.Sprintf("): starts at %s ms", num(startMs, 1))
	for _, ph := range phasesOf(e) {
		if d := ph.get(e.Timings); d > 0 {
			text += fmt.Sprintf(", %s %s", ph.name, num(d, 1))
		}
	}
	return text + " ms"
}
