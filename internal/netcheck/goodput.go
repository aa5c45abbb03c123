package netcheck

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/stats"
)

// tcpPayloadShare is the TCP payload per 1500-byte packet with timestamps:
// 1448 bytes.
const tcpPayloadShare = 1448.0 / 1500

// goodputAndLoadedRTT runs a TCP transfer each way; during the download it
// probes the RTT, which shows the delay a full downlink queue adds.
func (c *checker) goodputAndLoadedRTT(ctx context.Context) ([]Line, error) {
	ln, err := c.n.Topo.Servers.Listen("tcp4", netip.AddrPortFrom(c.server, tcpPort).String())
	if err != nil {
		return nil, fmt.Errorf("netcheck: TCP server: %w", err)
	}
	defer ln.Close()
	var lines []Line
	for _, down := range []bool{true, false} {
		var loaded []float64
		var probeErr error
		probeCtx, stopProbes := context.WithCancel(ctx)
		var wg sync.WaitGroup
		if down {
			wg.Go(func() {
				time.Sleep(c.cfg.TransferTime / 3) // once the queue has filled
				loaded, probeErr = c.probeRTTs(probeCtx, c.n.Topo.Client, math.MaxInt32, 20*time.Millisecond, 5*time.Second)
				if probeCtx.Err() != nil && ctx.Err() == nil {
					probeErr = nil // stopped at the end of the transfer, as meant
				}
			})
		}
		rate, err := c.transfer(ctx, ln, down)
		stopProbes()
		wg.Wait()
		if err != nil {
			return nil, err
		}
		if probeErr != nil && ctx.Err() == nil {
			return nil, probeErr
		}
		dir := c.cfg.Link.Up
		name := "TCP goodput, uplink"
		if down {
			dir, name = c.cfg.Link.Down, "TCP goodput, downlink"
		}
		lines = append(lines, goodputLine(name, dir, rate))
		if down {
			lines = append(lines, c.loadedRTTLine(loaded))
		}
	}
	return lines, nil
}

// transfer sends bulk data server → client (down) or client → server for
// TransferTime and returns the goodput in bit/s over its last two thirds,
// after slow start. It counts at the sender the segments the receiver got
// (TCP_INFO's delivered, SACKed ones included), so that a burst released when
// a retransmission fills a hole is not counted at the wrong time, as a count
// of the receiver's reads would be on a lossy link.
func (c *checker) transfer(ctx context.Context, ln net.Listener, down bool) (float64, error) {
	client, server, err := c.connectPair(ctx, ln)
	if err != nil {
		return 0, err
	}
	defer client.Close()
	defer server.Close()
	sender, receiver := client, server
	if down {
		sender, receiver = server, client
	}
	d := c.cfg.TransferTime
	start := time.Now()
	go drain(receiver)
	sampled := sampleDelivered(sender, start, d)
	buf := make([]byte, 64<<10)
	sender.SetWriteDeadline(start.Add(d))
	for time.Since(start) < d && ctx.Err() == nil {
		if _, err := sender.Write(buf); err != nil {
			break
		}
	}
	got := <-sampled
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	return got.rate()
}

// connectPair connects a client from the client's namespace to ln and
// returns both ends.
func (c *checker) connectPair(ctx context.Context, ln net.Listener) (client, server net.Conn, _ error) {
	accepted := make(chan net.Conn, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- conn
	}()
	client, err := c.n.Topo.Client.DialContext(ctx, "tcp4", ln.Addr().String())
	if err != nil {
		return nil, nil, fmt.Errorf("netcheck: TCP connect: %w", err)
	}
	server, ok := <-accepted
	if !ok {
		client.Close()
		return nil, nil, errors.New("netcheck: TCP accept failed")
	}
	return client, server, nil
}

// drain reads conn until it fails: a receiver that only receives.
func drain(conn net.Conn) {
	buf := make([]byte, 64<<10)
	for {
		if _, err := conn.Read(buf); err != nil {
			return
		}
	}
}

// deliveredSample is the bytes the receiver had got at a time.
type deliveredSample struct {
	at    time.Time
	bytes float64
}

// deliveredSamples are a transfer's samples of its delivered bytes, or
// the error that stopped them.
type deliveredSamples struct {
	samples []deliveredSample
	err     error
}

// rate is the goodput between the two samples in bit/s (0 if there are
// not two in order), or the samples' error.
func (d deliveredSamples) rate() (float64, error) {
	if d.err != nil {
		return 0, d.err
	}
	s := d.samples
	if len(s) != 2 || !s[1].at.After(s[0].at) {
		return 0, nil
	}
	return (s[1].bytes - s[0].bytes) * 8 / s[1].at.Sub(s[0].at).Seconds(), nil
}

// sampleDelivered samples what sender's receiver has got, a third into a
// transfer begun at start lasting d and 50 ms before its end, and sends
// the samples once taken.
func sampleDelivered(sender net.Conn, start time.Time, d time.Duration) <-chan deliveredSamples {
	out := make(chan deliveredSamples, 1)
	go func() {
		var got deliveredSamples
		defer func() { out <- got }()
		for _, at := range []time.Time{start.Add(d / 3), start.Add(d - 50*time.Millisecond)} {
			time.Sleep(time.Until(at))
			delivered, err := deliveredBytes(sender)
			if err != nil {
				got.err = err
				return
			}
			got.samples = append(got.samples, deliveredSample{time.Now(), delivered})
		}
	}()
	return out
}

// deliveredBytes is what the receiver of conn has got so far, in bytes:
// TCP_INFO's delivered segments times the sender's MSS.
func deliveredBytes(conn net.Conn) (float64, error) {
	tc, ok := conn.(*net.TCPConn)
	if !ok {
		return 0, fmt.Errorf("netcheck: %T is not a TCP connection", conn)
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var info *unix.TCPInfo
	var infoErr error
	if err := rc.Control(func(fd uintptr) { info, infoErr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) }); err != nil {
		return 0, err
	}
	if infoErr != nil {
		return 0, fmt.Errorf("netcheck: TCP_INFO: %w", infoErr)
	}
	return float64(info.Delivered) * float64(info.Snd_mss), nil
}

func goodputLine(name string, d link.Config, measured float64) Line {
	l := Line{Check: name, Measured: fmt.Sprintf("%.3f Mbit/s", measured/1e6),
		Values: map[string]float64{"measured_bps": measured}}
	switch {
	case d.MeanRate() == 0:
		l.Configured, l.Rule, l.Result = "unlimited", "no rate to compare with", Info
	case d.Trace != nil:
		ideal := d.MeanRate() * tcpPayloadShare
		l.Configured = fmt.Sprintf("trace, mean %.3f Mbit/s of payload", ideal/1e6)
		l.Rule, l.Result = "a trace's capacity over a few seconds differs from its mean: not judged", Info
		l.Values["ideal_bps"] = ideal
	case d.MeanLoss() > 0:
		ideal := d.MeanRate() * tcpPayloadShare
		l.Configured = fmt.Sprintf("%.3f Mbit/s of payload", ideal/1e6)
		l.Rule, l.Result = "random loss keeps TCP below the link rate: not judged", Info
		l.Values["ideal_bps"] = ideal
	default:
		ideal := d.MeanRate() * tcpPayloadShare
		l.Configured = fmt.Sprintf("%.3f Mbit/s of payload (rate × 1448/1500)", ideal/1e6)
		l.Measured += fmt.Sprintf(" (%.1f%%)", 100*measured/ideal)
		l.Rule = "at least 90% of the ideal, at most 102%"
		l.Values["ideal_bps"] = ideal
		l.Result = Pass
		if measured < 0.90*ideal || measured > 1.02*ideal {
			l.Result = Fail
		}
	}
	return l
}

// loadedRTTLine judges the RTT measured while TCP filled the downlink: a
// drop-tail queue never holds packets longer than its size allows. A link
// without a rate has no bottleneck queue to bound: what a download adds
// there is this machine's (its line is information; it said "pass"
// against a bound of 12,000 s before 2026-11-30, a check that could not
// fail).
func (c *checker) loadedRTTLine(rtts []float64) Line {
	l := Line{Check: "RTT under download load", Values: map[string]float64{"probes": float64(len(rtts))}}
	if len(rtts) == 0 {
		l.Measured, l.Result, l.Rule = "no probe answered", Fail, "probes must be answered"
		return l
	}
	s := stats.Summarize(rtts)
	p99 := stats.Quantile(rtts, 0.99)
	l.Measured = fmt.Sprintf("median %.1f ms, p99 %.1f ms (%d probes)", s.Median, p99, len(rtts))
	l.Values["median_ms"], l.Values["p99_ms"] = s.Median, p99
	expected, slack := c.expectedRTT()
	down := c.cfg.Link.Down
	queue := queueDrainTime(down)
	switch {
	case down.Trace != nil:
		l.Configured, l.Rule, l.Result = fmt.Sprintf("%.1f ms plus a trace-driven queue", ms(expected)), "a trace's queue drains at its momentary rate: not judged", Info
		return l
	case down.RateBitsPerSecond <= 0:
		l.Configured, l.Rule, l.Result = fmt.Sprintf("%.1f ms, no rate limit", ms(expected)), "no bottleneck rate: a download is held by this machine's CPU, whose own queueing this shows; not judged", Info
		return l
	case queue < 0:
		l.Configured, l.Rule, l.Result = fmt.Sprintf("%.1f ms plus an unlimited queue", ms(expected)), "no bound with an unlimited queue", Info
		return l
	}
	bound := expected + queue + slack + 2*time.Millisecond + link.TransmissionTime(1500, down.RateBitsPerSecond)
	l.Configured = fmt.Sprintf("%.1f ms + queue %.1f ms", ms(expected), ms(queue))
	l.Rule = fmt.Sprintf("p99 at most %.1f ms (RTT + queue drain time + 2 ms)", ms(bound))
	l.Values["bound_ms"] = ms(bound)
	l.Result = Pass
	if p99 > ms(bound) {
		l.Result = Fail
	}
	return l
}

// queueDrainTime is how long a full queue of d takes to drain at its mean
// rate; 0 without a bottleneck, −1 for an unlimited queue.
func queueDrainTime(d link.Config) time.Duration {
	rate := d.MeanRate()
	switch {
	case rate == 0:
		return 0
	case d.QueueBytes > 0:
		return time.Duration(float64(d.QueueBytes) * 8 / rate * float64(time.Second))
	case d.QueuePackets > 0:
		return time.Duration(float64(d.QueuePackets) * 1500 * 8 / rate * float64(time.Second))
	}
	return -1
}
