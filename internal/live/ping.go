package live

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
)

// ListenFunc opens a packet socket (a namespace's ListenPacket).
type ListenFunc func(network, addr string) (net.PacketConn, error)

// Ping is what ICMP echoes to a live origin measured of the path beyond
// the emulator: its round trip and its loss.
type Ping struct {
	Target netip.Addr
	// Sent and Answered count the echoes; Median, Min and Max are the
	// answered ones' round trips.
	Sent, Answered   int
	Median, Min, Max time.Duration
}

// LossPct is the share of echoes not answered, in percent.
func (p Ping) LossPct() float64 {
	if p.Sent == 0 {
		return 0
	}
	return 100 * float64(p.Sent-p.Answered) / float64(p.Sent)
}

// String is the ping as the log gives it.
func (p Ping) String() string {
	return fmt.Sprintf("%.1f ms, %.0f %% lost (ICMP echoes to %s, %d answered of %d, %.1f–%.1f)",
		ms(p.Median), p.LossPct(), p.Target, p.Answered, p.Sent, ms(p.Min), ms(p.Max))
}

// ErrNoEcho says that no echo was answered: the origin (or a firewall on
// the way) drops ICMP, as many sites do; the TCP handshakes' round trip
// stands alone then, and the path's loss is not known.
var ErrNoEcho = errors.New("no ICMP echo answered (the site or a firewall drops them, as many do)")

// MeasurePing sends count ICMP echoes to target, every interval, from a
// socket listen opens, and waits up to timeout after the last for the
// answers. It fails with ErrNoEcho when none came back.
func MeasurePing(ctx context.Context, listen ListenFunc, target netip.Addr, count int, interval, timeout time.Duration) (Ping, error) {
	pc, err := listen("ip4:icmp", "0.0.0.0")
	if err != nil {
		return Ping{}, fmt.Errorf("ping %s: %w", target, err)
	}
	defer pc.Close()
	p := Ping{Target: target}
	sentAt := make([]atomic.Int64, count) // Unix ns; read by readEchoes
	id := os.Getpid() & 0xffff
	replies := make(chan []time.Duration, 1)
	pc.SetReadDeadline(time.Now().Add(time.Minute)) // shortened after the last echo
	go func() { replies <- readEchoes(pc, target, id, sentAt, count) }()
	for seq := range count {
		msg, _ := (&icmp.Message{Type: ipv4.ICMPTypeEcho, Body: &icmp.Echo{ID: id, Seq: seq, Data: []byte("quicbench")}}).Marshal(nil)
		sentAt[seq].Store(time.Now().UnixNano())
		if _, err := pc.WriteTo(msg, &net.IPAddr{IP: target.AsSlice()}); err != nil {
			return p, fmt.Errorf("ping %s: %w", target, err)
		}
		p.Sent++
		select {
		case <-ctx.Done():
			return p, ctx.Err()
		case <-time.After(interval):
		}
	}
	pc.SetReadDeadline(time.Now().Add(timeout))
	times := <-replies
	if len(times) == 0 {
		return p, ErrNoEcho
	}
	slices.Sort(times)
	p.Answered, p.Median, p.Min, p.Max = len(times), times[len(times)/2], times[0], times[len(times)-1]
	return p, ctx.Err()
}

// readEchoes reads the echo replies from target to id until the socket's
// deadline or the last is in, each round trip from sentAt of its
// sequence number (each counted once).
func readEchoes(pc net.PacketConn, target netip.Addr, id int, sentAt []atomic.Int64, count int) []time.Duration {
	var times []time.Duration
	seen := map[int]bool{}
	buf := make([]byte, 1500)
	for len(seen) < count {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return times
		}
		at := time.Now()
		ip, ok := from.(*net.IPAddr)
		if !ok || !ip.IP.Equal(target.AsSlice()) {
			continue
		}
		msg, err := icmp.ParseMessage(1, buf[:n])
		if err != nil || msg.Type != ipv4.ICMPTypeEchoReply {
			continue
		}
		echo, ok := msg.Body.(*icmp.Echo)
		if !ok || echo.ID != id || echo.Seq < 0 || echo.Seq >= count || seen[echo.Seq] || sentAt[echo.Seq].Load() == 0 {
			continue
		}
		seen[echo.Seq] = true
		times = append(times, at.Sub(time.Unix(0, sentAt[echo.Seq].Load())))
	}
	return times
}
