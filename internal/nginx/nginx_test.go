package nginx_test

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

	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/nginx"
	"github.com/quicbench/quicbench/internal/origin"
	"github.com/quicbench/quicbench/internal/proc"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/site/gen"
	"github.com/quicbench/quicbench/internal/testbed"
	"github.com/quicbench/quicbench/internal/testenv"
)

// cell is a network with nginx serving a two-origin synthetic page.
type cell struct {
	net   *testbed.Network
	page  *site.Site
	certs *origin.Certs
	cfg   nginx.Config
}

func newCell(t *testing.T) *cell {
	t.Helper()
	testenv.RequireRoot(t)
	testenv.RequireFile(t, nginx.DefaultPath, "apt-get install nginx")
	page, err := gen.Synthetic(factor.Page{Kind: factor.PageSynthetic, Objects: 4, ObjectBytes: 20_000}, gen.OriginHosts(2), 5)
	if err != nil {
		t.Fatal(err)
	}
	n, err := testbed.StartNetwork(netns.RunName(os.Getpid(), fmt.Sprintf("ng%d", time.Now().UnixNano()%1e6)),
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
	c := &cell{net: n, page: page, certs: certs}
	// A relative run directory, as quicbench run --out runs/x gives.
	t.Chdir(dir)
	c.cfg = nginx.Config{Site: page, Dir: "nginx", Namespace: n.Topo.Servers, CertFile: filepath.Base(certs.LeafFile),
		KeyFile: filepath.Base(certs.LeafKeyFile), Workers: 1, Addrs: testbed.AddrsOf(page.Hosts(), n.Topo.ServerAddrs)}
	return c
}

// client is a Go client in the client namespace for "h1" or "h2", with a
// TLS session cache.
func (c *cell) client(proto string) (*http.Client, *http.Transport) {
	tr := &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: c.certs.Pool, MinVersion: tls.VersionTLS13, ClientSessionCache: tls.NewLRUClientSessionCache(8)},
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, _ := net.SplitHostPort(addr)
			return c.net.Topo.Client.DialContext(ctx, "tcp4", net.JoinHostPort(c.cfg.Addrs[host].String(), port))
		},
		Protocols: new(http.Protocols),
	}
	tr.Protocols.SetHTTP1(proto == "h1")
	tr.Protocols.SetHTTP2(proto == "h2")
	return &http.Client{Transport: tr}, tr
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

// TestServesTheSiteLikeTheGoOrigin checks bytes, headers, request counts,
// connection records and TLS resumption across CloseConnections.
func TestServesTheSiteLikeTheGoOrigin(t *testing.T) {
	c := newCell(t)
	srv, err := nginx.Start(c.cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	h2, tr := c.client("h2")
	urls := append([]string{c.page.DocumentURL()}, c.page.Subresources...)
	var bodies int64
	for _, u := range urls {
		resp, body := fetch(t, h2, u)
		host, path := strings.TrimPrefix(u, "https://"), "/"
		if i := strings.IndexByte(host, '/'); i >= 0 {
			host, path = host[:i], host[i:]
		}
		want := c.page.Lookup(host, path)
		bodies += int64(len(want.Body))
		if resp.StatusCode != 200 || resp.ProtoMajor != 2 || string(body) != string(want.Body) {
			t.Errorf("%s: status %d, HTTP/%d, %d bytes; want 200 over HTTP/2 with the archive's %d bytes", u, resp.StatusCode, resp.ProtoMajor, len(body), len(want.Body))
		}
		if ct, cc, tao := resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"), resp.Header.Get("Timing-Allow-Origin"); ct != want.ContentType || cc != "no-store" || tao != "*" {
			t.Errorf("%s: Content-Type %q, Cache-Control %q, Timing-Allow-Origin %q; want %q, no-store, *", u, ct, cc, tao, want.ContentType)
		}
	}
	if resp, _ := fetch(t, h2, "https://www.quicbench.test/nothing"); resp.StatusCode != 404 {
		t.Errorf("a path outside the site: status %d, want 404", resp.StatusCode)
	}
	if got := srv.Counts(); got.H2 != int64(len(urls))+1 || got.H1 != 0 {
		t.Errorf("counts %+v, want %d h2 requests", got, len(urls)+1)
	}
	// The 404 is a request the site does not have, as the Go origin
	// counts it, the rest exact matches with their bodies' bytes; taking
	// the counts starts them anew.
	r := srv.TakeReplay()
	if r.Unmatched != 1 || len(r.UnmatchedRequests) != 1 || r.UnmatchedRequests[0] != "GET https://www.quicbench.test/nothing" ||
		r.Exact != int64(len(urls)) || r.Fuzzy != 0 || r.BodyBytes != bodies {
		t.Errorf("replay %+v, want the one 404 and %d exact matches of %d body bytes", r, len(urls), bodies)
	}
	if r := srv.TakeReplay(); r.Requests() != 0 {
		t.Errorf("replay %+v after taking it, want nothing", r)
	}
	recs := srv.Connections()
	if len(recs) != 2 { // one per origin
		t.Fatalf("records %+v, want one connection per origin", recs)
	}
	for _, r := range recs {
		if r.ALPN != "h2" || r.Handshake != server.HandshakeFull || r.Closed || r.Congestion == "" || r.BytesSent < 40_000 || r.CwndBytes == 0 || r.SmoothedRTTMs < 9.5 {
			// The emulator delivers up to ~0.1 ms early (it straddles its
			// deadlines), so a 10 ms link can measure 9.99 ms.
			t.Errorf("first connection %+v, want h2, full, open, with TCP_INFO (≥ 40000 B sent, RTT ≥ 9.5 ms on the 10 ms link)", r)
		}
	}

	if err := srv.CloseConnections(); err != nil {
		t.Fatal(err)
	}
	if recs := srv.Connections(); len(recs) != 0 {
		t.Errorf("records after CloseConnections: %+v", recs)
	}
	tr.CloseIdleConnections()
	fetch(t, h2, c.page.DocumentURL())
	if recs := srv.Connections(); len(recs) != 1 || recs[0].Handshake != server.HandshakeResumed {
		t.Errorf("after the reload: records %+v, want one resumed connection", recs)
	}

	h1, _ := c.client("h1")
	if resp, _ := fetch(t, h1, c.page.DocumentURL()); resp.ProtoMajor != 1 {
		t.Errorf("h1 client got HTTP/%d", resp.ProtoMajor)
	}
	if got := srv.Counts(); got.H1 != 1 {
		t.Errorf("counts %+v, want 1 h1 request", got)
	}

	if err := srv.SetCache(true); err != nil {
		t.Fatal(err)
	}
	resp, _ := fetch(t, h1, c.page.Subresources[0])
	if resp.Header.Get("Cache-Control") != origin.CacheControl || resp.Header.Get("ETag") == "" || resp.Header.Get("Last-Modified") != origin.LastModified {
		t.Errorf("cache on: headers %v", resp.Header)
	}
	const offer = `h3=":443"; ma=86400`
	for _, value := range []string{offer, ""} {
		if err := srv.SetAltSvc(value); err != nil {
			t.Fatal(err)
		}
		resp, _ := fetch(t, h1, c.page.Subresources[0])
		if got := resp.Header.Get("Alt-Svc"); got != value {
			t.Errorf("Alt-Svc %q, want %q", got, value)
		}
	}
}

// TestPortTaken: nginx cannot bind, Start says why in one line, and no nginx
// process is left.
func TestPortTaken(t *testing.T) {
	c := newCell(t)
	ln, err := c.net.Topo.Servers.Listen("tcp4", c.net.Topo.ServerAddrs[1].String()+":443")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	srv, err := nginx.Start(c.cfg)
	if err == nil {
		srv.Close()
		t.Fatal("nginx started on a taken port")
	}
	if !strings.Contains(err.Error(), "Address already in use") || strings.Contains(err.Error(), "\n") {
		t.Errorf("error %q, want one line naming the taken address", err)
	}
	abs, _ := filepath.Abs(c.cfg.Dir)
	if left := len(proc.Using(abs)); left > 0 {
		t.Errorf("%d nginx processes left", left)
	}
}

// TestLongRequestsAreAnswered: nginx takes request headers of up to
// server.MaxHeaderBytes over h1 and h2, as the other stacks do (its
// default, 8 KB buffers, refused a long URL the Go origin serves).
func TestLongRequestsAreAnswered(t *testing.T) {
	c := newCell(t)
	srv, err := nginx.Start(c.cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, proto := range []string{"h1", "h2"} {
		cl, _ := c.client(proto)
		for _, n := range []int{10_000, 100_000} {
			resp, err := cl.Get("https://www.quicbench.test/long?" + strings.Repeat("a", n))
			if err != nil {
				t.Errorf("%s, a URL of %d bytes: %.200s…", proto, n, strings.ReplaceAll(err.Error(), strings.Repeat("a", 100), ""))
				continue
			}
			resp.Body.Close()
			if resp.StatusCode != 404 {
				t.Errorf("%s, a URL of %d bytes: status %d, want the site's 404", proto, n, resp.StatusCode)
			}
		}
	}
}
