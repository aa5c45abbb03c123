package caddy_test

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/netip"
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
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/site/gen"
	"github.com/quicbench/quicbench/internal/site/imports"
	"github.com/quicbench/quicbench/internal/testbed"
	"github.com/quicbench/quicbench/internal/testenv"
)

// cell is a network with a page for Caddy to serve.
type cell struct {
	net   *testbed.Network
	page  *site.Site
	certs *origin.Certs
	cfg   caddy.Config
}

// newCell is a cell with a two-origin synthetic page.
func newCell(t *testing.T) *cell {
	t.Helper()
	page, err := gen.Synthetic(factor.Page{Kind: factor.PageSynthetic, Objects: 4, ObjectBytes: 20_000}, gen.OriginHosts(2), 5)
	if err != nil {
		t.Fatal(err)
	}
	return newCellFor(t, page)
}

// newCellFor is a cell with page: an address and a certificate for each
// of its origins.
func newCellFor(t *testing.T, page *site.Site) *cell {
	t.Helper()
	testenv.RequireRoot(t)
	testenv.RequireFile(t, caddy.DefaultPath, "make caddy (apt-get install caddy)")
	n, err := testbed.StartNetwork(netns.RunName(os.Getpid(), fmt.Sprintf("cd%d", time.Now().UnixNano()%1e6)),
		emulator.Config{Up: link.Config{Delay: 5 * time.Millisecond}, Down: link.Config{Delay: 5 * time.Millisecond}}, len(page.Origins))
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
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, c, req)
}

// do sends req with c and reads the whole response.
func do(t *testing.T, c *http.Client, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := c.Do(req)
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
// conditional request gets 304; an Alt-Svc set is on every response, and
// none (not even Caddy's own for its h3) once unset.
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
	checkAltSvc(t, srv.SetAltSvc, func() http.Header { r, _ := fetch(t, cl, c.page.DocumentURL()); return r.Header })
}

// checkAltSvc sets an Alt-Svc with set, sees it on a response of get,
// unsets it and sees none.
func checkAltSvc(t *testing.T, set func(string) error, get func() http.Header) {
	t.Helper()
	const offer = `h3=":443"; ma=86400`
	if err := set(offer); err != nil {
		t.Fatal(err)
	}
	if got := get().Values("Alt-Svc"); len(got) != 1 || got[0] != offer {
		t.Errorf("Alt-Svc %q, want %q", got, offer)
	}
	if err := set(""); err != nil {
		t.Fatal(err)
	}
	if got := get().Values("Alt-Svc"); len(got) != 0 {
		t.Errorf("Alt-Svc %q after it was unset", got)
	}
}

// recordedSite is a small recording with what a replaying server must
// answer exactly as recorded: queries, several variants of one path, a
// redirect, bodiless and error statuses, header fields with Caddy's
// placeholder syntax in them, repeated fields, validators, a POST, an
// escaped path and a body without a content type.
func recordedSite() *site.Site {
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 3000)...)
	res := []*site.Resource{
		{Path: "/", Query: "lang=en", ContentType: "text/html", Body: []byte("<html><script src=/s.js?v=1></script></html>"),
			Header: []site.Field{{Name: "NEL", Value: `{"report_to":"default","max_age":604800}`}, {Name: "X-Braces", Value: `{http.request.host} \{x\} }{`}}},
		{Path: "/s.js", Query: "v=1", ContentType: "text/javascript", Body: []byte("var v = 1;")},
		{Path: "/s.js", Query: "v=2", ContentType: "text/javascript", Body: []byte("var v = 2;")},
		{Path: "/only.css", Query: "x=1", ContentType: "text/css", Body: []byte("body{color:red}"),
			Header: []site.Field{{Name: "ETag", Value: `W/"css-1"`}, {Name: "Cache-Control", Value: "max-age=60"}}},
		{Path: "/old", Status: 302, ContentType: "text/html", Body: []byte("moved"), Header: []site.Field{{Name: "Location", Value: "/only.css?x=1"}}},
		{Path: "/beacon", Status: 204, Header: []site.Field{{Name: "Set-Cookie", Value: "a=1"}, {Name: "Set-Cookie", Value: "b=2"}}},
		{Path: "/gone.js", Status: 404, ContentType: "text/plain", Body: []byte("not here")},
		{Path: "/api", Method: "POST", ContentType: "application/json", Body: []byte(`{"ok":true}`)},
		{Path: "/A%20b.png", Body: png, Header: []site.Field{{Name: "Last-Modified", Value: "Tue, 01 Oct 2024 10:00:00 GMT"}}},
		{Path: "/ic/480x270/p.png", ContentType: "image/png", Body: png},
	}
	o := &site.Origin{Host: "www.quicbench.test", Resources: map[string]*site.Resource{}}
	for _, r := range res {
		o.Resources[r.Key()] = r
	}
	return &site.Site{Origins: []*site.Origin{o}, DocumentPath: "/", DocumentQuery: "lang=en", Recorded: true}
}

// replayRequests are requests of recordedSite: exact ones, ones the Go
// origin answers by a fuzzy match or not at all, HEAD, a range, and (with
// the cache on) revalidations.
var replayRequests = []struct {
	method, target string
	header         http.Header
}{
	{"GET", "/?lang=en", nil},
	{"GET", "/s.js?v=1", nil},
	{"GET", "/s.js?v=2", nil},
	{"GET", "/s.js?v=3", nil},         // two candidates: the nearest query answers
	{"GET", "/ic/960x540/p.png", nil}, // the image recorded at another size
	{"GET", "/only.css?x=9", nil},
	{"GET", "/only.css", nil},
	{"GET", "/old", nil},
	{"GET", "/beacon", nil},
	{"GET", "/gone.js", nil},
	{"POST", "/api", nil},
	{"GET", "/api", nil},
	{"HEAD", "/A%20b.png", nil},
	{"GET", "/A%20b.png", http.Header{"Range": {"bytes=0-9"}}},
	{"GET", "/only.css?x=1", http.Header{"If-None-Match": {`W/"css-1"`}}},
	{"GET", "/only.css?x=1", http.Header{"If-None-Match": {`"other"`}}},
	{"GET", "/A%20b.png", http.Header{"If-Modified-Since": {"Tue, 01 Oct 2024 10:00:00 GMT"}}},
	{"GET", "/A%20b.png", http.Header{"If-Modified-Since": {"Tue, 01 Oct 2024 10:00:00 GMT"}, "If-None-Match": {`"x"`}}},
	{"GET", "/nothing", nil},
}

// TestReplaysARecordingLikeTheGoOrigin: every request of replayRequests,
// over h1, h2 and h3, with the cache off and on, gets from Caddy the
// status, header fields and body the Go origin gives it, those its routes
// cannot take exactly too (the nearest of several recorded queries, an
// image at another size: the matching service names the answer), and its
// replay counts them as the Go origin's would.
func TestReplaysARecordingLikeTheGoOrigin(t *testing.T) {
	c := newCellFor(t, recordedSite())
	srv, err := caddy.Start(c.cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	goOrigin := c.startGoOrigin(t, goPort)
	for _, cache := range []bool{false, true} {
		if err := srv.SetCache(cache); err != nil {
			t.Fatal(err)
		}
		goOrigin.SetCache(cache)
		for _, proto := range []string{"h1", "h2", "h3"} {
			// one client each: a session ticket of one is no good to the other
			cl, goCl := c.client(t, proto), c.client(t, proto)
			for _, x := range []*http.Client{cl, goCl} {
				x.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
			}
			for _, r := range replayRequests {
				name := fmt.Sprintf("cache %v, %s %s %s %v", cache, proto, r.method, r.target, r.header)
				got := answer(t, cl, r.method, "https://www.quicbench.test"+r.target, r.header)
				want := answer(t, goCl, r.method, fmt.Sprintf("https://www.quicbench.test:%d%s", goPort, r.target), r.header)
				if got != want {
					t.Errorf("%s:\ncaddy: %s\ngo:    %s", name, got, want)
				}
			}
		}
	}
	// per pass: 13 exact, 3 fuzzy (/only.css twice, /s.js?v=3), 1 variant,
	// 2 unmatched (GET /api, /nothing)
	if rep := srv.TakeReplay(); rep.Exact != 6*13 || rep.Fuzzy != 6*3 || rep.Variant != 6 || rep.Unmatched != 6*2 ||
		len(rep.Variants) != 6 || rep.Variants[0] != "GET https://www.quicbench.test/ic/960x540/p.png /ic/480x270/p.png" {
		t.Errorf("replay %+v, want 78 exact, 18 fuzzy, 6 variants and 12 unmatched", rep)
	}
}

// goPort is where the Go origin serves beside Caddy, on the same
// addresses.
const goPort = 8443

// startGoOrigin serves the cell's page from the Go origin on port, TCP and
// UDP, on each origin's address in the servers namespace.
func (c *cell) startGoOrigin(t *testing.T, port int) *origin.Server {
	t.Helper()
	var lns []origin.Listener
	err := c.net.Topo.Servers.Do(func() error {
		for _, addr := range c.cfg.Addrs {
			tcp, err := net.Listen("tcp4", netip.AddrPortFrom(addr, uint16(port)).String())
			if err != nil {
				return err
			}
			udp, err := net.ListenPacket("udp4", netip.AddrPortFrom(addr, uint16(port)).String())
			if err != nil {
				return err
			}
			lns = append(lns, origin.Listener{TCP: tcp, UDP: udp})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := origin.Start(c.page, c.certs.Leaf, lns, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Close()
		for _, l := range lns {
			l.Close()
		}
	})
	return srv
}

// answer is a server's answer to a request as status, header fields
// (without Date and the framing's Content-Length) and the body's length
// and hash; "404" for a 404 of a request the site does not have (whose
// body each server words its own way).
func answer(t *testing.T, cl *http.Client, method, url string, h http.Header) string {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	maps.Copy(req.Header, h)
	req.Header.Set("Accept-Encoding", "identity") // as sent, not decoded by the client
	resp, body := do(t, cl, req)
	if resp.StatusCode == 404 && !strings.Contains(url, "gone") {
		return "404"
	}
	resp.Header.Del("Date")
	resp.Header.Del("Content-Length")
	return fmt.Sprintf("%d %v %d bytes %x", resp.StatusCode, resp.Header, len(body), sha256.Sum256(body))
}

// TestAnAnswerCaddyCannotHoldIsRefused: a recorded request target with a
// brace, which Caddy's matching would read as a placeholder, is refused at
// start with the resource and the stack that replays it, as bad input.
func TestAnAnswerCaddyCannotHoldIsRefused(t *testing.T) {
	page := recordedSite()
	page.Origins[0].Resources["/x.js?a={b}"] = &site.Resource{Path: "/x.js", Query: "a={b}", Body: []byte("x")}
	c := newCellFor(t, page)
	_, err := caddy.Start(c.cfg)
	var input *results.InputError
	if !errors.As(err, &input) || !strings.Contains(err.Error(), "/x.js?a=") || !strings.Contains(err.Error(), "--server go") {
		t.Errorf("a target with a brace: %v, want it refused as input naming it and the Go server", err)
	}
}

// sharedSite imports the shared recording name, made by others, as a site.
func sharedSite(t *testing.T, name string) *site.Site {
	t.Helper()
	path := filepath.Join(testenv.SharedRecordings(t), name)
	read, _ := imports.ReaderFor(name, strings.HasSuffix(name, ".mahimahi"))
	a, _, err := read(t.Context(), path, imports.Options{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	s, err := a.Site()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

// TestReplaysSharedRecordingsLikeTheGoOrigin: for two real recordings made
// by others (a Chrome HAR and a Mahimahi recording of a multi-origin
// page), every recorded request gets from Caddy over h2 and h3 the answer
// the Go origin gives it.
func TestReplaysSharedRecordingsLikeTheGoOrigin(t *testing.T) {
	for _, name := range []string{"www.nghttp2.org.har", "www.ny.gov.mahimahi"} {
		t.Run(name, func(t *testing.T) {
			c := newCellFor(t, sharedSite(t, name))
			srv, err := caddy.Start(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			c.startGoOrigin(t, goPort)
			n := 0
			for _, proto := range []string{"h2", "h3"} {
				cl, goCl := c.client(t, proto), c.client(t, proto)
				for _, x := range []*http.Client{cl, goCl} {
					x.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
				}
				for _, o := range c.page.Origins {
					for _, res := range o.Resources {
						method := cmp.Or(res.Method, "GET")
						if method == "HEAD" {
							continue // both answer HEAD as GET
						}
						got := answer(t, cl, method, "https://"+o.Host+res.Target(), nil)
						want := answer(t, goCl, method, fmt.Sprintf("https://%s:%d%s", o.Host, goPort, res.Target()), nil)
						if got != want {
							t.Errorf("%s %s https://%s%s:\ncaddy: %.300s\ngo:    %.300s", proto, method, o.Host, res.Target(), got, want)
						}
						n++
					}
				}
			}
			if rep := srv.TakeReplay(); rep.Exact != int64(n) {
				t.Errorf("replay %+v, want all %d requests exact", rep, n)
			}
			t.Logf("%s: %d requests over h2 and h3, %d origins", name, n, len(c.page.Origins))
		})
	}
}
