package emulator

import (
	"net/netip"
	"sync"
	"time"

	"github.com/quicbench/quicbench/internal/breakdown"
)

// PacketLog keeps a summary of every packet the link delivers or drops
// while it is set (Emulator.SetPacketLog): its connection, TCP sequence
// number and SYN flag, payload length, direction, fate and time
// (breakdown.Summarize), never its payload. It is what a load's breakdown
// reads after the load.
type PacketLog struct {
	start   time.Time
	mu      sync.Mutex
	packets []loggedPacket
}

// loggedPacket is a breakdown.Packet in 56 bytes: an IPv4 link's packets
// only.
type loggedPacket struct {
	at, sent, bottleneck time.Duration
	seq                  uint32
	payload              uint16
	clientPort, srvPort  uint16
	client, server       [4]byte
	down, dropped, syn   bool
	udp, quicApp         bool
}

// packetLogCapacity is how many packets a log holds before it grows: a
// load of about 10 MB.
const packetLogCapacity = 8192

// NewPacketLog starts a log whose times count from start (the load's).
func NewPacketLog(start time.Time) *PacketLog {
	return &PacketLog{start: start, packets: make([]loggedPacket, 0, packetLogCapacity)}
}

// add notes pkt, taken in at sent, delivered or dropped at now, after
// bottleneck at the bottleneck.
func (l *PacketLog) add(sent, now time.Time, bottleneck time.Duration, pkt []byte, down, dropped bool) {
	p, ok := breakdown.Summarize(now.Sub(l.start), pkt, down, dropped)
	if !ok {
		return
	}
	lp := loggedPacket{at: p.At, sent: sent.Sub(l.start), bottleneck: bottleneck, quicApp: p.QUICApp, seq: p.Seq, payload: uint16(p.Payload), down: down, dropped: dropped, syn: p.SYN, udp: p.Conn.UDP,
		client: p.Conn.Client.Addr().As4(), server: p.Conn.Server.Addr().As4(), clientPort: p.Conn.Client.Port(), srvPort: p.Conn.Server.Port()}
	l.mu.Lock()
	l.packets = append(l.packets, lp)
	l.mu.Unlock()
}

// Packets is what the log holds, in the order the link handled them.
func (l *PacketLog) Packets() []breakdown.Packet {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]breakdown.Packet, len(l.packets))
	for i, lp := range l.packets {
		out[i] = breakdown.Packet{At: lp.at, Sent: lp.sent, Bottleneck: lp.bottleneck, QUICApp: lp.quicApp, Down: lp.down, Dropped: lp.dropped, Seq: lp.seq, Payload: int(lp.payload), SYN: lp.syn,
			Conn: breakdown.Conn{UDP: lp.udp,
				Client: netip.AddrPortFrom(netip.AddrFrom4(lp.client), lp.clientPort),
				Server: netip.AddrPortFrom(netip.AddrFrom4(lp.server), lp.srvPort)}}
	}
	return out
}

// Start is when the log's times count from.
func (l *PacketLog) Start() time.Time { return l.start }

// SetPacketLog starts noting every packet the link delivers or drops in
// l; nil stops. Summarizing costs each packet a header read and an
// append (BENCHMARKS.md measures it).
func (e *Emulator) SetPacketLog(l *PacketLog) { e.packetLog.Store(l) }
