package experiment

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/breakdown"
	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/netconf"
	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/spec"
)

// newRecord is trial t's row before it runs: its levels, their resolved
// values and its seeds. page is the site built for it (nil: size unknown).
func newRecord(s *spec.Spec, t plan.Trial, page *site.Site) (results.Trial, error) {
	c := t.Cell
	levels, err := results.LevelsOf(c.Levels)
	if err != nil {
		return results.Trial{}, fmt.Errorf("trial %s: %w", t.ID, err)
	}
	quic := c.Levels.QUIC()
	rec := results.Trial{ID: t.ID, Seq: int64(t.Seq), Rep: int64(t.Rep), Levels: levels,
		QUICValues:    results.QUICValues{QUICServer: quic.Server(), QUICCC: quic.CC()},
		NetworkValues: networkValues(c.Network),
		PageValues:    results.PageValues{PageKind: c.Page.Kind, PageObjects: int64(c.Page.Objects), PageObjectBytes: c.Page.ObjectBytes},
		Seeds:         results.Seeds{Seed: int64(s.Seed), UpSeed: int64(c.UpSeed), DownSeed: int64(c.DownSeed), PageSeed: int64(c.PageSeed)},
	}
	if s.Pairing {
		up, down := plan.PairSeeds(c.Setup, t.Rep)
		rec.UpSeed, rec.DownSeed, rec.Paired = int64(up), int64(down), true
	}
	if page != nil {
		rec.PageBytes = page.Bytes()
		if c.Page.OwnOrigins() {
			rec.PageObjects = int64(len(page.Subresources) + len(page.Late))
		}
		if !c.Levels.Client().Capabilities().Renders {
			rec.SkippedRequests = int64(len(page.Scripted) + len(page.Late))
		}
		rec.Bound = boundOf(s, c, page)
	}
	return rec, nil
}

// handshakeRTTs is the round trips before a connection's first request:
// TCP and TLS 1.3 take two (resumption saves none), QUIC one, and a repeat
// visit's QUIC none (0-RTT).
func handshakeRTTs(c plan.Cell) int {
	switch {
	case c.Levels.Protocol() != factor.H3:
		return 2
	case c.Levels.Visit() == factor.RepeatVisit:
		return 0
	}
	return 1
}

// boundOf is the physical lower bound of a load of cell c of page: what
// its client must fetch, over the network's RTT to each origin (its path
// added) and its downlink rate. A repeat visit with the cache on has none.
func boundOf(s *spec.Spec, c plan.Cell, page *site.Site) results.Bound {
	if c.Levels.Visit() == factor.RepeatVisit && c.Levels.Cache().On() {
		return results.Bound{}
	}
	required := page.Subresources
	if !c.Levels.Client().Capabilities().Renders {
		required = page.WithoutScripts()
	}
	extra := map[string]time.Duration{}
	for _, p := range c.Network.Paths {
		if p.Server >= 1 && p.Server <= len(page.Origins) {
			extra[page.Origins[p.Server-1].Host] = p.RTT
		}
	}
	hs := handshakeRTTs(c)
	b := page.LowerBound(site.BoundInput{RTT: func(host string) time.Duration { return c.Network.RTT + extra[host] },
		Handshake: hs, RateBps: c.Network.Down.MeanRate(), Required: required})
	return results.Bound{BoundMs: results.F(b.Ms), BoundChainMs: results.F(b.ChainMs), BoundChainRTTs: results.F(b.ChainRTTs),
		BoundTransferMs: results.F(b.TransferMs), BoundHandshakeRTTs: int64(hs)}
}

// networkValues are n's resolved values as columns.
func networkValues(n *netconf.Network) results.NetworkValues {
	v := results.NetworkValues{RTTMs: ms(n.RTT.Seconds()), JitterMs: ms(n.Up.Jitter.Seconds()), DropHead: n.Up.DropHead, UDP: n.UDP.String()}
	d := &v.DirectionValues
	d.LossModelUp, d.LossUpPct, d.GEPUpPct, d.GERUpPct, d.GELossBadUpPct, d.GELossGoodUpPct = lossValues(n.Up)
	d.LossModelDown, d.LossDownPct, d.GEPDownPct, d.GERDownPct, d.GELossBadDownPct, d.GELossGoodDownPct = lossValues(n.Down)
	d.RateUpBps, d.TraceUp, d.TraceUpMeanBps = rateValues(n.Up)
	d.RateDownBps, d.TraceDown, d.TraceDownMeanBps = rateValues(n.Down)
	d.QueueUpBytes, d.QueueUpPackets = n.Up.QueueBytes, int64(n.Up.QueuePackets)
	d.QueueDownBytes, d.QueueDownPackets = n.Down.QueueBytes, int64(n.Down.QueuePackets)
	for _, p := range n.Paths {
		v.Paths = append(v.Paths, results.PathValues{Origin: int64(p.Server), RTTMs: ms(p.RTT.Seconds()), LossPct: 100 * p.Loss})
	}
	return v
}

func ms(seconds float64) float64 { return seconds * 1000 }

// lossValues are a direction's loss model, mean loss in percent, and the
// Gilbert-Elliott parameters in percent (nil for other models).
func lossValues(c link.Config) (model string, meanPct float64, p, r, lossBad, lossGood *float64) {
	pct := func(f float64) *float64 { return results.F(100 * f) }
	switch g := c.GilbertElliott; {
	case g != nil:
		return "gilbert-elliott", 100 * g.StationaryLoss(), pct(g.P), pct(g.R), pct(g.LossBad), pct(g.LossGood)
	case c.Loss > 0:
		return "bernoulli", 100 * c.Loss, nil, nil, nil, nil
	}
	return "none", 0, nil, nil, nil, nil
}

// rateValues are a direction's constant rate, trace name and trace mean.
func rateValues(c link.Config) (rate int64, trace string, traceMean *float64) {
	if c.Trace != nil {
		return 0, c.Trace.Name, results.F(c.Trace.MeanRate())
	}
	return c.RateBitsPerSecond, "", nil
}

// fillOutcome copies a load's outcome, metrics, link counters, stalls and
// parts into rec, and returns its losses.
func fillOutcome(rec *results.Trial, m Measured, artifacts []string) []results.Loss {
	rec.Status, rec.Error = results.StatusOK, ""
	if !m.OK() {
		rec.Status, rec.Error = results.StatusFailed, m.Failure
	}
	rec.DocumentProtocol, rec.LandedURL = m.DocumentProtocol, m.Landed
	rec.ProtocolUse = protocolUseOf(m.Use)
	rec.DNSQueries = m.DNSQueries
	if m.OK() && rec.BoundMs != nil && m.PLTMs > 0 {
		rec.ExcessMs = results.F(m.PLTMs - *rec.BoundMs)
	}
	rec.Wall = results.F(m.WallMs)
	rec.ServerRequests = int64(m.ServerRequests.Total())
	rec.UnmatchedRequests = m.Replay.Unmatched
	c := m.Completeness
	rec.ReplayValues = results.ReplayValues{ReplayExact: m.Replay.Exact, ReplayFuzzy: m.Replay.Fuzzy, ReplayVariant: m.Replay.Variant,
		UnmatchedURLs: m.Replay.UnmatchedRequests, UnmatchedCauses: c.Causes, VariantURLs: m.Replay.Variants, BrowserOwnUnmatched: c.BrowserOwn, HeldNavigations: c.Held, SteadyUnmatched: c.Steady, SiblingUnmatched: c.Sibling,
		ServedBytes: m.Replay.BodyBytes, BrokenImagesRecorded: c.BrokenRecorded, BrokenImagesUnserved: c.BrokenUnserved,
		BrokenImageURLs: c.BrokenURLs, BrokenImageCauses: c.BrokenCauses}
	rec.LoadRequests, rec.LoadBytes, rec.LiveExcluded = c.LoadRequests, c.LoadBytes, c.LiveExcluded
	rec.Connections = int64(len(m.Connections))
	rec.Handshakes = handshakeList(m.Connections)
	rec.TCPCongestion = tcpCongestion(m.Connections)
	rec.Artifacts = strings.Join(artifacts, ",")
	rec.CPU = m.CPU
	rec.Link = results.Link{
		UpPackets: m.Up.Packets, UpLost: m.Up.DroppedLoss, UpQueueDrops: m.Up.DroppedQueue, UpPathLost: m.Up.DroppedPath, UpPeakQueueBytes: m.Up.PeakQueueBytes,
		DownPackets: m.Down.Packets, DownLost: m.Down.DroppedLoss, DownQueueDrops: m.Down.DroppedQueue, DownPathLost: m.Down.DroppedPath, DownPeakQueueBytes: m.Down.PeakQueueBytes,
		UpUDPDropped: m.Up.DroppedUDP, DownUDPDropped: m.Down.DroppedUDP,
	}
	var waits []breakdown.ConnSpan
	rec.Stalls, waits = stallsOf(rec, m)
	losses := lossRows(m.Packets, waits)
	if !m.OK() {
		return losses
	}
	rec.Parts = partsOf(m, breakdown.Spans(waits), rec.LossWaitMs != nil, servingRecorded(rec))
	rec.PLT, rec.OnLoad, rec.DCL = results.F(m.PLTMs), results.F(m.OnLoadMs), results.F(m.DCLMs)
	if m.TTFBMeasured() {
		rec.TTFB = results.F(m.TTFBMs)
	}
	rec.BrowserStart = results.F(m.BrowserStartMs)
	if m.Visit.Loads() > 1 {
		rec.FirstVisitPLT = results.F(m.FirstVisitPLTMs)
	}
	rec.FCP, rec.LCP = positive(m.FCPMs), positive(m.LCPMs)
	rec.VisualMetrics = visualValues(m.Result)
	return losses
}

// protocolUseOf is u as its columns.
func protocolUseOf(u client.ProtocolUse) results.ProtocolUse {
	out := results.ProtocolUse{H3Requests: int64(u.H3Requests), TCPRequests: int64(u.TCPRequests),
		H3Bytes: u.H3Bytes, TCPBytes: u.TCPBytes, TCPAfterOffer: int64(u.TCPAfterOffer)}
	if u.FirstH3Ms >= 0 && u.H3Requests > 0 {
		out.FirstH3 = results.F(u.FirstH3Ms)
	}
	return out
}

// positive is v, or nil for 0 (not reported).
func positive(v float64) *float64 {
	if v <= 0 {
		return nil
	}
	return results.F(v)
}

// visualValues are a load's viewport, frames and visual metrics as
// columns.
func visualValues(r client.Result) results.VisualMetrics {
	v := results.VisualMetrics{Frames: int64(len(r.Frames)), ViewportWidth: int64(r.ViewportWidth), ViewportHeight: int64(r.ViewportHeight),
		ViewportScale: r.ViewportScale, ViewportMobile: r.ViewportMobile}
	m := r.Visual
	if m == nil {
		return v
	}
	at := func(d time.Duration) *float64 {
		if d < 0 {
			return nil // never reached
		}
		return results.F(float64(d) / float64(time.Millisecond))
	}
	v.FVC, v.LVC, v.SpeedIndex = at(m.FirstVisualChange), at(m.LastVisualChange), results.F(float64(m.SpeedIndex))
	v.VC85, v.VC95, v.VC99 = at(m.VisualComplete85), at(m.VisualComplete95), at(m.VisualComplete99)
	v.VisualCompute = results.F(r.VisualComputeMs)
	return v
}

// resourcesOf is the load's Resource Timing entries as rows.
func resourcesOf(m Measured) []results.Resource {
	out := make([]results.Resource, 0, len(m.Resources)+1)
	if d := m.Document; d.URL != "" && d.ResponseEndMs > 0 {
		r := resourceOf(d, true)
		out = append(out, r)
	}
	for _, rt := range m.Resources {
		out = append(out, resourceOf(rt, false))
	}
	return out
}

// resourceOf is a Resource Timing entry (or the document's Navigation
// Timing entry) as a row: a phase the browser did not expose (0) is null.
// The document's phases may start at 0, navigation start.
func resourceOf(rt client.ResourceTiming, navigation bool) results.Resource {
	known := func(v float64) *float64 {
		if v <= 0 && !(navigation && v == 0 && rt.RequestStartMs > 0) {
			return nil
		}
		return results.F(v)
	}
	p := rt.Phases
	return results.Resource{URL: rt.URL, Protocol: rt.Protocol, Navigation: navigation, StartMs: rt.StartMs,
		DNSStartMs: known(p.DNSStartMs), ConnectStartMs: known(p.ConnectStartMs), ConnectEndMs: known(p.ConnectEndMs),
		TLSStartMs: known(p.TLSStartMs), RequestStartMs: known(p.RequestStartMs), ResponseStartMs: known(p.ResponseStartMs),
		ResponseEndMs: rt.ResponseEndMs, TransferBytes: rt.TransferBytes, Status: int64(rt.Status)}
}

// connectionsOf is the servers' connection records as rows.
func connectionsOf(m Measured) []results.Connection {
	out := make([]results.Connection, 0, len(m.Connections))
	for i, c := range m.Connections {
		out = append(out, results.Connection{Conn: int64(i + 1), Transport: c.Transport, ALPN: c.ALPN, ServerName: c.ServerName,
			Remote: c.Remote, Handshake: c.Handshake, Requests: int64(c.Requests), OpenedAt: c.OpenedAt, Closed: c.Closed,
			BytesSent: int64(c.BytesSent), BytesReceived: int64(c.BytesReceived), Congestion: c.Congestion,
			SRTTMs: c.SmoothedRTTMs, CwndBytes: int64(c.CwndBytes), Retransmits: int64(c.Retransmits)})
	}
	return out
}

// handshakeList is "kind:count" pairs in a fixed order, such as
// "0rtt:1" or "resumed:3,full:3".
func handshakeList(recs []server.ConnRecord) string {
	counts := server.HandshakeCounts(recs)
	var parts []string
	for _, kind := range server.HandshakeKinds() {
		if n := counts[kind]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s:%d", kind, n))
		}
	}
	return strings.Join(parts, ",")
}

// stallsOf reads the stalls of rec's measured visit, and the spans in
// which some connection's data stood still (nil where none are known):
// over TCP from its packets, with half the round trip the link adds as
// its one-way delay; over QUIC (whose packets are encrypted) from the loss
// records of quic-go's connections, and for the other QUIC servers, which
// record none, estimated from the packets (breakdown.QUICLossWaits).
func stallsOf(rec *results.Trial, m Measured) (results.Stalls, []breakdown.ConnSpan) {
	oneWay := time.Duration(rec.RTTMs / 2 * float64(time.Millisecond))
	if rec.Protocol == factor.H3 && rec.QUIC.Server() == factor.QUICGo {
		return quicStalls(m.Connections, m.PacketsStart, oneWay)
	}
	if rec.Protocol == factor.H3 {
		return wireQUICStalls(m.Packets, 2*oneWay, oneWay)
	}
	s := breakdown.Stalls(m.Packets, oneWay)
	return results.Stalls{TCPLosses: int64(s.Losses), TCPRepaired: int64(s.Repaired), HeldBytes: s.HeldBytes,
		LossWaitMs: results.F(ms(s.LossWait.Seconds())), HeldMs: results.F(ms(s.HeldTime.Seconds()))}, s.Waits
}

// quicStalls is the time the streams of the QUIC connections waited for
// lost data to be sent again, connections together (overlaps counted
// once), and the waits on the packet log's clock, which starts at start:
// each from the lost packet's sending to the resending, a one-way trip
// later, when the client would have had the data and had it; none for a
// QUIC server other than quic-go, which records none.
func quicStalls(conns []server.ConnRecord, start time.Time, oneWay time.Duration) (results.Stalls, []breakdown.ConnSpan) {
	var ws []breakdown.Window
	var spans []breakdown.ConnSpan
	for _, c := range conns {
		if c.Transport != "quic" {
			continue
		}
		client, _ := netip.ParseAddrPort(c.Remote) // the zero address if it is none
		for _, w := range c.Stalls {
			ws = append(ws, breakdown.Window{From: w.From, To: w.To})
			spans = append(spans, breakdown.ConnSpan{Conn: breakdown.Conn{Client: client, UDP: true},
				Span: breakdown.Span{From: w.From.Sub(start) + oneWay, To: w.To.Sub(start) + oneWay}})
		}
	}
	return results.Stalls{LossWaitMs: results.F(ms(breakdown.WaitOf(ws).Seconds()))}, spans
}

// wireQUICStalls is the time QUIC connections' data stood still for lost
// packets, estimated from a load's packets over a link of round trip rtt
// and one-way delay oneWay (breakdown.QUICLossWaits), connections together
// (overlaps counted once), and the waits; none known without a packet log.
func wireQUICStalls(packets []breakdown.Packet, rtt, oneWay time.Duration) (results.Stalls, []breakdown.ConnSpan) {
	if len(packets) == 0 {
		return results.Stalls{}, nil
	}
	waits := breakdown.QUICLossWaits(packets, rtt, oneWay)
	return results.Stalls{LossWaitMs: results.F(ms(breakdown.Covered(breakdown.Spans(waits)).Seconds()))}, waits
}

// partsOf takes the measured visit of a load that completed apart
// (breakdown.Apart) over its PLT, given its loss waits, if they are known
// (else part_loss_ms is null), and whether its server records the time it
// works on requests (else part_server_ms is null, and that time counts as
// the client's); none without a packet log.
func partsOf(m Measured, lossWaits []breakdown.Span, lossKnown, servingKnown bool) results.Parts {
	if len(m.Packets) == 0 {
		return results.Parts{}
	}
	var serving []breakdown.Span
	for _, c := range m.Connections {
		for _, w := range c.Serving {
			serving = append(serving, breakdown.Span{From: w.From.Sub(m.PacketsStart), To: w.To.Sub(m.PacketsStart)})
		}
	}
	plt := time.Duration(m.PLTMs * float64(time.Millisecond))
	p := breakdown.Apart(m.Packets, plt, lossWaits, serving)
	out := results.Parts{PartLinkMs: msOf(p.Link), PartHandshakeMs: msOf(p.Handshake),
		PartRoundTripsMs: msOf(p.RoundTrips), PartClientMs: msOf(p.Client)}
	if lossKnown {
		out.PartLossMs = msOf(p.Loss)
	}
	if servingKnown {
		out.PartServerMs = msOf(p.Server)
	}
	return out
}

// servingRecorded reports whether the server of rec's protocol records
// the time it works on requests: the Go origin (h1, h2, and h3 from
// quic-go), quinn and quiche do; nginx and Caddy log a request's whole
// time, its sending included, not when its first byte left.
func servingRecorded(rec *results.Trial) bool {
	if rec.Protocol == factor.H3 {
		return rec.QUIC.Server() != factor.QUICCaddy
	}
	return rec.Server == factor.ServerGo
}

// lossRows are the drops among a measured visit's packets and its
// connections' waits for lost data, as the losses table keeps them.
func lossRows(packets []breakdown.Packet, waits []breakdown.ConnSpan) []results.Loss {
	var out []results.Loss
	for _, p := range packets {
		if p.Dropped {
			at := ms(p.At.Seconds())
			out = append(out, results.Loss{Kind: results.LossDrop, Client: p.Conn.Client.String(), Server: p.Conn.Server.String(),
				Transport: transportOf(p.Conn), Down: p.Down, Bytes: int64(p.Payload), FromMs: at, ToMs: at})
		}
	}
	for _, w := range waits {
		l := results.Loss{Kind: results.LossWait, Transport: transportOf(w.Conn), Down: true, FromMs: ms(w.From.Seconds()), ToMs: ms(w.To.Seconds())}
		if w.Conn.Client.IsValid() {
			l.Client = w.Conn.Client.String()
		}
		if w.Conn.Server.IsValid() {
			l.Server = w.Conn.Server.String()
		}
		out = append(out, l)
	}
	return out
}

// transportOf names c's transport as the losses table does.
func transportOf(c breakdown.Conn) string {
	if c.UDP {
		return "udp"
	}
	return "tcp"
}

// msOf is d in ms, for a column.
func msOf(d time.Duration) *float64 { return results.F(ms(d.Seconds())) }
