package caddy_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/quicbench/quicbench/internal/caddy"
	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/origin"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/site/gen"
	"github.com/quicbench/quicbench/internal/testbed"
	"github.com/quicbench/quicbench/internal/testenv"
)

// cell is a network with a two-origin synthetic page for Caddy to serve.
type cell struct {
	net   *testbed.Network
	page  *site.Site
	certs *origin.Certs
	cfg   caddy.Config
}

func newCell(t *testing.T) *cell {
	t.Helper()
	testenv.RequireRoot(t)
	testenv.RequireFile(t, caddy.DefaultPath, "make caddy (apt-get install caddy)")
	page, err := gen.Synthetic(factor.Page{Kind: factor.PageSynthetic, Objects: 4, ObjectBytes: 20_000}, gen.OriginHosts(2), 5)
	if err != nil {
		t.Fatal(err)
	}
	n, err := testbed.StartNetwork(netns.RunName(os.Getpid(), fmt.Sprintf("cd%d", time.Now().UnixNano()%1e6)),
		emulator.Config{Up: link.Config{Delay: 5 * time.Millisecond}, Down: link.Config{Delay: 5 * time.Millisecond}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	dir := t.TempDir()
	certs, err := origin.NewCerts(dir, page.Hosts(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return &cell{net: n, page: page, certs: certs, cfg: caddy.Config{Site: page, Dir: filepath.Join(dir, "caddy"), Namespace: n.Topo.Servers,
		CertFile: certs.LeafFile, KeyFile: certs.LeafKeyFile, TCP: true, QUIC: true, Addrs: testbed.AddrsOf(page.Hosts(), n.Topo.ServerAddrs)}}
}

// client is a client in the client namespace for "h1", "h2" or "h3", with
// a TLS session cache.
func (c *cell) client(t *testing.T, proto string) *http.Client {
	t.Helper()
	tlsConf := &tls.Config{RootCAs: c.certs.Pool, MinVersion: tls.VersionTLS13, ClientSessionCache: tls.NewLRUClientSessionCache(8)}
	if proto == "h3" {
		var conn *net.UDPConn
		if err := c.net.Topo.Client.Do(func() (err error) {
			conn, err = net.ListenUDP("udp4", nil)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		qt := &quic.Transport{Conn: conn}
		t.Cleanup(func() { qt.Close(); conn.Close() })
		return &http.Client{Transport: &http3.Transport{TLSClientConfig: tlsConf,
			Dial: func(ctx context.Context, addr string, tc *tls.Config, qc *quic.Config) (*quic.Conn, error) {
				host, port, _ := net.SplitHostPort(addr)
				udp := &net.UDPAddr{IP: c.cfg.Addrs[host].AsSlice(), Port: atoi(port)}
				return qt.DialEarly(ctx, udp, tc, qc)
			}}}
	}
	tr := &http.Transport{TLSClientConfig: tlsConf, Protocols: new(http.Protocols),
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, _ := net.SplitHostPort(addr)
			return c.net.Topo.Client.DialContext(ctx, "tcp4", net.JoinHostPort(c.cfg.Addrs[host].String(), port))
		}}
	tr.Protocols.SetHTTP1(proto == "h1")
	tr.Protocols.SetHTTP2(proto == "h2")
	return &http.Client{Transport: tr}
}

func atoi(s string) int {
	var n int
	fmt.Sscan(s, &n)
	return n
}

func fetch(t *testing.T, c *http.Client, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// TestServesTheSiteLikeTheGoOrigin: one Caddy process serves the page's
// bytes and the Go origin's header fields over h1, h2 and h3; its access
// log counts each protocol and names each connection's handshake; after
// CloseConnections (a restart) a client resumes its TLS session; a path
// outside the site is a 404 that the replay counts.
func TestServesTheSiteLikeTheGoOrigin(t *testing.T) {
	c := newCell(t)
	srv, err := caddy.Start(c.cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	urls := append([]string{c.page.DocumentURL()}, c.page.Subresources...)
	wantMajor := map[string]int{"h1": 1, "h2": 2, "h3": 3}
	clients := map[string]*http.Client{}
	for _, proto := range []string{"h1", "h2", "h3"} {
		clients[proto] = c.client(t, proto)
		for _, u := range urls {
			resp, body := fetch(t, clients[proto], u)
			want := lookup(c.page, u)
			if resp.StatusCode != 200 || resp.ProtoMajor != wantMajor[proto] || string(body) != string(want.Body) {
				t.Errorf("%s %s: status %d, HTTP/%d, %d bytes; want 200 with the site's %d bytes", proto, u, resp.StatusCode, resp.ProtoMajor, len(body), len(want.Body))
			}
			h := resp.Header
			if h.Get("Content-Type") != want.ContentType || h.Get("Cache-Control") != "no-store" || h.Get("Timing-Allow-Origin") != "*" ||
				h.Get("Server") != "" || h.Get("Alt-Svc") != "" || h.Get("Etag") != "" || h.Get("Last-Modified") != "" {
				t.Errorf("%s %s: header fields %v, want the Go origin's with the cache off", proto, u, h)
			}
		}
	}
	if resp, _ := fetch(t, clients["h3"], "https://www.quicbench.test/nothing"); resp.StatusCode != 404 {
		t.Errorf("a path outside the site: status %d, want 404", resp.StatusCode)
	}
	n := int64(len(urls))
	if got := srv.Counts(); got != (server.Counts{H1: n, H2: n, H3: n + 1}) {
		t.Errorf("counts %+v, want %d requests over each protocol (and the 404 over h3)", got, n)
	}
	if rep := srv.TakeReplay(); rep.Exact != 3*n || rep.Unmatched != 1 {
		t.Errorf("replay %+v, want %d exact and 1 unmatched", rep, 3*n)
	}
	checkConnections(t, srv.Connections())
	exited := srv.Exited()
	before := srv.Counts()
	if err := srv.CloseConnections(); err != nil {
		t.Fatal(err)
	}
	if len(srv.Connections()) != 0 {
		t.Errorf("records after CloseConnections: %+v", srv.Connections())
	}
	// The old connections closed: each client opens a new one at once,
	// h2's resuming its TLS session (h3's state Caddy's log does not say).
	fetch(t, clients["h2"], c.page.DocumentURL())
	fetch(t, clients["h3"], c.page.DocumentURL())
	recs := srv.Connections()
	if len(recs) != 2 || recs[0].Handshake != server.HandshakeResumed || recs[0].ALPN != "h2" ||
		recs[1].Handshake != server.HandshakeUnknown || recs[1].ALPN != "h3" || recs[1].Requests != 1 {
		t.Errorf("after CloseConnections, the h2 and h3 clients' connections: %+v, want a resumed h2 one and a new h3 one", recs)
	}
	select {
	case <-exited:
		t.Errorf("the reload counted as the server's exit: %s", srv.ExitReason())
	default:
	}
	if got := srv.Counts(); got != before.Add(server.Counts{H2: 1, H3: 1}) {
		t.Errorf("counts after the reload %+v, want %+v and one more each of h2 and h3", got, before)
	}
}

// checkConnections checks that recs hold first connections over each
// transport, each with requests: a full handshake over TCP, an unknown
// one over QUIC.
func checkConnections(t *testing.T, recs []server.ConnRecord) {
	t.Helper()
	alpns := map[string]string{}
	for _, r := range recs {
		alpns[r.ALPN] = r.Transport
		kind := server.HandshakeFull
		if r.Transport == "quic" {
			kind = server.HandshakeUnknown
		}
		if r.Handshake != kind || r.Requests < 1 {
			t.Errorf("connection %+v: want a %s handshake and requests", r, kind)
		}
	}
	if alpns["http/1.1"] != "tcp" || alpns["h2"] != "tcp" || alpns["h3"] != "quic" {
		t.Errorf("connections by protocol %v, want http/1.1 and h2 over tcp, h3 over quic", alpns)
	}
}

// lookup is the site's resource at the absolute URL u.
func lookup(s *site.Site, u string) *site.Resource {
	rest := u[len("https://"):]
	host, path := rest, "/"
	for i := range rest {
		if rest[i] == '/' {
			host, path = rest[:i], rest[i:]
			break
		}
	}
	return s.Lookup(host, path)
}

// TestCacheOnGivesTheCacheFields: with the cache on, responses carry the
// Go origin's Cache-Control, an ETag and its Last-Modified, and a
// conditional request gets 304.
func TestCacheOnGivesTheCacheFields(t *testing.T) {
	c := newCell(t)
	srv, err := caddy.Start(c.cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if err := srv.SetCache(true); err != nil {
		t.Fatal(err)
	}
	cl := c.client(t, "h2")
	resp, _ := fetch(t, cl, c.page.DocumentURL())
	if resp.Header.Get("Cache-Control") != origin.CacheControl || resp.Header.Get("Etag") == "" || resp.Header.Get("Last-Modified") != origin.LastModified {
		t.Fatalf("cache on: %v", resp.Header)
	}
	req, _ := http.NewRequest(http.MethodGet, c.page.DocumentURL(), nil)
	req.Header.Set("If-None-Match", resp.Header.Get("Etag"))
	again, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	again.Body.Close()
	if again.StatusCode != http.StatusNotModified {
		t.Errorf("a conditional request: status %d, want 304", again.StatusCode)
	}
}

// TestARecordedPageIsRefused: Caddy serves files, so a recorded page,
// whose statuses and header fields it would not replay, is refused at
// start with the stacks that replay it.
func TestARecordedPageIsRefused(t *testing.T) {
	c := newCell(t)
	c.cfg.Site.Recorded = true
	if _, err := caddy.Start(c.cfg); err == nil || !strings.Contains(err.Error(), "--server go") {
		t.Errorf("a recorded page: %v, want it refused naming the stacks that replay it", err)
	}
}
