package origin

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"github.com/quicbench/quicbench/internal/site/gen"
)

// droppingConn drops every nth datagram it reads after the first 20 (the
// handshake's): the server's application data, lost on the way in.
type droppingConn struct {
	net.PacketConn
	n    int64
	seen atomic.Int64
}

func (c *droppingConn) ReadFrom(b []byte) (int, net.Addr, error) {
	for {
		n, addr, err := c.PacketConn.ReadFrom(b)
		if err != nil || c.n == 0 {
			return n, addr, err
		}
		if k := c.seen.Add(1); k <= 20 || k%c.n != 0 {
			return n, addr, err
		}
	}
}

// h3Client is an HTTP/3 client of the server at addr whose socket drops every
// dropEvery-th datagram it receives (0: none).
func h3Client(t testing.TB, addr string, clientTLS *tls.Config, dropEvery int64) *http.Client {
	udpAddr, err := net.ResolveUDPAddr("udp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http3.Transport{
		TLSClientConfig: clientTLS,
		Dial: func(ctx context.Context, _ string, tlsCfg *tls.Config, cfg *quic.Config) (*quic.Conn, error) {
			pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
			if err != nil {
				return nil, err
			}
			t.Cleanup(func() { pc.Close() })
			return quic.DialEarly(ctx, &droppingConn{PacketConn: pc, n: dropEvery}, udpAddr, tlsCfg, cfg)
		},
	}
	t.Cleanup(func() { tr.Close() })
	return &http.Client{Transport: tr}
}

// TestAQUICConnectionRecordsItsStalls: a download over a client socket
// that drops every 7th datagram makes the server declare packets lost and
// send their data again; its record holds the waits, each from a lost
// packet's sending to the resending. Without drops it holds none.
func TestAQUICConnectionRecordsItsStalls(t *testing.T) {
	srv, addr, clientTLS, _ := startLoopback(t)
	get(t, h3Client(t, addr, clientTLS, 0), http.MethodGet, "https://www.quicbench.test"+gen.FilePath(50_000), nil)
	if rec := onlyConn(t, srv); len(rec.Stalls) != 0 {
		t.Errorf("without loss: %d stalls", len(rec.Stalls))
	}
	srv.CloseConnections()
	get(t, h3Client(t, addr, clientTLS, 7), http.MethodGet, "https://www.quicbench.test"+gen.FilePath(50_000), nil)
	rec := onlyConn(t, srv)
	if len(rec.Stalls) == 0 || rec.Retransmits == 0 {
		t.Fatalf("dropping every 7th datagram: %d stalls, %d packets lost", len(rec.Stalls), rec.Retransmits)
	}
	for _, w := range rec.Stalls {
		if !w.To.After(w.From) || w.From.Before(rec.OpenedAt) {
			t.Errorf("stall %v–%v of a connection opened at %v", w.From, w.To, rec.OpenedAt)
		}
	}
}

// BenchmarkH3Download is a 50 kB download over HTTP/3 on loopback with
// the loss trace on and off: what following every packet costs the
// server and client together.
func BenchmarkH3Download(b *testing.B) {
	for _, traced := range []bool{false, true} {
		name := "untraced"
		if traced {
			name = "traced"
		}
		b.Run(name, func(b *testing.B) {
			srv, addr, clientTLS, _ := startLoopback(b)
			srv.untraced.Store(!traced)
			c := h3Client(b, addr, clientTLS, 0)
			url := "https://www.quicbench.test" + gen.FilePath(50_000)
			b.ResetTimer()
			for range b.N {
				get(b, c, http.MethodGet, url, nil)
			}
		})
	}
}
