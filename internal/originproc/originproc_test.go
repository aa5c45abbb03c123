package originproc

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/quicbench/quicbench/internal/h3server"
	"github.com/quicbench/quicbench/internal/origin"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/site/gen"
	"github.com/quicbench/quicbench/internal/stacks"
)

// loopbackOrigin is the child serving a one-file site on 127.0.0.1 (TCP
// and UDP on one port), with an http client per protocol.
type loopbackOrigin struct {
	srv     server.Server
	clients map[string]*http.Client
	url     string
	logs    *bytes.Buffer
}

func startLoopback(t *testing.T, cache bool, stack stacks.Profile) *loopbackOrigin {
	t.Helper()
	s, err := gen.Files("www.quicbench.test", []int64{50_000}, 1)
	if err != nil {
		t.Fatal(err)
	}
	certs, err := origin.NewCerts(t.TempDir(), s.Hosts(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	tcp, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tcp.Close() })
	pc, err := net.ListenPacket("udp4", tcp.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	logs := &bytes.Buffer{}
	env := server.Env{Site: s, Cert: certs.Leaf, CertFile: certs.LeafFile, KeyFile: certs.LeafKeyFile, Port: 443,
		TCP: []net.Listener{tcp}, UDP: []*net.UDPConn{pc.(*net.UDPConn)}, Cache: cache, Stack: stack,
		Log: slog.New(slog.NewTextHandler(logs, nil))}
	srv, err := Kind().Start(env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	addr := tcp.Addr().String()
	clientTLS := &tls.Config{RootCAs: certs.Pool, ServerName: "www.quicbench.test", MinVersion: tls.VersionTLS13}
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "tcp4", addr)
	}
	h1 := &http.Transport{TLSClientConfig: clientTLS.Clone(), DialContext: dial}
	h1.TLSClientConfig.NextProtos = []string{"http/1.1"}
	h2 := &http.Transport{TLSClientConfig: clientTLS.Clone(), DialContext: dial, ForceAttemptHTTP2: true}
	h3 := &http3.Transport{TLSClientConfig: clientTLS.Clone(),
		Dial: func(ctx context.Context, _ string, tlsConf *tls.Config, qc *quic.Config) (*quic.Conn, error) {
			return quic.DialAddrEarly(ctx, addr, tlsConf, qc)
		}}
	t.Cleanup(func() { h1.CloseIdleConnections(); h2.CloseIdleConnections(); h3.Close() })
	return &loopbackOrigin{srv: srv, logs: logs, url: "https://www.quicbench.test" + gen.FilePath(50_000),
		clients: map[string]*http.Client{"h1": {Transport: h1}, "h2": {Transport: h2}, "h3": {Transport: h3}}}
}

// get fetches the site's file over proto and returns its response, body
// read.
func (o *loopbackOrigin) get(t *testing.T, proto string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, o.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	resp, err := o.clients[proto].Do(req)
	if err != nil {
		t.Fatalf("%s: %v", proto, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: %v", proto, err)
	}
	return resp, body
}

// TestTheChildServesEveryProtocolAndAnswersCommands loads the file over
// h1, h2 and h3 from the Go origin in its own process and checks what the
// control protocol reports: counts, replay, connection records with TCP
// statistics, the cache turned on, qlogs, and closed connections.
func TestTheChildServesEveryProtocolAndAnswersCommands(t *testing.T) {
	o := startLoopback(t, false, stacks.Profile{Name: "cubic-paced", Pacing: true})
	for _, proto := range []string{"h1", "h2", "h3"} {
		resp, body := o.get(t, proto, nil)
		if resp.StatusCode != 200 || len(body) != 50_000 || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: status %d, %d B, Cache-Control %q; want 200, 50000 B, no-store", proto, resp.StatusCode, len(body), resp.Header.Get("Cache-Control"))
		}
	}
	counts, err := o.srv.Counts()
	if err != nil || counts != (server.Counts{H1: 1, H2: 1, H3: 1}) {
		t.Errorf("counts = %+v, %v; want one request per protocol", counts, err)
	}
	replay, err := o.srv.TakeReplay()
	if err != nil || replay.Exact != 3 || replay.BodyBytes != 150_000 {
		t.Errorf("replay = %+v, %v; want 3 exact, 150000 body bytes", replay, err)
	}
	checkRecords(t, o.srv)

	if err := o.srv.SetCache(true); err != nil {
		t.Fatal(err)
	}
	resp, _ := o.get(t, "h2", nil)
	etag := resp.Header.Get("ETag")
	if resp.Header.Get("Cache-Control") != origin.CacheControl || etag == "" {
		t.Fatalf("with the cache on: Cache-Control %q, ETag %q", resp.Header.Get("Cache-Control"), etag)
	}
	if resp, _ := o.get(t, "h3", http.Header{"If-None-Match": {etag}}); resp.StatusCode != http.StatusNotModified {
		t.Errorf("a revalidation over h3 got %d, want 304", resp.StatusCode)
	}
	checkAltSvc(t, o)
	checkQlog(t, o)
	if err := o.srv.CloseConnections(); err != nil {
		t.Fatal(err)
	}
	if recs, err := o.srv.Connections(); err != nil || len(recs) != 0 {
		t.Errorf("records after close: %+v, %v; want none", recs, err)
	}
}

// checkAltSvc: an Alt-Svc set goes on the TCP responses and not on h3's,
// and once unset on none.
func checkAltSvc(t *testing.T, o *loopbackOrigin) {
	t.Helper()
	const offer = `h3=":443"; ma=86400`
	for _, value := range []string{offer, ""} {
		if err := o.srv.SetAltSvc(value); err != nil {
			t.Fatal(err)
		}
		for proto, want := range map[string]string{"h1": value, "h2": value, "h3": ""} {
			if resp, _ := o.get(t, proto, nil); resp.Header.Get("Alt-Svc") != want {
				t.Errorf("Alt-Svc set to %q: %s has %q", value, proto, resp.Header.Get("Alt-Svc"))
			}
		}
	}
}

// checkRecords checks the connection records: two TCP connections (h1,
// h2) with TCP_INFO's statistics and one QUIC connection.
func checkRecords(t *testing.T, srv server.Server) {
	t.Helper()
	recs, err := srv.Connections()
	if err != nil {
		t.Fatal(err)
	}
	alpn := map[string]server.ConnRecord{}
	for _, r := range recs {
		alpn[r.ALPN] = r
	}
	for name, transport := range map[string]string{"http/1.1": "tcp", "h2": "tcp", "h3": "quic"} {
		r, found := alpn[name]
		switch {
		case !found:
			t.Errorf("no %s connection in %+v", name, recs)
		case r.Transport != transport || r.Handshake != server.HandshakeFull || r.Requests != 1 || r.BytesSent < 10_000:
			// TCP counts the bytes acknowledged: the client may not have
			// acknowledged the last segments yet (delayed ACKs).
			t.Errorf("%s connection %+v: want %s, full handshake, 1 request, ≥ 10000 B sent", name, r, transport)
		case r.Congestion == "" || r.CwndBytes == 0 || r.OpenedAt.IsZero() || time.Since(r.OpenedAt) > time.Minute:
			t.Errorf("%s connection %+v: want a congestion control, a window and when it opened", name, r)
		}
	}
}

// checkQlog turns qlogs on, loads over h3 on a new connection, and looks
// for the server's qlog.
func checkQlog(t *testing.T, o *loopbackOrigin) {
	t.Helper()
	dir := t.TempDir()
	if err := o.srv.SetQlogDir(dir); err != nil {
		t.Fatal(err)
	}
	if err := o.srv.CloseConnections(); err != nil {
		t.Fatal(err)
	}
	o.clients["h3"].Transport.(*http3.Transport).CloseIdleConnections()
	o.get(t, "h3", nil)
	if err := o.srv.CloseConnections(); err != nil { // the trace is complete once its connection closes
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		names, _ := filepath.Glob(filepath.Join(dir, "*_server.sqlog"))
		if len(names) == 1 {
			if info, err := os.Stat(names[0]); err == nil && info.Size() > 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no server qlog in %s: %v", dir, names)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := o.srv.SetQlogDir(""); err != nil {
		t.Fatal(err)
	}
}

// TestAKilledChildSaysSoAndStopsNothingElse kills the child: Exited
// closes, the reason names the Go origin, and a command says the same.
func TestAKilledChildSaysSoAndStopsNothingElse(t *testing.T) {
	o := startLoopback(t, true, stacks.Profile{})
	if o.srv.ExitReason() != "" {
		t.Fatalf("exit reason %q of a running child", o.srv.ExitReason())
	}
	pid := childPid(t, o.srv)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-o.srv.Exited():
	case <-time.After(5 * time.Second):
		t.Fatal("Exited did not close within 5 s of the kill")
	}
	want := "the Go origin (quicbench go-origin) exited: signal: killed"
	if reason := o.srv.ExitReason(); !strings.HasPrefix(reason, want) {
		t.Errorf("exit reason %q, want it to start %q", reason, want)
	}
	if _, err := o.srv.Counts(); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("counts after the kill: %v, want %q", err, want)
	}
}

// childPid is the child's process id.
func childPid(t *testing.T, srv server.Server) int {
	t.Helper()
	g, ok := srv.(*h3server.Server)
	if !ok {
		t.Fatalf("the server is a %T", srv)
	}
	return g.Pid()
}

// TestTheChildRefusesABadCommandLine: a child started wrong says what is
// wrong on its output and exits 1.
func TestTheChildRefusesABadCommandLine(t *testing.T) {
	for _, args := range [][]string{{"--tcp", "0", "--udp", "0"}, {"--tcp", "-1", "--udp", "2"}, {"--udp", "1", "extra"}, {"--bogus"}} {
		var out, errs bytes.Buffer
		if code := serveChild(args, strings.NewReader(""), &out, &errs); code != 1 {
			t.Errorf("%q: exit %d, want 1", args, code)
		}
		if !strings.HasPrefix(out.String(), `{"error":`) || !strings.HasPrefix(errs.String(), "go origin: ") {
			t.Errorf("%q: said %q on stdout and %q on stderr, want an error line on each", args, out.String(), errs.String())
		}
	}
}

// TestAnUnknownCommandGetsTheList: the control loop answers a command it
// does not know with the list of those it knows, and goes on.
func TestAnUnknownCommandGetsTheList(t *testing.T) {
	var out bytes.Buffer
	in := strings.NewReader("status\nqlog relative/dir\n")
	if err := control(nil, bufio.NewReader(in), json.NewEncoder(&out)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("replies %q, want two", lines)
	}
	for _, l := range lines {
		if !strings.Contains(l, `"error":"unknown command: use cache on|off, altsvc VALUE|off, close, conns, counts, qlog DIR|off or replay"`) {
			t.Errorf("reply %q, want the list of commands", l)
		}
	}
}
