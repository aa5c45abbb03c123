package breakdown

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"
)

// ipv4 builds an IPv4 packet of proto from src to dst around l4.
func ipv4(proto byte, src, dst string, l4 []byte) []byte {
	pkt := make([]byte, 20+len(l4))
	pkt[0] = 0x45
	binary.BigEndian.PutUint16(pkt[2:4], uint16(len(pkt)))
	pkt[8], pkt[9] = 64, proto
	s, d := netip.MustParseAddr(src).As4(), netip.MustParseAddr(dst).As4()
	copy(pkt[12:16], s[:])
	copy(pkt[16:20], d[:])
	copy(pkt[20:], l4)
	return pkt
}

// tcpSegment is a TCP header of 32 bytes (with options) and payload bytes.
func tcpSegment(sport, dport uint16, seq uint32, flags byte, payload int) []byte {
	h := make([]byte, 32+payload)
	binary.BigEndian.PutUint16(h[0:2], sport)
	binary.BigEndian.PutUint16(h[2:4], dport)
	binary.BigEndian.PutUint32(h[4:8], seq)
	h[12], h[13] = 8<<4, flags
	return h
}

func TestSummarizeReadsHeadersOnly(t *testing.T) {
	down := ipv4(protoTCP, "10.0.1.1", "10.0.0.2", tcpSegment(443, 40000, 4000000000, 0x10, 1200))
	got, ok := Summarize(5*time.Millisecond, down, true, false)
	want := Packet{At: 5 * time.Millisecond, Down: true, Conn: connA, Seq: 4000000000, Payload: 1200}
	if !ok || got != want {
		t.Errorf("a downstream segment: %+v %v, want %+v", got, ok, want)
	}
	up := ipv4(protoTCP, "10.0.0.2", "10.0.1.1", tcpSegment(40000, 443, 7, 0x02, 0))
	if got, ok := Summarize(0, up, false, true); !ok || got.Conn != connA || !got.SYN || got.Payload != 0 || !got.Dropped {
		t.Errorf("an upstream SYN, dropped: %+v %v", got, ok)
	}
	udp := make([]byte, 8+1252)
	binary.BigEndian.PutUint16(udp[0:2], 443)
	binary.BigEndian.PutUint16(udp[2:4], 40000)
	quic := Conn{Client: connA.Client, Server: connA.Server, UDP: true}
	if got, ok := Summarize(0, ipv4(protoUDP, "10.0.1.1", "10.0.0.2", udp), true, false); !ok || got.Conn != quic || got.Payload != 1252 {
		t.Errorf("a QUIC datagram: %+v %v", got, ok)
	}
}

func TestSummarizeRefusesWhatItCannotRead(t *testing.T) {
	seg := ipv4(protoTCP, "10.0.1.1", "10.0.0.2", tcpSegment(443, 40000, 1, 0x10, 10))
	later := append([]byte(nil), seg...)
	binary.BigEndian.PutUint16(later[6:8], 185) // a fragment at offset 1480
	v6 := append([]byte(nil), seg...)
	v6[0] = 0x60
	for name, pkt := range map[string][]byte{
		"short":      seg[:30],
		"fragment":   later,
		"IPv6":       v6,
		"ICMP":       ipv4(1, "10.0.1.1", "10.0.0.2", make([]byte, 8)),
		"no UDP":     ipv4(protoUDP, "10.0.1.1", "10.0.0.2", make([]byte, 4)),
		"bad offset": ipv4(protoTCP, "10.0.1.1", "10.0.0.2", append(make([]byte, 12), 0xf0, 0, 0, 0, 0, 0, 0, 0)),
	} {
		if p, ok := Summarize(0, pkt, true, false); ok {
			t.Errorf("%s: read as %+v", name, p)
		}
	}
}

// FuzzSummarize: no packet, however made, panics or reads a payload
// longer than the packet.
func FuzzSummarize(f *testing.F) {
	f.Add(ipv4(protoTCP, "10.0.1.1", "10.0.0.2", tcpSegment(443, 40000, 1, 0x10, 10)), true)
	f.Add(ipv4(protoUDP, "10.0.1.1", "10.0.0.2", make([]byte, 20)), false)
	f.Add([]byte{0x45}, true)
	f.Fuzz(func(t *testing.T, pkt []byte, down bool) {
		if p, ok := Summarize(0, pkt, down, false); ok && (p.Payload < 0 || p.Payload > len(pkt)) {
			t.Errorf("payload %d of a %d-byte packet", p.Payload, len(pkt))
		}
	})
}
