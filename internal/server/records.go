package server

import (
	"time"

	"github.com/quicbench/quicbench/internal/results"
)

// Counts is the number of requests served per protocol.
type Counts struct {
	H1 int64 `json:"h1"`
	H2 int64 `json:"h2"`
	H3 int64 `json:"h3"`
}

// Add returns c + d.
func (c Counts) Add(d Counts) Counts { return Counts{c.H1 + d.H1, c.H2 + d.H2, c.H3 + d.H3} }

// Sub returns c − d.
func (c Counts) Sub(d Counts) Counts { return Counts{c.H1 - d.H1, c.H2 - d.H2, c.H3 - d.H3} }

// Of returns the count for protocol "h1", "h2" or "h3".
func (c Counts) Of(proto string) int64 {
	switch proto {
	case "h1":
		return c.H1
	case "h2":
		return c.H2
	case "h3":
		return c.H3
	}
	return 0
}

// Total is the number of requests over all protocols.
func (c Counts) Total() int64 { return c.H1 + c.H2 + c.H3 }

// Handshake kinds of a connection, as the server saw them: the values of
// the results' handshake column (results.HandshakeFull, …).
const (
	HandshakeFull       = results.HandshakeFull
	HandshakeResumed    = results.HandshakeResumed
	Handshake0RTT       = results.Handshake0RTT
	HandshakeIncomplete = results.HandshakeIncomplete
	HandshakeUnknown    = results.HandshakeUnknown
)

// ConnRecord is one client connection as the server saw it. Transport
// statistics are read when Connections is called, or for a connection that
// closed before that, when its last response was written.
type ConnRecord struct {
	// Transport is "tcp" (h1, h2) or "quic" (h3); "" where the server's
	// records do not say (Caddy's connections that served no request).
	Transport string `json:"transport"`
	// ALPN is the negotiated application protocol: "http/1.1", "h2", "h3".
	ALPN       string    `json:"alpn"`
	ServerName string    `json:"server_name"`
	Remote     string    `json:"remote"`
	Handshake  string    `json:"handshake"`
	Requests   int       `json:"requests"`
	OpenedAt   time.Time `json:"opened_at"`
	// Closed is true once the connection had closed when it was read.
	Closed bool `json:"closed"`
	// BytesSent and BytesReceived count the transport's payload: TCP bytes
	// acknowledged and received, or QUIC bytes sent (retransmissions
	// included) and received, without IP and UDP headers.
	BytesSent     uint64 `json:"bytes_sent"`
	BytesReceived uint64 `json:"bytes_received"`
	// Congestion is the congestion control: of the server's TCP socket,
	// or of the QUIC server (quic-go's is always NewReno).
	Congestion string `json:"congestion,omitempty"`
	// SmoothedRTTMs is the sender's smoothed RTT estimate, in ms.
	SmoothedRTTMs float64 `json:"srtt_ms"`
	// CwndBytes is the congestion window in bytes (TCP: cwnd segments ×
	// MSS).
	CwndBytes uint64 `json:"cwnd_bytes"`
	// Retransmits counts TCP segments retransmitted, or QUIC packets
	// declared lost (quic-go retransmits their frames in new packets).
	Retransmits uint64 `json:"retransmits"`
	// Stalls are the times the connection's streams waited for lost data
	// to be sent again, each from the lost packet's sending to the
	// resending (QUIC from quic-go's loss events; none from other
	// servers, whose stalls are read from the link's packets: TCP's
	// exactly, QUIC's estimated, breakdown.QUICLossWaits).
	Stalls []Window `json:"stalls,omitempty"`
	// Serving are the times the server worked on the connection's
	// requests, each from when the request reached its handler to when
	// its response's first byte went to the transport (the Go origin's,
	// and quinn's and quiche's from their header fields read to the
	// response's handed to the QUIC stack; none from nginx and Caddy).
	Serving []Window `json:"serving,omitempty"`
}

// Window is a stretch of wall-clock time.
type Window struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// HandshakeCounts counts records per handshake kind.
func HandshakeCounts(recs []ConnRecord) map[string]int {
	out := map[string]int{}
	for _, r := range recs {
		out[r.Handshake]++
	}
	return out
}

// HandshakeKinds lists the handshake kinds in the order tables show them.
func HandshakeKinds() []string {
	return []string{Handshake0RTT, HandshakeResumed, HandshakeFull, HandshakeIncomplete, HandshakeUnknown}
}
