// Package origin serves a site over HTTP/1.1 and HTTP/2 (net/http, TLS 1.3,
// TCP) and HTTP/3 (quic-go, QUIC) from one handler, so every protocol serves
// the same bytes with the same headers. It also makes the per-run
// certificates and counts the requests each protocol served.
package origin

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/site"
)

// Listener is one origin address: a TCP listener for h1/h2 and a UDP socket
// for h3, both on port 443 of the same IP. TCP is nil when another server
// (nginx) serves h1 and h2, UDP when another server (quinn) serves h3.
type Listener struct {
	TCP net.Listener
	UDP net.PacketConn
}

// Close closes both sockets.
func (l Listener) Close() {
	if l.TCP != nil {
		l.TCP.Close()
	}
	if l.UDP != nil {
		l.UDP.Close()
	}
}

// Server serves one site on any number of listeners.
type Server struct {
	site    *site.Site
	tcp     *http.Server
	quic    *http3.Server
	counts  [4]atomic.Int64 // indexed by HTTP major version
	qlogDir atomic.Pointer[string]
	// untraced turns the loss traces off (a benchmark's reference).
	untraced atomic.Bool
	conns    *connTracker
	// transports carry the QUIC listeners, one per UDP socket.
	transports []*quic.Transport
	cache      atomic.Bool
	altSvc     atomic.Pointer[string]
	etags      map[*site.Resource]string
	match      *site.Matcher
	replay     server.ReplayLog
	wg         sync.WaitGroup
	log        *slog.Logger
	// watch is called with every request before it is answered (Watch).
	watch atomic.Pointer[func(*http.Request)]
}

// Watch has f called with every request from now on, before it is
// answered, from the server's goroutines (a stand-in site's tests read
// what the browser sent); nil stops it.
func (srv *Server) Watch(f func(r *http.Request)) { srv.watch.Store(&f) }

// Start serves s on every listener in lns with certificate cert, until Close.
func Start(s *site.Site, cert tls.Certificate, lns []Listener, logger *slog.Logger) (*Server, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	srv := &Server{site: s, log: logger, conns: newConnTracker(), etags: map[*site.Resource]string{}, match: site.NewMatcher(s)}
	var resetKey quic.StatelessResetKey
	rand.Read(resetKey[:])
	for _, o := range s.Origins {
		for _, res := range o.Resources {
			srv.etags[res] = ETag(res)
		}
	}
	// TLS session tickets are on (Go's default), with keys that live as
	// long as the server, so repeat visits can resume.
	tlsConf := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
	srv.tcp = &http.Server{
		Handler:        srv,
		MaxHeaderBytes: server.MaxHeaderBytes,
		TLSConfig:      tlsConf.Clone(),
		IdleTimeout:    5 * time.Minute,
		ErrorLog:       log.New(io.Discard, "", 0),
		ConnState:      srv.conns.tcpState,
	}
	srv.tcp.TLSConfig.NextProtos = []string{"h2", "http/1.1"}
	srv.quic = &http3.Server{
		Handler:        srv,
		MaxHeaderBytes: server.MaxHeaderBytes,
		TLSConfig:      http3.ConfigureTLSConfig(tlsConf.Clone()),
		QUICConfig:     &quic.Config{Tracer: srv.tracer, Allow0RTT: true},
		IdleTimeout:    5 * time.Minute,
		Logger:         logger,
		ConnContext: func(ctx context.Context, c *quic.Conn) context.Context {
			srv.conns.quicConn(c)
			return ctx
		},
	}
	for _, ln := range lns {
		if err := srv.serve(ln, &resetKey); err != nil {
			srv.Close()
			return nil, err
		}
	}
	return srv, nil
}

// serve serves h1 and h2 on ln's TCP listener and h3 on its UDP socket,
// where it has them (quinn may serve h3 instead), in goroutines of the
// server's, until Close.
func (srv *Server) serve(ln Listener, resetKey *quic.StatelessResetKey) error {
	if ln.TCP != nil {
		srv.wg.Go(func() {
			if err := srv.tcp.ServeTLS(ln.TCP, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
				srv.log.Error("origin: TCP server stopped", "addr", ln.TCP.Addr(), "err", err)
			}
		})
	}
	if ln.UDP == nil {
		return nil // another server (quinn) serves h3
	}
	// A transport with a stateless reset key: a client that sends on a
	// connection the server has closed (its CONNECTION_CLOSE lost on a
	// lossy link) gets a stateless reset at once, as from production
	// servers, instead of waiting for its idle timeout.
	tr := &quic.Transport{Conn: ln.UDP, StatelessResetKey: resetKey}
	ql, err := tr.ListenEarly(srv.quic.TLSConfig, srv.quic.QUICConfig)
	if err != nil {
		return fmt.Errorf("origin: QUIC listener on %s: %w", ln.UDP.LocalAddr(), err)
	}
	srv.transports = append(srv.transports, tr)
	srv.wg.Go(func() {
		if err := srv.quic.ServeListener(ql); err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, quic.ErrServerClosed) {
			srv.log.Error("origin: QUIC server stopped", "addr", ln.UDP.LocalAddr(), "err", err)
		}
	})
	return nil
}

// ServeHTTP serves the resource the request matches (see site.Matcher);
// an unmatched request gets 404; both are noted (TakeReplay).
func (srv *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor >= 1 && r.ProtoMajor <= 3 {
		srv.counts[r.ProtoMajor].Add(1)
	}
	if watch := srv.watch.Load(); watch != nil && *watch != nil {
		(*watch)(r)
	}
	served := server.Window{From: time.Now()}
	defer func() { srv.conns.request(r, served) }()
	answered := func() { served.To = time.Now() }
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	host = strings.ToLower(host)
	res, kind := srv.match.Match(host, r.Method, r.URL.EscapedPath(), r.URL.RawQuery)
	if res == nil {
		srv.replay.Unmatched(r.Method + " https://" + host + r.URL.RequestURI())
		answered()
		http.Error(w, fmt.Sprintf("%s%s is not in the site", host, r.URL.Path), http.StatusNotFound)
		return
	}
	if !holdFor(r.Context(), srv.site.ServerWait) {
		served = server.Window{} // the request ended unanswered
		return
	}
	if kind == site.Variant {
		srv.replay.VariantServed(r.Method+" https://"+host+r.URL.RequestURI(), res.Target())
	}
	srv.respond(w, r, res, kind, answered)
}

// respond writes res's response to r, calling answered just before its
// first byte goes to the transport.
func (srv *Server) respond(w http.ResponseWriter, r *http.Request, res *site.Resource, kind site.MatchKind, answered func()) {
	cache := srv.cache.Load()
	h := w.Header()
	maps.Copy(h, ResponseHeader(srv.site, res, srv.etags[res], cache))
	if alt := srv.altSvc.Load(); alt != nil && r.ProtoMajor < 3 {
		h.Set("Alt-Svc", *alt)
	}
	if _, typed := h["Content-Type"]; !typed {
		// as recorded, none: Go's HTTP/1 and HTTP/2 servers would sniff
		// one, its HTTP/3 server and the other stacks do not
		h["Content-Type"] = nil
	}
	if cache && NotModified(h, r.Header) {
		srv.replay.Matched(kind, 0)
		answered()
		w.WriteHeader(http.StatusNotModified)
		return
	}
	status := res.StatusCode()
	if BodyAllowed(status) {
		h.Set("Content-Length", strconv.Itoa(len(res.Body)))
	}
	body := res.Body
	if r.Method == http.MethodHead || !BodyAllowed(status) {
		body = nil
	}
	srv.replay.Matched(kind, len(body))
	answered()
	w.WriteHeader(status)
	if len(body) > 0 {
		w.Write(body)
	}
}

// holdFor waits d, a page's server wait, before a response goes out;
// false if the request ended first.
func holdFor(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// BodyAllowed reports whether a response of status has a body (RFC 9110
// section 6.4.1).
func BodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

// ETag is the entity tag the origin gives a generated resource: a quoted
// hash of its body.
func ETag(res *site.Resource) string {
	sum := sha256.Sum256(res.Body)
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}

// ResponseHeader is the header fields every quicbench server sends with
// res, without Content-Length: the recorded fields, Content-Type and
// Content-Encoding, the cross-origin fields of a generated site, and the
// cache policy's fields. Cache off: Cache-Control: no-store, and a
// recorded response loses its validators and expiry. Cache on: a generated
// resource gets CacheControl, etag and LastModified; a recorded one keeps
// what it recorded.
func ResponseHeader(s *site.Site, res *site.Resource, etag string, cache bool) http.Header {
	h := http.Header{}
	for _, f := range res.Header {
		h.Add(f.Name, f.Value)
	}
	if res.ContentType != "" {
		h.Set("Content-Type", res.ContentType)
	}
	if res.Encoding != "" {
		h.Set("Content-Encoding", res.Encoding)
	}
	if !s.Recorded { // a recorded response says what it allows
		h.Set("Timing-Allow-Origin", "*")
		h.Set("Access-Control-Allow-Origin", "*") // fonts and fetch() from other origins
	}
	if !cache {
		for _, name := range []string{"Cache-Control", "Expires", "Etag", "Last-Modified", "Pragma"} {
			h.Del(name)
		}
		h.Set("Cache-Control", "no-store")
		return h
	}
	if !s.Recorded {
		h.Set("Cache-Control", CacheControl)
		h.Set("ETag", etag)
		h.Set("Last-Modified", LastModified)
	}
	return h
}

// NotModified reports whether a request with header req is a revalidation
// that a cacheable response with header resp answers with 304: its
// If-None-Match equals the ETag, or without those, its If-Modified-Since
// equals the Last-Modified.
func NotModified(resp, req http.Header) bool {
	etag, modified := resp.Get("ETag"), resp.Get("Last-Modified")
	switch {
	case etag != "" && req.Get("If-None-Match") != "":
		return req.Get("If-None-Match") == etag
	case modified != "" && req.Get("If-Modified-Since") != "":
		return req.Get("If-Modified-Since") == modified
	}
	return false
}

// Cache headers of a cacheable site (SetCache(true)); nginx serves the same.
const (
	CacheControl = "max-age=86400"
	LastModified = "Mon, 02 Jan 2006 15:04:05 GMT"
)

// SetCache chooses the cache policy from now on. Off (the default): every
// response says Cache-Control: no-store. On: responses carry
// Cache-Control: max-age=86400, an ETag (a hash of the body) and a fixed
// Last-Modified, and a request with a matching If-None-Match gets 304.
func (srv *Server) SetCache(on bool) { srv.cache.Store(on) }

// SetAltSvc makes every h1 and h2 response carry the Alt-Svc field value
// from now on; "" none (the default).
func (srv *Server) SetAltSvc(value string) {
	if value == "" {
		srv.altSvc.Store(nil)
		return
	}
	srv.altSvc.Store(&value)
}

// Connections returns the records of the connections opened since the
// last CloseConnections (or Start), in the order they opened, with their
// transport statistics read now.
func (srv *Server) Connections() []server.ConnRecord { return srv.conns.snapshot() }

// CloseConnections closes every client connection and forgets their
// records: a repeat visit must then reconnect, and resumes if it can.
func (srv *Server) CloseConnections() { srv.conns.closeAll() }

// Counts returns the requests served so far, per protocol.
func (srv *Server) Counts() server.Counts {
	return server.Counts{H1: srv.counts[1].Load(), H2: srv.counts[2].Load(), H3: srv.counts[3].Load()}
}

// TakeReplay returns what matching did since the last call (or Start):
// exact and fuzzy matches, unmatched requests (404s), body bytes sent.
func (srv *Server) TakeReplay() server.Replay { return srv.replay.Take() }

// Close stops serving and closes the listeners and every connection.
func (srv *Server) Close() error {
	err := errors.Join(srv.tcp.Close(), srv.quic.Close())
	for _, tr := range srv.transports {
		err = errors.Join(err, tr.Close()) // closes its listener; the UDP socket is the caller's
	}
	srv.wg.Wait()
	return err
}
