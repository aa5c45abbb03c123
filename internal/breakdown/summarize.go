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
// length. It reads headers only, never the payload; false for what is
// not a whole TCP or UDP header over IPv4.
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
