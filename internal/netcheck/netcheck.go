// Package netcheck measures an emulated network through the real emulator and
// compares it with its configuration: RTT (idle and under load), loss per
// direction with a 99 % interval, and TCP goodput per direction. Each check
// gives configured and measured values, the rule it applies, and pass or
// fail, so every run can prove its network was what it claimed.
package netcheck

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/stats"
	"github.com/quicbench/quicbench/internal/testbed"
)

// Config says what to check and how long to spend.
type Config struct {
	// Link and RTT are the configured network.
	Link emulator.Config
	RTT  time.Duration
	// RTTProbes is the number of idle RTT probes, one every 10 ms. Zero: 200.
	RTTProbes int
	// LossProbes is the number of probes per direction for the loss check.
	// Zero: as many as fit in 5 s at half the link rate, at most 5000.
	LossProbes int
	// TransferTime is the length of each TCP transfer. Zero: 5 s.
	TransferTime time.Duration
	// Confidence is the level of the loss checks' intervals: 0.95, 0.99 or
	// 0.999. Zero: 0.999, so that the two loss checks of a run raise a false
	// alarm in only about 0.2 % of runs.
	Confidence float64
}

func (c Config) withDefaults() Config {
	if c.RTTProbes == 0 {
		c.RTTProbes = 200
	}
	if c.TransferTime == 0 {
		c.TransferTime = 5 * time.Second
	}
	if c.Confidence == 0 {
		c.Confidence = 0.999
	}
	return c
}

// Result is whether a check passed.
type Result string

// Results of a check.
const (
	Pass Result = "pass"
	Fail Result = "FAIL"
	Info Result = "info" // measured, nothing to compare against
)

// Line is one check.
type Line struct {
	Check      string             `json:"check"`
	Configured string             `json:"configured"`
	Measured   string             `json:"measured"`
	Rule       string             `json:"rule"`
	Result     Result             `json:"result"`
	Values     map[string]float64 `json:"values"`
}

// Report is a whole netcheck.
type Report struct {
	Lines []Line `json:"lines"`
}

// Passed reports whether no check failed.
func (r *Report) Passed() bool {
	return !slices.ContainsFunc(r.Lines, func(l Line) bool { return l.Result == Fail })
}

// Ports used in the servers namespace.
const (
	echoPort = 7
	sinkPort = 9
	tcpPort  = 5001
)

// minProbeInterval is the shortest gap between loss probes.
const minProbeInterval = 100 * time.Microsecond

// probeBytes is the payload of a UDP probe; with headers the IP packet is
// probeBytes + 28.
const probeBytes = 64

// Measure builds a network of cfg.Link (namespaces named after stem;
// empty: a new run name of netcheck's; one server address), calibrates it
// as runs do (Calibrate), checks it, and removes it. The calibration is
// the report's first line.
func Measure(ctx context.Context, stem string, cfg Config) (*Report, error) {
	if stem == "" {
		stem = netns.NewRunName("nc")
	}
	n, err := testbed.StartNetwork(stem, cfg.Link, 1)
	if err != nil {
		return nil, err
	}
	pl, err := Calibrate(ctx, n, cfg)
	if err != nil {
		return nil, errors.Join(err, n.Close())
	}
	report, err := Run(ctx, n, cfg)
	if report != nil {
		report.Lines = append([]Line{pl.Line()}, report.Lines...)
	}
	return report, errors.Join(err, n.Close())
}

// Run runs every check on the network n, whose link must be cfg.Link.
func Run(ctx context.Context, n *testbed.Network, cfg Config) (*Report, error) {
	cfg = cfg.withDefaults()
	if _, ok := stats.ZForConfidence(cfg.Confidence); !ok {
		return nil, fmt.Errorf("netcheck: confidence %v: use 0.95, 0.99 or 0.999", cfg.Confidence)
	}
	c := &checker{n: n, cfg: cfg, server: n.Topo.ServerAddrs[0]}
	if err := c.startEcho(); err != nil {
		return nil, err
	}
	defer c.echo.Close()
	r := &Report{}
	steps := []func(context.Context) ([]Line, error){c.idleRTT, c.loss, c.goodputAndLoadedRTT}
	for _, step := range steps {
		lines, err := step(ctx)
		if err != nil {
			return r, err
		}
		r.Lines = append(r.Lines, lines...)
	}
	return r, nil
}

// IdleRTT probes the round trip of network n, whose link is cfg.Link,
// alone: cfg.RTTProbes UDP probes 10 ms apart from the client to an echo
// on the first server address, while whatever else runs on n keeps
// running. Its line's Values hold expected_ms, median_ms, p99_ms and
// answered.
func IdleRTT(ctx context.Context, n *testbed.Network, cfg Config) (Line, error) {
	c := &checker{n: n, cfg: cfg.withDefaults(), server: n.Topo.ServerAddrs[0]}
	if err := c.startEcho(); err != nil {
		return Line{}, err
	}
	defer c.echo.Close()
	lines, err := c.idleRTT(ctx)
	if err != nil {
		return Line{}, err
	}
	return lines[0], nil
}

type checker struct {
	n      *testbed.Network
	cfg    Config
	server netip.Addr
	echo   net.PacketConn
}

func (c *checker) startEcho() error {
	pc, err := c.n.Topo.Servers.ListenPacket("udp4", netip.AddrPortFrom(c.server, echoPort).String())
	if err != nil {
		return fmt.Errorf("netcheck: echo server: %w", err)
	}
	c.echo = pc
	go func() {
		buf := make([]byte, 2048)
		for {
			k, addr, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			pc.WriteTo(buf[:k], addr)
		}
	}()
	return nil
}

// probeRTTs sends count echo probes from a socket in namespace from, one
// every interval on average, without waiting for answers, and returns the
// round-trip times in ms of those answered within timeout of being sent.
// It returns once every probe is answered or the last one's timeout has
// passed; when ctx ends it returns what it has. The gaps vary uniformly by
// ±50 %: with a fixed gap that divides the RTT, every send would coincide
// with an answer's arrival, and on two cores the two would delay each
// other's timestamps by up to milliseconds.
func (c *checker) probeRTTs(ctx context.Context, from *netns.Namespace, count int, interval, timeout time.Duration) ([]float64, error) {
	conn, err := from.DialContext(ctx, "udp4", netip.AddrPortFrom(c.server, echoPort).String())
	if err != nil {
		return nil, fmt.Errorf("netcheck: probe socket: %w", err)
	}
	defer conn.Close()
	udp, ok := conn.(*net.UDPConn)
	if !ok {
		return nil, fmt.Errorf("netcheck: probe socket is a %T", conn)
	}
	// Kernel receive timestamps: the arrival time, not when Go woke up.
	if err := setTimestamping(udp); err != nil {
		return nil, err
	}
	p := &probes{sent: map[uint32]time.Time{}, timeout: timeout, answered: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.receive(udp)
	}()
	lastSent, err := p.send(ctx, conn, count, interval)
	if err != nil {
		return nil, err
	}
	// Wait for the last answers, unless every probe is answered or the
	// caller is done.
	select {
	case <-ctx.Done():
	case <-p.answered:
	case <-time.After(time.Until(lastSent.Add(timeout))):
	}
	conn.Close()
	<-done
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rtts, ctx.Err()
}

// probes is one probeRTTs's probes in flight and round trips measured.
type probes struct {
	mu       sync.Mutex
	sent     map[uint32]time.Time // unanswered probes' send times
	rtts     []float64            // ms
	timeout  time.Duration
	finished bool          // every probe is sent
	allIn    bool          // every probe is sent and answered
	answered chan struct{} // closed when allIn becomes true
}

// send sends count probes on conn, one every interval on average (±50 %),
// and returns when the last was sent.
func (p *probes) send(ctx context.Context, conn net.Conn, count int, interval time.Duration) (time.Time, error) {
	out := make([]byte, probeBytes)
	next := time.Now()
	var lastSent time.Time
	for seq := 0; seq < count && ctx.Err() == nil; seq++ {
		binary.BigEndian.PutUint32(out, uint32(seq))
		p.mu.Lock()
		lastSent = time.Now().Round(0) // wall clock, as kernel timestamps are
		p.sent[uint32(seq)] = lastSent
		p.mu.Unlock()
		if _, err := conn.Write(out); err != nil {
			return lastSent, fmt.Errorf("netcheck: probe: %w", err)
		}
		next = next.Add(time.Duration(float64(interval) * (0.5 + rand.Float64())))
		select {
		case <-ctx.Done():
		case <-time.After(time.Until(next)):
		}
	}
	p.mu.Lock()
	p.finished = true
	p.closeIfAnswered()
	p.mu.Unlock()
	return lastSent, nil
}

// receive reads answers from udp until it is closed, keeping the round
// trip of each probe answered within the timeout.
func (p *probes) receive(udp *net.UDPConn) {
	buf, oob := make([]byte, 2048), make([]byte, 512)
	for {
		k, oobn, _, _, err := udp.ReadMsgUDP(buf, oob)
		if err != nil {
			return
		}
		arrived, ok := kernelTimestamp(oob[:oobn])
		if !ok {
			arrived = time.Now()
		}
		if k != probeBytes {
			continue
		}
		seq := binary.BigEndian.Uint32(buf)
		p.mu.Lock()
		if at, ok := p.sent[seq]; ok && arrived.Sub(at) <= p.timeout {
			p.rtts = append(p.rtts, ms(arrived.Sub(at)))
			delete(p.sent, seq)
			p.closeIfAnswered()
		}
		p.mu.Unlock()
	}
}

// closeIfAnswered closes answered once every probe is sent and answered;
// p.mu is held.
func (p *probes) closeIfAnswered() {
	if p.finished && len(p.sent) == 0 && !p.allIn {
		close(p.answered)
		p.allIn = true
	}
}

// expectedRTT is the configured RTT, plus a per-server path's towards the
// probed server, plus the probe's serialization in each direction, and how
// far a trace's opportunities or jitter may move it.
func (c *checker) expectedRTT() (expected, slack time.Duration) {
	expected = c.cfg.RTT
	for _, p := range c.cfg.Link.Paths {
		if p.Server == c.server {
			expected += p.RTT
		}
	}
	for _, d := range []link.Config{c.cfg.Link.Up, c.cfg.Link.Down} {
		if d.RateBitsPerSecond > 0 {
			expected += link.TransmissionTime(probeBytes+28, d.RateBitsPerSecond)
		}
		if d.Trace != nil {
			slack += d.Trace.MaxGap()
		}
		slack += d.Jitter
	}
	return expected, slack
}

func (c *checker) idleRTT(ctx context.Context) ([]Line, error) {
	expected, slack := c.expectedRTT()
	rtts, err := c.probeRTTs(ctx, c.n.Topo.Client, c.cfg.RTTProbes, 10*time.Millisecond, expected+slack+time.Second)
	if err != nil && !(errors.Is(err, context.Canceled) && ctx.Err() == nil) {
		return nil, err
	}
	line := Line{Check: "RTT, idle", Configured: fmt.Sprintf("%.3f ms", ms(expected)),
		Rule: fmt.Sprintf("median within ±%.1f ms, p99 at most +%.1f ms", ms(time.Millisecond+slack), ms(2*time.Millisecond+2*slack))}
	if len(rtts) == 0 {
		line.Measured, line.Result = "no probe answered", Fail
		return []Line{line}, nil
	}
	s := stats.Summarize(rtts)
	p99 := stats.Quantile(rtts, 0.99)
	echo, _ := c.localEcho(ctx, 50) // 0 when it cannot be measured
	within := withinMs(rtts, ms(expected)+echo, 1)
	line.Measured = fmt.Sprintf("median %.3f ms, p99 %.3f ms, %.1f%% within ±1 ms (%d of %d answered; the echo's own RTT %.3f ms)",
		s.Median, p99, 100*within, len(rtts), c.cfg.RTTProbes, echo)
	line.Values = map[string]float64{"expected_ms": ms(expected), "median_ms": s.Median, "p99_ms": p99, "min_ms": s.Min,
		"answered": float64(len(rtts)), "echo_ms": echo, "within_1ms": within}
	line.Result = Pass
	if c.cfg.Link.Up.Trace != nil || c.cfg.Link.Down.Trace != nil {
		// A probe waits for the trace's next opportunity, up to its longest
		// gap (seconds in real cellular traces): nothing tight to judge.
		line.Rule, line.Result = "a trace adds the wait for its next opportunity: not judged", Info
	} else if math.Abs(s.Median-ms(expected)) > ms(time.Millisecond+slack) || p99-ms(expected) > ms(2*time.Millisecond+2*slack) {
		line.Result = Fail
	}
	return []Line{line}, nil
}

// localEcho is the median RTT in ms of count echo probes from inside the
// servers namespace, no link crossed: the echo's turnaround and the
// stacks, which the probes through the link include too.
func (c *checker) localEcho(ctx context.Context, count int) (float64, error) {
	rtts, err := c.probeRTTs(ctx, c.n.Topo.Servers, count, 2*time.Millisecond, time.Second)
	if err != nil {
		return 0, err
	}
	if len(rtts) < count/3 {
		return 0, fmt.Errorf("only %d of %d echo probes inside the servers namespace came back", len(rtts), count)
	}
	return stats.Summarize(rtts).Median, nil
}

// withinMs is the share of values within ±tol of want.
func withinMs(values []float64, want, tol float64) float64 {
	n := 0
	for _, v := range values {
		if math.Abs(v-want) <= tol {
			n++
		}
	}
	return float64(n) / float64(len(values))
}

// lossProbeCount is how many probes a direction gets: fixed, or what fits in
// 5 s at half the link's mean rate (so the queue stays short), 100 to 5000.
func (c *checker) lossProbeCount(d link.Config) int {
	if c.cfg.LossProbes > 0 {
		return c.cfg.LossProbes
	}
	rate := d.MeanRate()
	if rate == 0 {
		return 5000
	}
	perSecond := rate / 2 / ((probeBytes + 28) * 8)
	return int(min(5000, max(100, 5*perSecond)))
}

// loss sends numbered datagrams each way at a paced rate and counts what
// arrives. Queue drops, counted by the emulator, are separated from random
// loss, which is what the configured loss model must explain.
func (c *checker) loss(ctx context.Context) ([]Line, error) {
	var lines []Line
	for _, dir := range []struct {
		name string
		cfg  link.Config
		up   bool
	}{{"loss, uplink", c.cfg.Link.Up, true}, {"loss, downlink", c.cfg.Link.Down, false}} {
		n := c.lossProbeCount(dir.cfg)
		// Half the link rate keeps the queue short; at most 10,000 probes a
		// second keeps the sink's socket from overflowing on fast links.
		interval := time.Duration(float64(time.Second) * (probeBytes + 28) * 8 / math.Max(dir.cfg.MeanRate()/2, 1))
		if dir.cfg.MeanRate() == 0 || interval < minProbeInterval {
			interval = minProbeInterval
		}
		before := c.dirStats(dir.up)
		received, err := c.sendDatagrams(ctx, dir.up, n, interval)
		if err != nil {
			return nil, err
		}
		queueDrops := int(c.dirStats(dir.up).DroppedQueue - before.DroppedQueue)
		lost := n - received - queueDrops
		lines = append(lines, lossLine(dir.name, dir.cfg, n, lost, queueDrops, c.cfg.Confidence))
	}
	return lines, nil
}

func (c *checker) dirStats(up bool) emulator.Stats {
	u, d := c.n.Emulator.Stats()
	if up {
		return u
	}
	return d
}

// sendDatagrams sends n datagrams client → server (up) or server → client
// and returns how many arrived.
func (c *checker) sendDatagrams(ctx context.Context, up bool, n int, interval time.Duration) (int, error) {
	sinkNS, srcNS := c.n.Topo.Servers, c.n.Topo.Client
	sinkAddr := netip.AddrPortFrom(c.server, sinkPort)
	if !up {
		sinkNS, srcNS = c.n.Topo.Client, c.n.Topo.Servers
		sinkAddr = netip.AddrPortFrom(netns.ClientAddr, sinkPort)
	}
	sink, err := sinkNS.ListenPacket("udp4", sinkAddr.String())
	if err != nil {
		return 0, fmt.Errorf("netcheck: sink: %w", err)
	}
	defer sink.Close()
	if udp, ok := sink.(*net.UDPConn); ok {
		udp.SetReadBuffer(4 << 20) // the emulator's losses only, never the socket's
	}
	var received atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := sink.ReadFrom(buf); err != nil {
				return
			}
			received.Add(1)
		}
	})
	src, err := srcNS.DialContext(ctx, "udp4", sinkAddr.String())
	if err != nil {
		return 0, fmt.Errorf("netcheck: source: %w", err)
	}
	defer src.Close()
	payload := make([]byte, probeBytes)
	start := time.Now()
	for i := range n {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		src.Write(payload)
		if wait := time.Until(start.Add(time.Duration(i+1) * interval)); wait > 0 {
			time.Sleep(wait)
		}
	}
	// Wait for the last datagrams: the delay, a full queue, a trace gap.
	expected, slack := c.expectedRTT()
	time.Sleep(expected + slack + 500*time.Millisecond)
	sink.Close()
	wg.Wait()
	return int(received.Load()), nil
}

// lossLine judges lost random losses out of n probes (queue drops apart) at
// the given confidence level (0.95, 0.99 or 0.999).
func lossLine(name string, cfg link.Config, n, lost, queueDrops int, confidence float64) Line {
	z, _ := stats.ZForConfidence(confidence)
	level := fmt.Sprintf("%g%%", 100*confidence)
	offered := n // random loss acts before the queue, on every probe
	rate := float64(lost) / float64(offered)
	want := cfg.MeanLoss()
	var lo, hi float64
	method := "exact, Clopper–Pearson"
	if g := cfg.GilbertElliott; g != nil {
		half := z * math.Sqrt(g.AsymptoticVariance()/float64(offered))
		lo, hi = math.Max(0, want-half), math.Min(1, want+half)
		method = "Gilbert-Elliott variance"
	} else {
		lo, hi = stats.ClopperPearson(lost, offered, confidence)
	}
	l := Line{Check: name, Configured: pctText(want),
		Measured: fmt.Sprintf("%s (%d of %d lost; %s interval %s to %s; %d queue drops)", pctText(rate), lost, offered, level, pctText(lo), pctText(hi), queueDrops),
		Values:   map[string]float64{"configured": want, "measured": rate, "lo99": lo, "hi99": hi, "probes": float64(n), "lost": float64(lost), "queue_drops": float64(queueDrops)},
		Result:   Pass}
	if cfg.GilbertElliott != nil {
		l.Rule = "measured rate within the " + level + " interval around the stationary loss (" + method + ")"
		if rate < lo || rate > hi {
			l.Result = Fail
		}
	} else {
		l.Rule = "configured rate inside the measured rate's " + level + " interval (" + method + ")"
		if want < lo || want > hi {
			l.Result = Fail
		}
	}
	return l
}

func pctText(f float64) string { return fmt.Sprintf("%.3f%%", 100*f) }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// setTimestamping asks the kernel to stamp each datagram's arrival.
func setTimestamping(c *net.UDPConn) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil {
		return err
	}
	if serr != nil {
		return fmt.Errorf("netcheck: SO_TIMESTAMPNS: %w", serr)
	}
	return nil
}

// kernelTimestamp finds the SO_TIMESTAMPNS arrival time in control data.
func kernelTimestamp(oob []byte) (time.Time, bool) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}, false
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS && len(m.Data) >= 16 {
			ts := (*unix.Timespec)(unsafe.Pointer(&m.Data[0]))
			return time.Unix(ts.Sec, ts.Nsec), true
		}
	}
	return time.Time{}, false
}
