package origin

import (
	"crypto/tls"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quicbench/quicbench/internal/breakdown"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/server"
	"golang.org/x/sys/unix"
)

// connTracker keeps the server's connections since the last reset.
type connTracker struct {
	mu    sync.Mutex
	tcp   map[net.Conn]*server.ConnRecord
	quic  map[*quic.Conn]*server.ConnRecord
	order []*server.ConnRecord
	// traces are the QUIC connections' loss traces by client address.
	traces map[string]*lossTrace
}

func newConnTracker() *connTracker {
	return &connTracker{tcp: map[net.Conn]*server.ConnRecord{}, quic: map[*quic.Conn]*server.ConnRecord{}, traces: map[string]*lossTrace{}}
}

// traceOf notes that the QUIC connection from client address remote has
// loss trace t.
func (t *connTracker) traceOf(remote string, trace *lossTrace) {
	t.mu.Lock()
	t.traces[remote] = trace
	t.mu.Unlock()
}

// tcpState is net/http's ConnState hook.
func (t *connTracker) tcpState(c net.Conn, state http.ConnState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch state {
	case http.StateNew:
		rec := &server.ConnRecord{Transport: "tcp", Remote: c.RemoteAddr().String(), OpenedAt: time.Now(), Handshake: server.HandshakeIncomplete}
		t.tcp[c] = rec
		t.order = append(t.order, rec)
	case http.StateClosed, http.StateHijacked:
		if rec := t.tcp[c]; rec != nil {
			rec.Closed = true
		}
	}
}

// quicConn registers a new QUIC connection (http3's ConnContext hook).
func (t *connTracker) quicConn(c *quic.Conn) {
	rec := &server.ConnRecord{Transport: "quic", Remote: c.RemoteAddr().String(), OpenedAt: time.Now(), Handshake: server.HandshakeIncomplete}
	t.mu.Lock()
	t.quic[c] = rec
	t.order = append(t.order, rec)
	t.mu.Unlock()
}

// request counts a request on its connection, notes the time the server
// worked on it (served; none when its From is zero) and refreshes the
// record.
func (t *connTracker) request(r *http.Request, served server.Window) {
	t.mu.Lock()
	defer t.mu.Unlock()
	note := func(rec *server.ConnRecord) {
		rec.Requests++
		if !served.From.IsZero() {
			rec.Serving = append(rec.Serving, served)
		}
	}
	for c, rec := range t.tcp {
		if !rec.Closed && rec.Remote == r.RemoteAddr {
			note(rec)
			t.refreshTCP(c, rec)
			return
		}
	}
	for c, rec := range t.quic {
		if rec.Remote == r.RemoteAddr {
			note(rec)
			refreshQUIC(c, rec)
			return
		}
	}
}

// snapshot refreshes every open connection's record and returns copies in
// the order the connections opened.
func (t *connTracker) snapshot() []server.ConnRecord {
	t.mu.Lock()
	defer t.mu.Unlock()
	for c, rec := range t.tcp {
		if !rec.Closed {
			t.refreshTCP(c, rec)
		}
	}
	for c, rec := range t.quic {
		if c.Context().Err() != nil {
			rec.Closed = true
		}
		refreshQUIC(c, rec)
		if trace := t.traces[rec.Remote]; trace != nil {
			rec.Stalls = windows(trace.stalls())
		}
	}
	out := make([]server.ConnRecord, len(t.order))
	for i, rec := range t.order {
		out[i] = *rec
	}
	return out
}

// closeAll closes every connection and forgets all records. The clients
// see TCP connections end with close_notify and FIN, and QUIC connections
// with CONNECTION_CLOSE carrying H3_NO_ERROR.
func (t *connTracker) closeAll() {
	t.mu.Lock()
	tcp, q := t.tcp, t.quic
	t.tcp, t.quic, t.order, t.traces = map[net.Conn]*server.ConnRecord{}, map[*quic.Conn]*server.ConnRecord{}, nil, map[string]*lossTrace{}
	t.mu.Unlock()
	for c := range tcp {
		c.Close()
	}
	for c := range q {
		c.CloseWithError(0x100, "") // H3_NO_ERROR
	}
}

// refreshTCP reads the TLS state and TCP_INFO of c into rec.
func (t *connTracker) refreshTCP(c net.Conn, rec *server.ConnRecord) {
	raw := c
	if tc, ok := c.(*tls.Conn); ok {
		if st := tc.ConnectionState(); st.HandshakeComplete {
			rec.ALPN, rec.ServerName = st.NegotiatedProtocol, st.ServerName
			rec.Handshake = server.HandshakeFull
			if st.DidResume {
				rec.Handshake = server.HandshakeResumed
			}
		}
		raw = tc.NetConn()
	}
	sc, ok := raw.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	var info *unix.TCPInfo
	var cc string
	var sockErr error
	if err := rc.Control(func(fd uintptr) {
		info, sockErr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
		cc, _ = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION)
	}); err != nil || sockErr != nil {
		return
	}
	rec.Congestion = strings.TrimRight(cc, "\x00")
	rec.BytesSent, rec.BytesReceived = info.Bytes_acked, info.Bytes_received
	rec.SmoothedRTTMs = float64(info.Rtt) / 1000
	rec.CwndBytes = uint64(info.Snd_cwnd) * uint64(info.Snd_mss)
	rec.Retransmits = uint64(info.Total_retrans)
}

// refreshQUIC reads the TLS state and quic-go's statistics of c into rec.
func refreshQUIC(c *quic.Conn, rec *server.ConnRecord) {
	select {
	case <-c.HandshakeComplete():
	default:
		return
	}
	st := c.ConnectionState()
	rec.ALPN, rec.ServerName = st.TLS.NegotiatedProtocol, st.TLS.ServerName
	switch {
	case st.Used0RTT:
		rec.Handshake = server.Handshake0RTT
	case st.TLS.DidResume:
		rec.Handshake = server.HandshakeResumed
	default:
		rec.Handshake = server.HandshakeFull
	}
	s := c.ConnectionStats()
	rec.Congestion = string(factor.CCNewReno) // quic-go's only one (package stacks)
	rec.BytesSent, rec.BytesReceived = s.BytesSent, s.BytesReceived
	rec.SmoothedRTTMs = float64(s.SmoothedRTT) / float64(time.Millisecond)
	rec.CwndBytes = s.CongestionWindow
	rec.Retransmits = s.PacketsLost
}

// windows are stalls as a record holds them.
func windows(stalls []breakdown.Window) []server.Window {
	out := make([]server.Window, len(stalls))
	for i, w := range stalls {
		out[i] = server.Window{From: w.From, To: w.To}
	}
	return out
}
