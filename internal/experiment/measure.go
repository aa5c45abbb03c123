package experiment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/quicbench/quicbench/internal/breakdown"
	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/testbed"
)

// Measured is one verified or failed page load with the servers' and the
// emulator's view of it.
type Measured struct {
	client.Result
	ServerRequests server.Counts
	// Replay is how the servers matched the measured load's requests
	// against the site (404s for those it did not have).
	Replay server.Replay
	// Completeness is how the load's unmatched requests and broken
	// images divide (replayCheck).
	Completeness completeness
	Connections  []server.ConnRecord
	// Up and Down are what the emulator did during the load.
	Up, Down emulator.Stats
	// CPU is what the load's parties used over its measured visit.
	CPU results.CPU
	// Samples are the lanes read during its measured visit: the parties'
	// CPU and the link's bytes every 100 ms (250 by /proc; none when off).
	Samples []results.Sample
	// Landed is the document the tab ended on when it was not the page
	// (client.PageMetrics.Landed); "" when it was.
	Landed string
	// Packets are the headers of the packets the link carried and
	// dropped during the measured visit, for its breakdown, on a clock
	// that starts at PacketsStart (just before navigation).
	Packets      []breakdown.Packet
	PacketsStart time.Time
	// Use is what the measured visit's requests used, as the browser
	// reported them.
	Use client.ProtocolUse
	// DNSQueries is how many questions the testbed's resolver answered
	// during the measured visit.
	DNSQueries int64
}

// primeIfNeeded primes the replay check with an unmeasured load of trial
// t if a recorded page needs it (replayCheck), before the attempt's
// capture starts. An error means ctx was canceled.
func primeIfNeeded(ctx context.Context, b *bed, t plan.Trial) error {
	if b.replay.needsPriming() {
		return prime(ctx, b, t)
	}
	return nil
}

// quieting is a quiesce running beside the next load's browser start.
type quieting struct {
	done chan error
	once sync.Once
	err  error
}

// startQuiesce starts quiesce in the background: the drain of the
// previous load's connections overlaps the next browser's start.
func startQuiesce(ctx context.Context, b *bed, rtt time.Duration, log *slog.Logger) *quieting {
	q := &quieting{done: make(chan error, 1)}
	go func() { q.done <- quiesce(ctx, b, rtt, log) }()
	return q
}

// wait waits for the quiesce to end and returns its error, every time.
func (q *quieting) wait() error {
	q.once.Do(func() { q.err = <-q.done })
	return q.err
}

// quiesce ends what earlier loads left on the network: the servers close
// the connections of the previous load's browser and the link drains (the
// last packets of those connections, the kernel's answers to them) until
// nothing has passed for linkQuiet. So a load's capture, packet counts and
// servers' counts hold nothing of an earlier load. A link that stays busy
// for quiesceLimit(rtt) is logged and the load goes ahead; its checks then
// tell what reached it.
func quiesce(ctx context.Context, b *bed, rtt time.Duration, log *slog.Logger) error {
	if err := b.Testbed.CloseConnections(); err != nil {
		return err
	}
	return awaitQuiet(ctx, b, quiesceLimit(rtt), log)
}

// awaitQuiet waits up to limit for the link to go idle (linkQuiet), and
// logs a link that did not.
func awaitQuiet(ctx context.Context, b *bed, limit time.Duration, log *slog.Logger) error {
	waitCtx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	if !b.Testbed.Emulator.AwaitIdle(waitCtx, linkQuiet) {
		if err := ctx.Err(); err != nil {
			return err
		}
		log.Warn("the link did not go quiet before a load: something of an earlier load is still talking",
			"waited", limit, "packets_held", b.Testbed.Emulator.Waiting())
	}
	return nil
}

// linkQuiet is how long no packet may pass for the link to count as idle:
// ample for a kernel to answer a delivered packet (a reset, an ICMP
// error) and the answer to enter the link.
const linkQuiet = 20 * time.Millisecond

// quiesceLimit is how long quiesce waits for the link to go idle: ten
// round trips, at least 2 s.
func quiesceLimit(rtt time.Duration) time.Duration { return max(10*rtt, 2*time.Second) }

// measureLoad loads page once as cell c says with browser (a fresh browser
// per load for Chromium, fresh connections for the built-in loader): a
// first visit, or a repeat visit whose second load is measured, with the
// servers' responses cacheable or not, its frames captured or not. It checks the servers' request
// counts against the protocol, reads their connection records while the
// browser still holds its connections, and counts the emulator's packets.
// ready runs once the client is ready, before the load's first request
// (the network quiet, the capture started); the servers' and the
// emulator's counts start after it. An error means ctx was canceled or
// the servers failed; a failed load is a Result with Failure set.
// A server that exits during the load (killed, crashed) stops the load at
// once; the load is then a failed one that names the server and how it
// exited, and the runner starts the server again for the next attempt.
func measureLoad(ctx context.Context, b *bed, t plan.Trial, files loadFiles, ready func(context.Context) error) (Measured, error) {
	m, err := watchedLoad(ctx, b, t, files, ready)
	if reason := b.Testbed.Exited(); reason != "" && ctx.Err() == nil {
		m.Result.Failure, err = reason, nil
	}
	return m, err
}

// prime loads a recorded page once, unmeasured, as trial t would, so
// that the replay check knows what the recording lacks before the first
// measured load (replayCheck). A server that exits during it fails the
// measured load that follows.
func prime(ctx context.Context, b *bed, t plan.Trial) error {
	m, err := watchedLoad(ctx, b, t, loadFiles{}, nil)
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		b.replay.learn(nil)
	default:
		b.replay.learn(&m)
	}
	return nil
}

// watchedLoad is load, stopped at once when a server exits.
func watchedLoad(ctx context.Context, b *bed, t plan.Trial, files loadFiles, ready func(context.Context) error) (Measured, error) {
	loadCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := b.OnExit(func(string) { cancel() })
	defer stop()
	return load(loadCtx, b, t, files, ready)
}

// window is what a load counts from: the servers' request counts and the
// emulator's counters when the load's first request could start.
type window struct {
	opened     bool
	before     server.Counts
	dns0       int64 // the resolver's queries when the measured visit began
	up0, down0 emulator.Stats
	tb         *testbed.Testbed
	reseed     func()
	packets    *emulator.PacketLog
}

// logPackets starts a new packet log for the visit to be measured.
func (w *window) logPackets() {
	w.packets = emulator.NewPacketLog(time.Now())
	w.tb.Emulator.SetPacketLog(w.packets)
}

// open runs ready (nil: nothing), then takes the counts the load starts
// from and reseeds a paired load's link.
func (w *window) open(ctx context.Context, ready func(context.Context) error) error {
	if ready != nil {
		if err := ready(ctx); err != nil {
			return err
		}
	}
	w.tb.Emulator.ResetPeaks()
	w.up0, w.down0 = w.tb.Emulator.Stats()
	var err error
	if w.before, err = countsAfterReplay(w.tb); err != nil {
		return err
	}
	w.dns0 = w.dnsQueries()
	w.reseed()
	w.logPackets()
	w.opened = true
	return nil
}

// dnsQueries is how many questions the testbed's resolver has answered
// (0 for a testbed without one: a live page's).
func (w *window) dnsQueries() int64 {
	if w.tb.Resolver == nil {
		return 0
	}
	return w.tb.Resolver.Queries()
}

// betweenVisits closes the servers' connections after a repeat visit's
// first load, waits until the browser has closed its QUIC sockets (at most
// quicCloseLimit), takes the counts anew, lets the browser see the close
// (closeSettleTime) and reseeds the link for the measured visit.
func (w *window) betweenVisits(ctx context.Context, rtt time.Duration) error {
	if err := w.tb.CloseConnections(); err != nil {
		return err
	}
	if err := awaitQUICClosed(ctx, w.tb.Topo.Client, rtt); err != nil {
		return err
	}
	var err error
	if w.before, err = countsAfterReplay(w.tb); err != nil {
		return err
	}
	w.dns0 = w.dnsQueries()
	if err := client.Pause(ctx, closeSettleTime(rtt)); err != nil {
		return err
	}
	w.reseed() // the measured visit starts from the pair's state
	w.logPackets()
	return nil
}

// close puts what the emulator did since the window opened into m.
func (w *window) close(m *Measured) {
	if !w.opened {
		return
	}
	up, down := w.tb.Emulator.Stats()
	m.Up, m.Down = up.Sub(w.up0), down.Sub(w.down0)
	m.DNSQueries = w.dnsQueries() - w.dns0
	w.tb.Emulator.SetPacketLog(nil)
	m.Packets, m.PacketsStart = w.packets.Packets(), w.packets.Start()
}

// load is one load of trial t, its window opened by ready (see
// measureLoad). A paired load starts its measured visit from its
// repetition's link seeds.
func load(ctx context.Context, b *bed, t plan.Trial, files loadFiles, ready func(context.Context) error) (Measured, error) {
	c := t.Cell
	tb, page := b.Testbed, b.page
	w := &window{tb: tb, reseed: func() {
		if b.paired {
			tb.Emulator.Reseed(plan.PairSeeds(c.Setup, t.Rep))
		}
	}}
	p, visit, cache := c.Levels.Protocol(), c.Levels.Visit(), c.Levels.Cache().On() // the servers' cache is set per attempt (runner.attempt)
	if err := b.clientCPU[c.Levels.Client()].Limit(c.Levels.ClientCPU().Cores()); err != nil {
		return Measured{}, fmt.Errorf("client CPU %s: %w", c.Levels.ClientCPU(), err)
	}
	var m Measured
	var connErr, readyErr error
	cpu := newCPUWindow(b.cpu, tb, c.Levels.Client(), b.clientCPU[c.Levels.Client()], p, b.laneEvery)
	defer cpu.close()
	req := client.Request{
		URL: page.DocumentURL(), Protocol: p, Discovery: c.Levels.Discovery(), Fallback: b.fallback, DNS: c.Levels.DNS(), Resolver: netns.ResolverAddr, Hosts: page.Hosts(),
		Addrs: tb.Addrs, SPKIHash: tb.Certs.SPKIHash, CAFile: tb.Certs.CAFile,
		Expected: b.expected(c.Levels.Client()), Visit: visit, HARPath: files.har, NetLogDir: files.netLog,
		CacheAllowed:  cache && visit.Loads() > 1,
		Visual:        c.Levels.Visual().On(),
		Deterministic: b.deterministic, ClockStart: page.RecordedAt, Viewport: b.viewport,
		ExcuseImage: b.replay.excuseImage, ListUnknownHosts: !b.replay.strict, Documents: b.replay.documents,
		Ready:         func(ctx context.Context) error { readyErr = w.open(ctx, ready); return readyErr },
		BetweenVisits: func(ctx context.Context) error { return w.betweenVisits(ctx, c.Network.RTT) },
		Navigating:    cpu.begin,
		Loaded: func() {
			cpu.finish()
			m.Connections, connErr = tb.Connections()
		},
	}
	if b.live != nil {
		b.live.shape(&req, p)
	}
	r, err := b.clients[c.Levels.Client()].Load(ctx, req)
	w.close(&m)
	if errors.Is(readyErr, context.DeadlineExceeded) && ctx.Err() == nil {
		readyErr = nil // the load's own timeout: r.Failure says so
	}
	for _, e := range []error{err, readyErr, connErr} {
		if e != nil {
			return m, e
		}
	}
	m.Result = r
	m.CPU, m.Samples = cpu.record(), cpu.laneSamples()
	return m, b.judgeLoad(&m, req, w)
}

// judgeLoad reads what load m of req (its window w) used and served: the
// protocols, the document it landed on, and whether the servers (or a live
// site's records) and the load's visits say it was what was asked for,
// failing it where they do not.
func (b *bed) judgeLoad(m *Measured, req client.Request, w *window) error {
	if dropped := m.Up.DroppedUDP + m.Down.DroppedUDP; !m.OK() && dropped > 0 {
		m.Failure += fmt.Sprintf(" (the network blocks or polices UDP, and dropped %d UDP packets of this load: QUIC could not get through)", dropped)
	}
	m.Use = client.ProtocolUseOf(req, m.PageMetrics)
	m.Landed = m.Result.Landed(b.page.DocumentURL())
	if b.live != nil {
		m.Completeness = b.live.judge(b, m, req)
		return nil
	}
	if err := checkServed(b.Testbed, m, req, w.before); err != nil {
		return err
	}
	if problem := notFirstVisit(req, m); problem != "" && m.OK() {
		m.Failure = problem
	}
	m.Completeness = b.replay.judge(m)
	return nil
}

// countsAfterReplay forgets the servers' replay so far and returns their
// request counts.
func countsAfterReplay(tb *testbed.Testbed) (server.Counts, error) {
	if _, err := tb.TakeReplay(); err != nil {
		return server.Counts{}, err
	}
	return tb.Counts()
}

// checkServed records what the servers served since before, and how they
// matched it, and fails a load that was served over another protocol, or
// under a discovery rule, whose servers' counts disagree with the
// browser's account (servedMismatch).
func checkServed(tb *testbed.Testbed, m *Measured, req client.Request, before server.Counts) error {
	after, err := tb.Counts()
	if err != nil {
		return err
	}
	m.ServerRequests = after.Sub(before)
	p := req.Protocol
	if req.Discovery.Discovers() && p == factor.H3 {
		if problem := servedMismatch(m.ServerRequests, m.Use, req.FallbackProtocol()); problem != "" && m.OK() {
			m.Failure = problem
		}
	} else if other := m.ServerRequests.Total() - m.ServerRequests.Of(string(p)); other > 0 && m.OK() {
		m.Failure = fmt.Sprintf("server served %d requests over another protocol than %s", other, p)
	}
	if m.Replay, err = tb.TakeReplay(); err != nil {
		return err
	}
	// Requests to hosts the testbed does not serve never reached a server,
	// nor did the navigations the browser held: they are unmatched too.
	unknown, held := m.UnknownHosts, m.HeldNavigations
	m.Replay = m.Replay.Add(server.Replay{Unmatched: int64(unknown.Count), UnmatchedRequests: unknown.Requests})
	m.Replay = m.Replay.Add(server.Replay{Unmatched: int64(len(held)), UnmatchedRequests: held, HeldNavigations: held})
	return nil
}

// servedMismatch says how the servers' counts of a discovered load
// disagree with what its browser reported, "" if they agree: the servers
// served at least the requests the browser made over h3, and over TCP
// (they also count what the browser does not list, such as its icon),
// all of those over fallback, the TCP protocol offered beside h3.
func servedMismatch(served server.Counts, use client.ProtocolUse, fallback factor.Protocol) string {
	tcp := served.Of(string(fallback))
	switch {
	case served.H3 < int64(use.H3Requests):
		return fmt.Sprintf("the browser reports %d requests over h3, the servers served %d", use.H3Requests, served.H3)
	case tcp < int64(use.TCPRequests):
		return fmt.Sprintf("the browser reports %d requests over TCP, the servers served %d over %s", use.TCPRequests, tcp, fallback)
	case served.Total()-served.H3-tcp > 0:
		return fmt.Sprintf("the servers served %d requests over TCP protocols other than %s, offering %s and h3", served.Total()-served.H3-tcp, fallback, fallback)
	}
	return ""
}

// tcpCongestion is the congestion control of the first TCP connection in
// recs that reports one.
func tcpCongestion(recs []server.ConnRecord) string {
	for _, r := range recs {
		if r.Transport == "tcp" && r.Congestion != "" {
			return r.Congestion
		}
	}
	return ""
}

// quicCloseLimit bounds the wait for the browser's QUIC sockets to close
// after the servers closed their connections. A connection closed by its
// peer drains for three PTOs (RFC 9000, 10.2.2), and Firefox opens no new
// one to the host until its old one has drained: its measured visit then
// began 3 to 4 round trips late and took longer than the first
// (BENCHMARKS.md). Its socket closed 7.5 round trips after the close at
// 40 ms, 5.7 at 200 ms; Chromium's half a round trip after.
func quicCloseLimit(rtt time.Duration) time.Duration { return 20*rtt + time.Second }

// quicClosePoll is how often the wait for closed QUIC sockets looks.
const quicClosePoll = 5 * time.Millisecond

// awaitQUICClosed waits until the client namespace ns holds no QUIC
// socket, at most quicCloseLimit(rtt).
func awaitQUICClosed(ctx context.Context, ns *netns.Namespace, rtt time.Duration) error {
	tables, err := ns.OpenUDPTables()
	if err != nil {
		return err
	}
	defer tables.Close()
	if _, _, err := awaitNone(ctx, tables.Sockets, quicCloseLimit(rtt)); err != nil {
		return fmt.Errorf("await the browser's QUIC sockets closed: %w", err)
	}
	return nil
}

// awaitNone polls count until it is zero, ctx ends or limit passes, and
// returns how long it waited and whether count reached zero.
func awaitNone(ctx context.Context, count func() (int, error), limit time.Duration) (time.Duration, bool, error) {
	start := time.Now()
	for {
		n, err := count()
		waited := time.Since(start)
		if err != nil || n == 0 || waited >= limit {
			return waited, err == nil && n == 0, err
		}
		if err := client.Pause(ctx, quicClosePoll); err != nil {
			return waited, false, err
		}
	}
}

// closeSettleTime is how long a repeat visit waits after the servers closed
// their connections, so that the browser has seen them close: two RTTs,
// at least 100 ms.
func closeSettleTime(rtt time.Duration) time.Duration { return max(2*rtt, 100*time.Millisecond) }

// netcheckLossProbes keeps compare's netcheck short: 5000 probes per
// direction (half a second on fast links), fewer on slow links (at most
// ~2 s at half the rate).
func netcheckLossProbes(l emulator.Config) int {
	n := 5000
	for _, d := range []link.Config{l.Up, l.Down} {
		if rate := d.MeanRate(); rate > 0 {
			n = min(n, max(50, int(rate/2/(92*8)*2)))
		}
	}
	return n
}
