package report

import (
	"cmp"
	"fmt"
	"image/color"
	"maps"
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

// This file draws a waterfall's connection view, as WebPageTest's: one row
// per connection the load used, under the request rows on the same time
// axis, with its handshake and the requests it carried.

// viewConn is one connection of a connection view, times in ms from
// navigation start.
type viewConn struct {
	host     string // the URL's host (an address where the URL has one)
	protocol string // h1, h2 or h3, as its requests went
	// handshake is its connect start and end (TCP connect and TLS, or
	// QUIC's handshake), tlsAt where TLS began within it over TCP; from
	// == to when the load's timing shows none (a connection opened
	// before the load's timing, or data sent with 0-RTT).
	handshake span
	tlsAt     float64
	requests  []span // each request's start to its response's end
	kind      string // the server's handshake: full, resumed, 0rtt; "" unknown
}

// span is a time from from to to, ms.
type span struct{ from, to float64 }

// end is when c's last request ended.
func (c viewConn) end() float64 {
	end := c.handshake.to
	for _, r := range c.requests {
		end = max(end, r.to)
	}
	return end
}

// h1Protocol reports whether protocol (Resource Timing's nextHopProtocol
// or a HAR's httpVersion) is HTTP/1.x, whose connections carry one request
// at a time.
func h1Protocol(protocol string) bool {
	p := strings.ToLower(protocol)
	return strings.HasPrefix(p, "http/1") || p == "h1"
}

// shortProtocol is h1, h2 or h3 for a protocol as a browser names it.
func shortProtocol(protocol string) string {
	p := strings.ToLower(protocol)
	switch {
	case h1Protocol(p):
		return "h1"
	case p == "h2" || strings.HasPrefix(p, "http/2"):
		return "h2"
	case p == "h3" || strings.HasPrefix(p, "h3-") || strings.Contains(p, "http/3"):
		return "h3"
	}
	return p
}

// hostOf is raw's host, its address for an IP URL; "" when it does not parse.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// rtConnections infers the connections of a load from its Resource Timing
// (rs), which names none, in the order the requests went out: a request
// whose timing shows a connect phase opened a connection to its host;
// any other went over one already open, HTTP/1.1's the one that fell idle
// last before the request began (one request at a time), h2's and h3's
// the host's (one per host). Requests whose phases the browser did not
// expose join their host's connection where it has exactly one, and are
// counted in unplaced otherwise.
func rtConnections(rs []results.Resource) (conns []viewConn, unplaced int) {
	byHost := map[string][]int{} // indexes into conns
	for _, r := range byRequestStart(rs) {
		host := hostOf(r.URL)
		if r.RequestStartMs == nil {
			if open := byHost[host]; len(open) == 1 && !h1Protocol(r.Protocol) {
				conns[open[0]].requests = append(conns[open[0]].requests, span{r.StartMs, r.ResponseEndMs})
			} else {
				unplaced++
			}
			continue
		}
		i := connectionFor(conns, byHost[host], r)
		if i < 0 {
			i = len(conns)
			conns = append(conns, openedBy(r, host))
			byHost[host] = append(byHost[host], i)
		}
		conns[i].requests = append(conns[i].requests, span{*r.RequestStartMs, r.ResponseEndMs})
	}
	return conns, unplaced
}

// byRequestStart is rs in the order their requests went out (a request
// the browser queued starts its fetch long before), those whose request
// start is hidden by their fetch start.
func byRequestStart(rs []results.Resource) []results.Resource {
	out := slices.Clone(rs)
	at := func(r results.Resource) float64 {
		if r.RequestStartMs != nil {
			return *r.RequestStartMs
		}
		return r.StartMs
	}
	slices.SortStableFunc(out, func(a, b results.Resource) int { return cmp.Compare(at(a), at(b)) })
	return out
}

// connectionFor is the index of the open connection (of candidates) that
// r went over, or −1 when r opened one: its timing shows a connect phase,
// or no candidate was free (HTTP/1.1's all busy) or open.
func connectionFor(conns []viewConn, candidates []int, r results.Resource) int {
	if handshakeOf(r).opened() {
		return -1
	}
	if !h1Protocol(r.Protocol) {
		if len(candidates) == 0 {
			return -1
		}
		return candidates[len(candidates)-1]
	}
	best, idleSince := -1, -1.0
	for _, i := range candidates {
		busy := conns[i].end()
		if busy <= *r.RequestStartMs+idleSlackMs && busy > idleSince {
			best, idleSince = i, busy
		}
	}
	return best
}

// idleSlackMs is how far before a connection's last response ended an
// HTTP/1.1 request may start on it: Resource Timing's times round.
const idleSlackMs = 0.5

// openedBy is the connection request r opened to host, with r's
// handshake; none shown (at r's request start) where r's timing has none.
func openedBy(r results.Resource, host string) viewConn {
	hs := handshakeOf(r)
	if !hs.opened() {
		at := *r.RequestStartMs
		hs = handshake{at, at, at}
	}
	return viewConn{host: host, protocol: shortProtocol(r.Protocol), handshake: span{hs.from, hs.to}, tlsAt: hs.tlsAt}
}

// harConnections are the connections of a HAR's entries (numbers from
// connectionNumbers, 0 for none: not drawn), each with its first entry's
// connect phase as its handshake; start is the HAR's time zero.
func harConnections(entries []har.Entry, numbers []int, start time.Time) []viewConn {
	byNumber := map[int]*viewConn{}
	for i, e := range entries {
		n := numbers[i]
		if n == 0 {
			continue
		}
		x := float64(e.StartedDateTime.Sub(start)) / 1e6
		c := byNumber[n]
		if c == nil {
			connect := x + max(e.Timings.Blocked, 0) + max(e.Timings.DNS, 0)
			hs := max(e.Timings.Connect, 0)
			c = &viewConn{host: hostOf(e.Request.URL), protocol: shortProtocol(e.Response.HTTPVersion), handshake: span{connect, connect + hs}}
			c.tlsAt = c.handshake.to - max(e.Timings.SSL, 0)
			if c.protocol == "h3" {
				c.tlsAt = c.handshake.to
			}
			byNumber[n] = c
		}
		c.requests = append(c.requests, span{axisMs(x), axisMs(x + axisMs(e.Time))})
	}
	out := make([]viewConn, 0, len(byNumber))
	for _, n := range slices.Sorted(maps.Keys(byNumber)) {
		out = append(out, *byNumber[n])
	}
	return out
}

// markKinds sets the server's handshake kind on conns: a host's
// connections take the kind the server saw for every connection to it
// (with a request on it); where the server saw them differ, each of the
// host's rows says how many of each ("4 full, 1 resumed"): the browser's
// connections cannot be matched to the server's one by one.
func markKinds(conns []viewConn, server []results.Connection) {
	kinds := map[string]map[string]int{}
	for _, c := range server {
		if c.Requests > 0 {
			if kinds[c.ServerName] == nil {
				kinds[c.ServerName] = map[string]int{}
			}
			kinds[c.ServerName][c.Handshake]++
		}
	}
	for i := range conns {
		seen := kinds[conns[i].host]
		var parts []string
		for _, kind := range slices.Sorted(maps.Keys(seen)) {
			parts = append(parts, fmt.Sprintf("%d %s", seen[kind], cmp.Or(handshakeMark(kind), kind)))
		}
		switch len(seen) {
		case 0:
		case 1:
			conns[i].kind = slices.Collect(maps.Keys(seen))[0]
		default:
			conns[i].kind = "of the server's: " + strings.Join(parts, ", ")
		}
	}
}

// connLabel is a connection row's label: "c2 h1 a.test full, 6 requests".
func connLabel(n int, c viewConn) string {
	kind := cmp.Or(handshakeMark(c.kind), c.kind)
	if kind == "" {
		kind = "handshake unknown"
	}
	requests := "requests"
	if len(c.requests) == 1 {
		requests = "request"
	}
	return fmt.Sprintf("c%d %s %s %s, %d %s", n, c.protocol, cmp.Or(c.host, "?"), kind, len(c.requests), requests)
}

// receiveAlternate is every other request's shade on a connection row.
var receiveAlternate = color.RGBA{R: 0x6b, G: 0xae, B: 0xd6, A: 0xff}

// connAlive is the colour of a connection open between its requests.
var connAlive = color.RGBA{R: 0xcc, G: 0xcc, B: 0xcc, A: 0xff}

// connCaption tells a waterfall's connection view.
const connCaption = " Under the requests, the connection view: one row per connection (HTTP/1.1 opens up to six to a host, h2 and h3 one), labelled with its protocol, host, the handshake the server saw (full, resumed or 0-RTT; where the server saw a host's connections differ, how many of each, since the browser's connections cannot be matched to the server's one by one) and the requests it carried, drawn with its handshake in the phases' colours, a thin line while it was open, and each request it carried from its request to its response's end in the receive colour (every other one lighter)."

// connCaptionRT adds how a Resource Timing waterfall found its
// connections.
const connCaptionRT = " Resource Timing names no connection: a request whose timing shows a connect phase opened one, any other went over its host's (HTTP/1.1's: the one that fell idle last before it)."

// drawConnections draws conns as rows from y downwards (y, y−1, …), with
// tips, and returns their labels top to bottom.
func drawConnections(p *plot.Plot, conns []viewConn, y float64, marks *tips) ([]string, error) {
	var labels []string
	for i, c := range conns {
		row := y - float64(i)
		label := connLabel(i+1, c)
		alive, err := plotter.NewLine(plotter.XYs{{X: axisMs(c.handshake.from), Y: row}, {X: axisMs(c.end()), Y: row}})
		if err != nil {
			return nil, err
		}
		alive.Color, alive.Width = connAlive, vg.Points(1)
		p.Add(alive)
		if err := drawConnSegments(p, c, row); err != nil {
			return nil, err
		}
		marks.add(axisMs(c.handshake.from), row-0.3, axisMs(c.end()), row+0.3, fmt.Sprintf("%s: handshake %s to %s ms, last response at %s ms", label, num(c.handshake.from, 1), num(c.handshake.to, 1), num(c.end(), 1)), "")
		labels = append(labels, label)
	}
	return labels, nil
}

// segment is a stretch of a connection row in a colour and width.
type segment struct {
	s     span
	color color.Color
	width vg.Length
}

// drawConnSegments draws c's handshake phases and its requests on row.
func drawConnSegments(p *plot.Plot, c viewConn, row float64) error {
	connect, tls := handshakePhases(c.protocol)
	segments := []segment{{span{c.handshake.from, c.tlsAt}, connect.color, 6}, {span{c.tlsAt, c.handshake.to}, tls.color, 6}}
	for i, r := range c.requests { // alternate shades, as back-to-back requests would merge
		shade := harPhases[6].color
		if i%2 == 1 {
			shade = receiveAlternate
		}
		segments = append(segments, segment{r, shade, 4})
	}
	for _, s := range segments {
		if !(s.s.to > s.s.from) {
			continue
		}
		seg, err := plotter.NewLine(plotter.XYs{{X: axisMs(s.s.from), Y: row}, {X: axisMs(s.s.to), Y: row}})
		if err != nil {
			return err
		}
		seg.Color, seg.Width = s.color, vg.Points(float64(s.width))
		p.Add(seg)
	}
	return nil
}

// connViewRows draws conns under a waterfall's request rows (their rows
// from len(conns)−1 down to 0, a heading row above them) and returns the
// heading and their labels, to follow the request rows' names; none
// without connections.
func connViewRows(p *plot.Plot, conns []viewConn, marks *tips) ([]string, error) {
	if len(conns) == 0 {
		return nil, nil
	}
	labels, err := drawConnections(p, conns, float64(len(conns)-1), marks)
	if err != nil {
		return nil, err
	}
	heading := fmt.Sprintf("— %d connections —", len(conns))
	if len(conns) == 1 {
		heading = "— 1 connection —"
	}
	return append([]string{heading}, labels...), nil
}

// connRowsOffset is how far a waterfall's request rows sit above 0 to
// leave room for conns' view: its rows and a heading; 0 without any.
func connRowsOffset(conns []viewConn) float64 {
	if len(conns) == 0 {
		return 0
	}
	return float64(len(conns) + 1)
}

// unplacedWords says how many requests a Resource Timing connection view
// could not place on a connection; "" for none.
func unplacedWords(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" %d requests whose timing the browser did not expose (to a host of several connections) are on no connection row.", n)
}
