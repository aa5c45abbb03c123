package breakdown

import (
	"net/netip"
	"testing"
	"time"
)

// loadOfPackets is a load of n packets on six TCP connections: per
// connection, a handshake, then data downstream (every 50th segment
// dropped and sent again 40 ms later) with an acknowledgement upstream
// every other segment, 20 µs apart at the bottleneck.
func loadOfPackets(n int) []Packet {
	var out []Packet
	at := time.Duration(0)
	for c := 0; len(out) < n; c++ {
		conn := Conn{Client: netip.AddrPortFrom(netip.MustParseAddr("10.0.0.2"), uint16(40000+c)), Server: netip.MustParseAddrPort("10.0.1.1:443")}
		up := Packet{Conn: conn, Sent: at, At: at + 10*ms, SYN: true, Seq: 1}
		out = append(out, up, Packet{Conn: conn, Down: true, Sent: at + 10*ms, At: at + 20*ms, SYN: true, Seq: 100})
		seq := uint32(101)
		for k := 0; k < 2000 && len(out) < n; k++ {
			at += 20 * time.Microsecond
			p := Packet{Conn: conn, Down: true, Sent: at, At: at + 10*ms, Bottleneck: 20 * time.Microsecond, Seq: seq, Payload: 1448, Dropped: k%50 == 7}
			out = append(out, p)
			if p.Dropped {
				again := p
				again.Dropped, again.Sent, again.At = false, at+40*ms, at+50*ms
				out = append(out, again)
			}
			seq += 1448
			if k%2 == 0 {
				out = append(out, Packet{Conn: conn, Sent: at + 10*ms, At: at + 20*ms, Seq: 2})
			}
		}
	}
	return out
}

// BenchmarkBreakdownOfALoad is what a load's breakdown costs after the
// load: its TCP stalls and its parts from a log of 10,000 packets (about
// 10 MB downstream).
func BenchmarkBreakdownOfALoad(b *testing.B) {
	packets := loadOfPackets(10_000)
	b.ReportAllocs()
	for b.Loop() {
		s := Stalls(packets, 10*ms)
		Apart(packets, 2*time.Second, Spans(s.Waits), nil)
	}
}
