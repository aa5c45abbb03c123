package breakdown

import (
	"encoding/binary"
	"net/netip"
	"time"
)

// IP protocol numbers the summary reads.
const (
	protoTCP = 6
	protoUDP = 17
)

// Summarize reads the IPv4 packet pkt, which the link delivered or
// dropped at at, into the Packet the breakdown reads: its connection as
// the client names it (down: the server sent it), a TCP segment's
// sequence number, SYN flag and payload length, a UDP datagram's payload
// length and whether it holds QUIC application data (quicAppData). It
// reads headers only, never the payload; false for what is not a whole
// TCP or UDP header over IPv4.
func Summarize(at time.Duration, pkt []byte, down, dropped bool) (Packet, bool) {
	if len(pkt) < 20 || pkt[0]>>4 != 4 {
		return Packet{}, false
	}
	ihl := int(pkt[0]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(pkt[2:4]))
	if ihl < 20 || total < ihl || total > len(pkt) || binary.BigEndian.Uint16(pkt[6:8])&0x1fff != 0 {
		return Packet{}, false // a fragment after the first has no header to read
	}
	src, dst := netip.AddrFrom4([4]byte(pkt[12:16])), netip.AddrFrom4([4]byte(pkt[16:20]))
	l4 := pkt[ihl:total]
	p := Packet{At: at, Down: down, Dropped: dropped}
	var srcPort, dstPort uint16
	switch pkt[9] {
	case protoTCP:
		if len(l4) < 20 || int(l4[12]>>4)*4 < 20 || int(l4[12]>>4)*4 > len(l4) {
			return Packet{}, false
		}
		p.Seq = binary.BigEndian.Uint32(l4[4:8])
		p.SYN = l4[13]&0x02 != 0
		p.Payload = len(l4) - int(l4[12]>>4)*4
	case protoUDP:
		if len(l4) < 8 {
			return Packet{}, false
		}
		p.Conn.UDP = true
		p.Payload = len(l4) - 8
		p.QUICApp = quicAppData(l4[8:])
	default:
		return Packet{}, false
	}
	srcPort, dstPort = binary.BigEndian.Uint16(l4[0:2]), binary.BigEndian.Uint16(l4[2:4])
	client, server := netip.AddrPortFrom(src, srcPort), netip.AddrPortFrom(dst, dstPort)
	if down {
		client, server = server, client
	}
	p.Conn.Client, p.Conn.Server = client, server
	return p, true
}

// QUIC versions whose long-header packet types the summary reads: 1
// (RFC 9000) and 2 (RFC 9369, which numbers the types otherwise).
const (
	quicV1 = 0x00000001
	quicV2 = 0x6b3343cf
)

// quicAppData reports whether the UDP payload b holds a QUIC packet of
// application data: a 1-RTT packet (short header) or a 0-RTT one. It
// walks the coalesced long-header packets by their cleartext lengths
// (RFC 9000 section 17.2), reading nothing protected.
func quicAppData(b []byte) bool {
	for len(b) > 0 {
		if b[0]&0x80 == 0 {
			return b[0]&0x40 != 0 // a short header has its fixed bit set
		}
		if len(b) < 6 {
			return false
		}
		typ := b[0] >> 4 & 3
		initial, zeroRTT, retry := byte(0), byte(1), byte(3)
		switch binary.BigEndian.Uint32(b[1:5]) {
		case quicV1:
		case quicV2:
			initial, zeroRTT, retry = 1, 2, 0
		default:
			return false // version negotiation, or a version not read here
		}
		switch typ {
		case zeroRTT:
			return true
		case retry:
			return false
		}
		rest, ok := skipConnIDs(b[5:])
		if ok && typ == initial {
			rest, ok = skipCounted(rest) // the token
		}
		if !ok {
			return false
		}
		if b, ok = skipCounted(rest); !ok { // the packet
			return false
		}
	}
	return false
}

// skipConnIDs skips a long header's two length-prefixed connection IDs.
func skipConnIDs(b []byte) ([]byte, bool) {
	for range 2 {
		if len(b) < 1 || len(b) < 1+int(b[0]) {
			return nil, false
		}
		b = b[1+int(b[0]):]
	}
	return b, true
}

// skipCounted skips a variable-length integer n (RFC 9000 section 16) and
// the n bytes after it.
func skipCounted(b []byte) ([]byte, bool) {
	if len(b) == 0 {
		return nil, false
	}
	size := 1 << (b[0] >> 6)
	if len(b) < size {
		return nil, false
	}
	n := uint64(b[0] & 0x3f)
	for _, c := range b[1:size] {
		n = n<<8 | uint64(c)
	}
	if n > uint64(len(b)-size) {
		return nil, false
	}
	return b[size+int(n):], true
}
