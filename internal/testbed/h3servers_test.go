package testbed

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"

	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/site/gen"
	"github.com/quicbench/quicbench/internal/stacks"
)

// startQUICTestbed starts a testbed whose h3 is served by quic.
func startQUICTestbed(t *testing.T, s *site.Site, quic factor.QUIC) *Testbed {
	t.Helper()
	delay := link.Config{Delay: 2 * time.Millisecond}
	return startConfigured(t, Config{Link: emulator.Config{Up: delay, Down: delay}, Site: s, QUIC: quic})
}

// recordedSite is a replayed page with what recordings have and generated
// pages lack: queries that match by longest prefix, other methods and
// statuses, recorded validators and fields.
func recordedSite() *site.Site {
	res := func(path, query, method string, status int, body string, header ...site.Field) *site.Resource {
		return &site.Resource{Path: path, Query: query, Method: method, Status: status, ContentType: "text/plain", Body: []byte(body), Header: header}
	}
	doc := &site.Resource{Path: "/", ContentType: "text/html", Body: []byte(`<html><img src="/a?v=1"></html>`)}
	o := &site.Origin{Host: "rec.test", Resources: map[string]*site.Resource{}}
	for _, r := range []*site.Resource{
		doc,
		res("/a", "v=1", "", 0, "a1", site.Field{Name: "ETag", Value: `"a1"`}, site.Field{Name: "X-Recorded", Value: "yes"}),
		res("/a", "v=22", "", 0, "a22", site.Field{Name: "Last-Modified", Value: "Tue, 01 Jan 2019 00:00:00 GMT"}),
		res("/post", "", "POST", 201, "made"),
		res("/gone", "", "", 204, ""),
		res("/moved", "", "", 301, "", site.Field{Name: "Location", Value: "/"}),
		{Path: "/ic/480x270/p.png", ContentType: "image/png", Body: []byte("png")},
	} {
		o.Resources[r.Key()] = r
	}
	return &site.Site{Origins: []*site.Origin{o}, DocumentPath: "/", Recorded: true}
}

// exchange is one request of the comparison and what came back.
type exchange struct {
	method, url string
	header      http.Header
}

// answer is a response with the fields that differ by server left out.
type answer struct {
	proto  int
	status int
	header http.Header
	body   []byte
}

func fetch(t *testing.T, c *GoClient, ex exchange) answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, ex.method, ex.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	maps.Copy(req.Header, ex.header)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", ex.method, ex.url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	h := resp.Header.Clone()
	h.Del("Date") // net/http's own, not the site's
	return answer{resp.ProtoMajor, resp.StatusCode, h, body}
}

// ownProcess are the QUIC servers of servers/, in their own processes,
// each with its default controller.
var ownProcess = []factor.QUIC{factor.QUICQuinnCubic, factor.QUICQuicheCubic}

// TestOwnProcessServersAnswerAsTheGoOrigin requests every resource of a
// generated and a recorded page over h3 from quic-go and from each server
// of servers/, with the cache off and on and with conditional requests,
// and compares status, header fields and body, and the servers' request
// and unmatched counts.
func TestOwnProcessServersAnswerAsTheGoOrigin(t *testing.T) {
	generated, err := gen.Synthetic(factor.Page{Kind: factor.PageSynthetic, Objects: 3, ObjectBytes: 30_000}, []string{"www.quicbench.test", "cdn.quicbench.test"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*site.Site{"generated": generated, "recorded": recordedSite()} {
		t.Run(name, func(t *testing.T) {
			exchanges := exchangesOf(s)
			goAnswers, goReplay := answersOf(t, startQUICTestbed(t, s, factor.QUICGoNewReno), exchanges)
			if goReplay.Unmatched == 0 || (s.Recorded && goReplay.Fuzzy == 0) {
				t.Errorf("replay: quic-go %+v; want fuzzy and unmatched requests", goReplay)
			}
			if variant := "GET https://rec.test/ic/960x540/p.png /ic/480x270/p.png"; s.Recorded && (len(goReplay.Variants) == 0 || goReplay.Variants[0] != variant) {
				t.Errorf("replay: quic-go's variants %q, want %q first", goReplay.Variants, variant)
			}
			for _, q := range ownProcess {
				answers, replay := answersOf(t, startQUICTestbed(t, s, q), exchanges)
				// The same exact and fuzzy matches, 404s and body bytes.
				if !reflect.DeepEqual(goReplay, replay) {
					t.Errorf("replay: quic-go %+v\n%s %+v; want the same", goReplay, q, replay)
				}
				compareAnswers(t, q, exchanges, goAnswers, answers)
			}
		})
	}
}

// compareAnswers reports each exchange whose answer from q differs from
// quic-go's, or is not HTTP/3.
func compareAnswers(t *testing.T, q factor.QUIC, exchanges []exchange, want, got []answer) {
	t.Helper()
	for i, ex := range exchanges {
		g, a := want[i], got[i]
		if a.proto != 3 || g.proto != 3 {
			t.Errorf("%s %s: protocols %d (quic-go) and %d (%s), want HTTP/3", ex.method, ex.url, g.proto, a.proto, q)
		}
		if g.status != a.status || !bytes.Equal(g.body, a.body) || !equalHeader(g.header, a.header) {
			t.Errorf("%s %s %v:\nquic-go %d %v %d bytes\n%s %d %v %d bytes", ex.method, ex.url, ex.header, g.status, g.header, len(g.body), q, a.status, a.header, len(a.body))
		}
	}
}

// exchangesOf lists a GET of every resource (its recorded method for a
// recorded one), a near-miss query, an unknown path and an image at
// another size (a variant of a recorded one's), then the same
// with the cache on, each followed by a conditional request.
func exchangesOf(s *site.Site) []exchange {
	var out []exchange
	for _, o := range s.Origins {
		for _, key := range slices.Sorted(maps.Keys(o.Resources)) {
			r := o.Resources[key]
			out = append(out, exchange{method: cmpOr(r.Method, "GET"), url: "https://" + o.Host + r.Target()})
		}
		out = append(out, exchange{method: "GET", url: "https://" + o.Host + "/a?v=2"}, exchange{method: "HEAD", url: "https://" + o.Host + "/"},
			exchange{method: "GET", url: "https://" + o.Host + "/not-in-the-site"}, exchange{method: "GET", url: "https://" + o.Host + "/ic/960x540/p.png"})
	}
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// answersOf makes the exchanges with the cache off, then on with and
// without validators, checks the server's request count and returns the
// answers and what the server's matching did.
func answersOf(t *testing.T, tb *Testbed, exchanges []exchange) ([]answer, server.Replay) {
	c, err := tb.NewGoClient("h3")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	before, err := tb.Counts()
	if err != nil {
		t.Fatal(err)
	}
	var out []answer
	for _, cache := range []bool{false, true} {
		if err := tb.SetCache(cache); err != nil {
			t.Fatal(err)
		}
		for _, ex := range exchanges {
			a := fetch(t, c, ex)
			out = append(out, a)
			if !cache {
				continue
			}
			cond := exchange{method: ex.method, url: ex.url, header: http.Header{}}
			if etag := a.header.Get("ETag"); etag != "" {
				cond.header.Set("If-None-Match", etag)
			} else if lm := a.header.Get("Last-Modified"); lm != "" {
				cond.header.Set("If-Modified-Since", lm)
			}
			out = append(out, fetch(t, c, cond))
		}
	}
	after, err := tb.Counts()
	if err != nil {
		t.Fatal(err)
	}
	if got := after.Sub(before); got.H3 != int64(len(out)) || got.Total() != got.H3 {
		t.Errorf("served %+v, want %d requests over h3", got, len(out))
	}
	replay, err := tb.TakeReplay()
	if err != nil || replay.Unmatched != int64(len(replay.UnmatchedRequests)) || replay.Requests() != int64(len(out)) {
		t.Errorf("replay %+v (%v): want every one of %d requests counted and every unmatched one listed", replay, err, len(out))
	}
	return out, replay
}

// equalHeader compares header fields, values in order.
func equalHeader(a, b http.Header) bool {
	return maps.EqualFunc(a, b, slices.Equal)
}

// TestOwnProcessHandshakeKinds checks, for every stack of the servers of
// servers/, the records of a first connection and of a repeat visit's,
// which must resume and send its request as 0-RTT, and that the server
// reports the transport the stacks table says.
func TestOwnProcessHandshakeKinds(t *testing.T) {
	s, _ := gen.Synthetic(factor.Page{Kind: factor.PageSynthetic, Objects: 1, ObjectBytes: 50_000}, []string{"a.test"}, 1)
	var all []factor.QUIC
	for _, server := range []factor.QUICServer{factor.QUICQuinn, factor.QUICQuiche} {
		for _, cc := range server.Controllers() {
			q, _ := factor.QUICOf(server, cc)
			all = append(all, q)
		}
	}
	for _, q := range all {
		t.Run(string(q), func(t *testing.T) {
			tb := startQUICTestbed(t, s, q)
			if want := quicProfile(t, q).Transport; tb.QUICTransport != want {
				t.Errorf("the server reports %+v, the stacks table says %+v", tb.QUICTransport, want)
			}
			sessions := tls.NewLRUClientSessionCache(8)
			url := s.Subresources[0]
			first := oneConnection(t, tb, sessions, http.MethodGet, url)
			if first.Handshake != server.HandshakeFull || first.ALPN != "h3" || first.ServerName != "a.test" || first.Congestion != string(q.CC()) ||
				first.BytesSent < 50_000 || first.CwndBytes == 0 || first.SmoothedRTTMs < 3 || first.Requests != 1 {
				t.Errorf("first connection = %+v, want full h3 a.test %s, ≥ 50000 B, a cwnd, srtt ≥ 4 ms, 1 request", first, q.CC())
			}
			// the time it worked on the request, from the header fields read
			// to the response's handed over: one window, of under a second
			if len(first.Serving) != 1 || first.Serving[0].To.Before(first.Serving[0].From) || first.Serving[0].To.Sub(first.Serving[0].From) > time.Second ||
				first.Serving[0].From.Before(first.OpenedAt) {
				t.Errorf("first connection's serving %v (opened %v), want one window after its opening, of under a second", first.Serving, first.OpenedAt)
			}
			again := oneConnection(t, tb, sessions, http3.MethodGet0RTT, url)
			if again.Handshake != server.Handshake0RTT {
				t.Errorf("repeat connection's handshake = %q, want %q", again.Handshake, server.Handshake0RTT)
			}
		})
	}
}

// oneConnection makes one request on a new client sharing sessions and
// returns the server's only connection record, then closes it.
func oneConnection(t *testing.T, tb *Testbed, sessions tls.ClientSessionCache, method, url string) server.ConnRecord {
	t.Helper()
	c, err := tb.NewGoClient("h3", GoClientOptions{Sessions: sessions})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fetch(t, c, exchange{method: method, url: url})
	recs, err := tb.Connections()
	if err != nil || len(recs) != 1 {
		t.Fatalf("connections %+v (%v), want one", recs, err)
	}
	if err := tb.CloseConnections(); err != nil {
		t.Fatal(err)
	}
	return recs[0]
}

// TestOwnProcessAnswersRejected0RTT sends a 0-RTT request with a session
// of another server (as a browser does after the server restarted): the
// server rejects the early data, and the request must still be answered
// after a full handshake.
func TestOwnProcessAnswersRejected0RTT(t *testing.T) {
	s, _ := gen.Synthetic(factor.Page{Kind: factor.PageSynthetic, Objects: 1, ObjectBytes: 5_000}, []string{"a.test"}, 1)
	url := s.Subresources[0]
	for _, q := range ownProcess {
		t.Run(string(q), func(t *testing.T) {
			sessions := tls.NewLRUClientSessionCache(8)
			oneConnection(t, startQUICTestbed(t, s, q), sessions, http.MethodGet, url)
			other := startQUICTestbed(t, s, q)
			if rec := oneConnection(t, other, sessions, http3.MethodGet0RTT, url); rec.Handshake != server.HandshakeFull || rec.Requests != 1 {
				t.Errorf("connection with an unknown session = %+v, want a full handshake and 1 request", rec)
			}
		})
	}
}

// quicProfile is the stacks table's profile of q.
func quicProfile(t *testing.T, q factor.QUIC) stacks.QUICProfile {
	t.Helper()
	for _, p := range QUICProfiles() {
		if p.Name == q {
			return p
		}
	}
	t.Fatalf("no profile for %s", q)
	return stacks.QUICProfile{}
}

// TestOwnProcessWritesQlog: with a qlog directory set, each server of
// servers/ writes a trace of each new connection, named by its connection
// ID, which holds the connection's packets once it has closed; after
// "off", none.
func TestOwnProcessWritesQlog(t *testing.T) {
	s, _ := gen.Synthetic(factor.Page{Kind: factor.PageSynthetic, Objects: 1, ObjectBytes: 20_000}, []string{"a.test"}, 1)
	for _, q := range []factor.QUIC{factor.QUICQuinnBBR, factor.QUICQuicheBBR2} {
		t.Run(string(q), func(t *testing.T) { checkQlog(t, startQUICTestbed(t, s, q), s) })
	}
}

// checkQlog makes a connection with a qlog directory set and one without.
func checkQlog(t *testing.T, tb *Testbed, s *site.Site) {
	dir := t.TempDir()
	if err := tb.SetQlogDir(dir); err != nil {
		t.Fatal(err)
	}
	oneConnection(t, tb, nil, http.MethodGet, s.Subresources[0])
	if err := tb.SetQlogDir(""); err != nil {
		t.Fatal(err)
	}
	oneConnection(t, tb, nil, http.MethodGet, s.Subresources[0])
	var names []string
	var data []byte
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		names = names[:0]
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if len(names) == 1 {
			data, _ = os.ReadFile(filepath.Join(dir, names[0]))
			if bytes.Contains(data, []byte("packet_sent")) {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(names) != 1 || !strings.HasSuffix(names[0], "_server.sqlog") || !bytes.Contains(data, []byte("packet_sent")) {
		t.Errorf("qlog directory holds %q; the trace has %d bytes; want one _server.sqlog with packets", names, len(data))
	}
}
