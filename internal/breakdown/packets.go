package breakdown

import (
	"net/netip"
	"time"
)

// Packet is one packet of a load on the emulated link, as the breakdown
// reads it.
type Packet struct {
	// At is when the link delivered the packet, or dropped it, since the
	// load began; Sent when the link took it in, Bottleneck the time it
	// then waited in the bottleneck's queue and was sent at its rate (0 on
	// a link without a rate; for a packet dropped on arrival, the time it
	// would have waited).
	At, Sent, Bottleneck time.Duration
	Down                 bool // server to client
	Dropped              bool
	Conn                 Conn
	// Seq is a TCP segment's first sequence number; Payload its bytes of
	// payload (of a UDP datagram: its payload).
	Seq     uint32
	Payload int
	SYN     bool
	// QUICApp is true for a UDP datagram that holds a QUIC packet of
	// application data (0-RTT or 1-RTT): its sender had finished its
	// handshake, or sent early data.
	QUICApp bool
}

// Conn names a connection from the client's side: the client's address
// and port, the server's, and whether it runs over UDP (QUIC).
type Conn struct {
	Client, Server netip.AddrPort
	UDP            bool
}
