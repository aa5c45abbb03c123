package testbed

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"sync"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// GoClient is an HTTP client in the client namespace that speaks exactly one
// protocol to the testbed's origins, through the emulated link.
type GoClient struct {
	*http.Client
	mu      sync.Mutex
	sockets []net.PacketConn // UDP sockets of h3 connections
}

// GoClientOptions tune a GoClient. The zero value is Go's defaults with
// no TLS session cache.
type GoClientOptions struct {
	// Sessions keeps TLS sessions (and QUIC 0-RTT state) across clients.
	Sessions tls.ClientSessionCache
	// MaxConnsPerHost limits HTTP/1.1 connections per origin (0: no limit).
	MaxConnsPerHost int
}

// NewGoClient returns a client for proto ("h1", "h2" or "h3") that trusts the
// run's CA. Close it to release its connections.
func (tb *Testbed) NewGoClient(proto string, opts ...GoClientOptions) (*GoClient, error) {
	var o GoClientOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	tlsConf := &tls.Config{RootCAs: tb.Certs.Pool, MinVersion: tls.VersionTLS13, ClientSessionCache: o.Sessions}
	c := &GoClient{}
	switch proto {
	case "h1", "h2":
		tr := &http.Transport{
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				resolved, err := tb.resolve(addr)
				if err != nil {
					return nil, err
				}
				return tb.Topo.Client.DialContext(ctx, network, resolved)
			},
			TLSClientConfig: tlsConf,
			Protocols:       new(http.Protocols),
			MaxConnsPerHost: o.MaxConnsPerHost,
		}
		tr.Protocols.SetHTTP1(proto == "h1")
		tr.Protocols.SetHTTP2(proto == "h2")
		c.Client = &http.Client{Transport: tr}
	case "h3":
		tr := &http3.Transport{
			TLSClientConfig: tlsConf,
			QUICConfig:      browserWindows(),
			Dial: func(ctx context.Context, addr string, tlsCfg *tls.Config, cfg *quic.Config) (*quic.Conn, error) {
				resolved, err := tb.resolve(addr)
				if err != nil {
					return nil, err
				}
				raddr, err := net.ResolveUDPAddr("udp4", resolved)
				if err != nil {
					return nil, err
				}
				pc, err := tb.Topo.Client.ListenPacket("udp4", "0.0.0.0:0")
				if err != nil {
					return nil, err
				}
				c.mu.Lock()
				c.sockets = append(c.sockets, pc)
				c.mu.Unlock()
				return quic.DialEarly(ctx, pc, raddr, tlsCfg, cfg)
			},
		}
		c.Client = &http.Client{Transport: tr}
	default:
		return nil, fmt.Errorf("protocol %q: want h1, h2 or h3", proto)
	}
	return c, nil
}

// Close closes the client's connections and sockets.
func (c *GoClient) Close() {
	switch tr := c.Transport.(type) {
	case *http.Transport:
		tr.CloseIdleConnections()
	case *http3.Transport:
		tr.Close()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, pc := range c.sockets {
		pc.Close()
	}
}

// resolve maps "host:port" of an origin host to "ip:port".
func (tb *Testbed) resolve(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	if ip, ok := tb.Addrs[host]; ok {
		return net.JoinHostPort(ip.String(), port), nil
	}
	return "", fmt.Errorf("host %s is not an origin of this testbed", host)
}

// browserWindows is a QUIC client configuration with a browser's
// flow-control windows (Chromium's: 6 MB a stream, 15 MB a connection,
// from the start), so that a download's sender is held by its congestion
// control, not by the client's window updates (quic-go's own start at
// 512 KB a stream).
func browserWindows() *quic.Config {
	const stream, conn = 6 << 20, 15 << 20
	return &quic.Config{InitialStreamReceiveWindow: stream, MaxStreamReceiveWindow: stream,
		InitialConnectionReceiveWindow: conn, MaxConnectionReceiveWindow: conn}
}
