package origin

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/site/gen"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/quicbench/quicbench/internal/site"
)

// startLoopback serves a one-file site on 127.0.0.1 (TCP and UDP on one
// port) and returns the server, its address and the client TLS config.
func startLoopback(t testing.TB) (*Server, string, *tls.Config, *site.Site) {
	t.Helper()
	s, err := gen.Files("www.quicbench.test", []int64{50_000}, 1)
	if err != nil {
		t.Fatal(err)
	}
	certs, err := NewCerts(t.TempDir(), s.Hosts(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	tcp, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	udp, err := net.ListenPacket("udp4", tcp.Addr().String())
	if err != nil {
		tcp.Close()
		t.Fatal(err)
	}
	srv, err := Start(s, certs.Leaf, []Listener{{TCP: tcp, UDP: udp}}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(); udp.Close() })
	clientTLS := &tls.Config{
		RootCAs: certs.Pool, ServerName: "www.quicbench.test", MinVersion: tls.VersionTLS13,
		ClientSessionCache: tls.NewLRUClientSessionCache(8),
	}
	return srv, tcp.Addr().String(), clientTLS, s
}

func get(t testing.TB, c *http.Client, method, url string, header http.Header) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// onlyConn returns the one connection record, failing otherwise.
func onlyConn(t *testing.T, srv *Server) server.ConnRecord {
	t.Helper()
	recs := srv.Connections()
	if len(recs) != 1 {
		t.Fatalf("got %d connection records, want 1: %+v", len(recs), recs)
	}
	return recs[0]
}

func TestTCPConnectionRecordsAndResumption(t *testing.T) {
	srv, addr, clientTLS, _ := startLoopback(t)
	tr := &http.Transport{
		TLSClientConfig: clientTLS, ForceAttemptHTTP2: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "tcp4", addr)
		},
	}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	url := "https://www.quicbench.test" + gen.FilePath(50_000)

	get(t, c, http.MethodGet, url, nil)
	first := onlyConn(t, srv)
	if first.Transport != "tcp" || first.ALPN != "h2" || first.Handshake != server.HandshakeFull || first.Requests != 1 {
		t.Errorf("first connection = %+v, want tcp h2 full with 1 request", first)
	}
	if first.BytesSent < 50_000 || first.CwndBytes == 0 || first.SmoothedRTTMs <= 0 {
		t.Errorf("first connection's TCP_INFO = sent %d B, cwnd %d B, srtt %.3f ms; want ≥ 50000 B sent and a cwnd and RTT", first.BytesSent, first.CwndBytes, first.SmoothedRTTMs)
	}

	srv.CloseConnections()
	if recs := srv.Connections(); len(recs) != 0 {
		t.Fatalf("records after CloseConnections: %+v", recs)
	}
	tr.CloseIdleConnections() // as a browser does once it sees the FIN
	get(t, c, http.MethodGet, url, nil)
	if again := onlyConn(t, srv); again.Handshake != server.HandshakeResumed {
		t.Errorf("second connection's handshake = %q, want %q", again.Handshake, server.HandshakeResumed)
	}
}

func TestQUICResumesWith0RTT(t *testing.T) {
	srv, addr, clientTLS, _ := startLoopback(t)
	c := h3Client(t, addr, clientTLS, 0)
	url := "https://www.quicbench.test" + gen.FilePath(50_000)

	get(t, c, http.MethodGet, url, nil)
	if first := onlyConn(t, srv); first.Transport != "quic" || first.ALPN != "h3" || first.Handshake != server.HandshakeFull || first.BytesSent < 50_000 || first.CwndBytes == 0 {
		t.Errorf("first connection = %+v, want quic h3 full, ≥ 50000 B sent, a cwnd", first)
	}
	srv.CloseConnections()
	c.CloseIdleConnections()
	get(t, c, http3.MethodGet0RTT, url, nil)
	if again := onlyConn(t, srv); again.Handshake != server.Handshake0RTT {
		t.Errorf("second connection's handshake = %q, want %q", again.Handshake, server.Handshake0RTT)
	}
}

func TestCachePolicy(t *testing.T) {
	srv, addr, clientTLS, _ := startLoopback(t)
	tr := &http.Transport{
		TLSClientConfig: clientTLS,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "tcp4", addr)
		},
	}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	url := "https://www.quicbench.test" + gen.FilePath(50_000)

	off := get(t, c, http.MethodGet, url, nil)
	if cc, etag := off.Header.Get("Cache-Control"), off.Header.Get("ETag"); cc != "no-store" || etag != "" {
		t.Errorf("cache off: Cache-Control %q, ETag %q; want no-store and none", cc, etag)
	}
	srv.SetCache(true)
	on := get(t, c, http.MethodGet, url, nil)
	etag := on.Header.Get("ETag")
	if on.StatusCode != 200 || on.Header.Get("Cache-Control") != CacheControl || etag == "" || on.Header.Get("Last-Modified") != LastModified {
		t.Fatalf("cache on: %d, headers %v", on.StatusCode, on.Header)
	}
	if r := get(t, c, http.MethodGet, url, http.Header{"If-None-Match": {etag}}); r.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match with the current ETag: status %d, want 304", r.StatusCode)
	}
	if r := get(t, c, http.MethodGet, url, http.Header{"If-None-Match": {`"other"`}}); r.StatusCode != 200 || r.ContentLength != 50_000 {
		t.Errorf("If-None-Match with another ETag: status %d, length %d; want 200 and the body", r.StatusCode, r.ContentLength)
	}
}

// dropConn is a client socket that can drop everything it receives.
type dropConn struct {
	net.PacketConn
	drop    atomic.Bool
	dropped atomic.Int64
}

func (d *dropConn) ReadFrom(p []byte) (int, net.Addr, error) {
	for {
		n, addr, err := d.PacketConn.ReadFrom(p)
		if err != nil || !d.drop.Load() {
			return n, addr, err
		}
		d.dropped.Add(1)
	}
}

// TestClosedConnectionGetsAStatelessReset: when the server's
// CONNECTION_CLOSE is lost, the client's next packet on the dead connection
// gets a stateless reset, so it learns at once instead of after its idle
// timeout (a lossy link's repeat visits waited ~6 s without this).
func TestClosedConnectionGetsAStatelessReset(t *testing.T) {
	srv, addr, clientTLS, _ := startLoopback(t)
	udpAddr, err := net.ResolveUDPAddr("udp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	dc := &dropConn{PacketConn: pc}
	conn, err := quic.Dial(context.Background(), dc, udpAddr, http3.ConfigureTLSConfig(clientTLS), &quic.Config{MaxIdleTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	dc.drop.Store(true) // the server's CONNECTION_CLOSE, and its repeats, are lost
	srv.CloseConnections()
	time.Sleep(1500 * time.Millisecond) // the server forgets the connection (3 PTOs)
	dc.drop.Store(false)
	start := time.Now()
	// Requests on the dead connection, as a browser's next visit would send.
	for time.Since(start) < 3*time.Second && conn.Context().Err() == nil {
		if str, err := conn.OpenStream(); err == nil {
			str.Write(make([]byte, 1000)) // as large as a request: tiny packets get no reset
		}
		select {
		case <-conn.Context().Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	var reset *quic.StatelessResetError
	if cause := context.Cause(conn.Context()); !errors.As(cause, &reset) {
		t.Fatalf("the dead connection ended with %v after %v (%d packets dropped), want a stateless reset", cause, time.Since(start), dc.dropped.Load())
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the client learned of the reset after %v", d)
	}
}
