package caddy

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/quicbench/quicbench/internal/cpuuse"
	"github.com/quicbench/quicbench/internal/extserver"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/site"
)

// DefaultPath is Debian's caddy binary.
const DefaultPath = "/usr/bin/caddy"

// readyMessage is what Caddy logs once every server of its configuration
// listens.
const readyMessage = "serving initial configuration"

// Config describes a Caddy server stack.
type Config struct {
	// Path is the caddy binary. Empty: DefaultPath.
	Path string
	// Site is what Caddy serves; its files are written to Dir/site.
	Site *site.Site
	// Dir is Caddy's directory: site, caddy.json, storage, access log.
	Dir string
	// Namespace is where Caddy runs (the servers namespace).
	Namespace *netns.Namespace
	// Addrs maps each origin host to the address Caddy listens on.
	Addrs map[string]netip.Addr
	// Port is the TCP and UDP port on every address. Zero: 443.
	Port int
	// TCP and QUIC say what it serves: h1 and h2 over TCP, h3 over QUIC.
	TCP, QUIC bool
	// CertFile and KeyFile are the PEM certificate and key of every origin.
	CertFile, KeyFile string
	// Cache starts with cacheable responses (see origin.Server.SetCache).
	Cache bool
	// StartTimeout bounds the wait for Caddy to serve. Zero: 10 s.
	StartTimeout time.Duration
	// CPU is the CPU accounting group Caddy starts in; nil: none.
	CPU *cpuuse.Group
}

// Server is a running Caddy. Close stops it.
type Server struct {
	cfg     Config
	params  confParams
	path    string // the trusted caddy binary
	process *extserver.Process
	// match is the matching service Caddy asks for what its routes do not
	// take exactly.
	match *matchService

	mu        sync.Mutex
	accessLog extserver.LogTail
	counts    server.Counts // requests per protocol since Start
	sinceMark []logEntry    // requests since the last CloseConnections
	// handshakeLog is the certificate selection log, read by handshakes
	// into fullSinceMark, the full handshakes since the last
	// CloseConnections.
	handshakeLog  extserver.LogTail
	handshakes    handshakeReader
	fullSinceMark []fullHandshake
	replay        server.ReplayLog // what it answered since the last TakeReplay
}

// CheckInstalled returns an error that says how to install Caddy if path
// (empty: DefaultPath) is not there, or why it is not run if it is not
// trusted.
func CheckInstalled(path string) error {
	_, err := trusted(path)
	return err
}

// trusted is the trusted path of the caddy at path (empty: DefaultPath).
func trusted(path string) (string, error) {
	return extserver.CheckInstalled("caddy", cmp.Or(path, DefaultPath), "'make caddy' (apt-get install caddy, its service not started)")
}

// Start writes the site and the configuration and starts Caddy in the
// namespace. It returns once Caddy says it serves and every address
// accepts TCP connections (when it serves TCP), or with Caddy's own error.
func Start(cfg Config) (_ *Server, err error) {
	if cfg.Path == "" {
		cfg.Path = DefaultPath
	}
	if cfg.Port == 0 {
		cfg.Port = 443
	}
	if !cfg.TCP && !cfg.QUIC {
		return nil, fmt.Errorf("caddy: asked to serve neither TCP nor QUIC")
	}
	caddyPath, err := trusted(cfg.Path)
	if err != nil {
		return nil, err
	}
	for _, p := range []*string{&cfg.Dir, &cfg.CertFile, &cfg.KeyFile} {
		if *p, err = filepath.Abs(*p); err != nil {
			return nil, fmt.Errorf("caddy: %w", err)
		}
	}
	if err := cfg.Site.Validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, path: caddyPath, accessLog: extserver.LogTail{Dir: cfg.Dir, Name: "access.log"},
		handshakeLog: extserver.LogTail{Dir: cfg.Dir, Name: "handshake.log"}}
	// A Caddy started before in the same directory left its lines.
	s.accessLog.SkipWritten()
	s.handshakeLog.SkipWritten()
	answers, err := newAnswers(cfg.Site)
	if err != nil {
		return nil, err
	}
	if err := writeBodies(cfg.Dir, answers); err != nil {
		return nil, err
	}
	if s.match, err = startMatchService(cfg.Namespace, cfg.Site, answers); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			s.match.Close()
		}
	}()
	s.params = confParams{dir: cfg.Dir, certFile: cfg.CertFile, keyFile: cfg.KeyFile, port: cfg.Port, tcp: cfg.TCP, quic: cfg.QUIC,
		cache: cfg.Cache, addrs: cfg.Addrs, hosts: cfg.Site.Hosts(), site: cfg.Site, answers: answers, matchAddr: s.match.addr}
	if err := s.writeConf(); err != nil {
		return nil, err
	}
	if err := s.run(); err != nil {
		return nil, err
	}
	return s, nil
}

// writeBodies writes each answer's body to its file below dir/site.
func writeBodies(dir string, a *answers) error {
	for _, an := range a.list {
		if an.file == "" {
			continue
		}
		if err := safefs.WriteFile(dir, filepath.Join("site", an.file), an.res.Body, 0o644); err != nil {
			return fmt.Errorf("caddy: site: %w", err)
		}
	}
	return nil
}

func (s *Server) writeConf() error {
	data, err := conf(s.params)
	if err == nil {
		err = safefs.WriteFile(s.cfg.Dir, "caddy.json", data, 0o644)
	}
	if err != nil {
		return fmt.Errorf("caddy: configuration: %w", err)
	}
	return nil
}

// run starts Caddy on the configuration written and waits until it
// serves: it says so, then (when it serves TCP) every address accepts a
// connection. Its home and configuration directories are its own
// directory, so that it writes nothing elsewhere.
func (s *Server) run() (err error) {
	cmd := exec.Command(s.path, "run", "--config", filepath.Join(s.cfg.Dir, "caddy.json"))
	cmd.Env = append(os.Environ(), "HOME="+s.cfg.Dir, "XDG_CONFIG_HOME="+filepath.Join(s.cfg.Dir, "config"), "XDG_DATA_HOME="+filepath.Join(s.cfg.Dir, "data"))
	s.process, err = extserver.Start(extserver.Config{Name: "caddy", Namespace: s.cfg.Namespace, CPU: s.cfg.CPU, StartTimeout: s.cfg.StartTimeout, LastError: s.lastError}, cmd)
	if err != nil {
		return err
	}
	var addrs []netip.AddrPort
	if s.cfg.TCP {
		for _, host := range s.params.hosts {
			addrs = append(addrs, netip.AddrPortFrom(s.cfg.Addrs[host], uint16(s.cfg.Port)))
		}
	}
	ready := func() bool { return strings.Contains(s.process.Stderr.String(), readyMessage) }
	return s.process.WaitServing(ready, addrs)
}

// lastError is the message of Caddy's last error line on its standard
// error, or its last line.
func (s *Server) lastError() string {
	last := ""
	for line := range strings.SplitSeq(s.process.Stderr.String(), "\n") {
		var e struct {
			Level, Msg, Error string
		}
		if json.Unmarshal([]byte(line), &e) == nil && (e.Level == "error" || e.Level == "fatal") {
			last = strings.TrimSpace(e.Msg + ": " + e.Error)
		} else if strings.HasPrefix(line, "Error: ") {
			last = strings.TrimPrefix(line, "Error: ")
		}
	}
	if last == "" {
		return s.process.Stderr.LastLine()
	}
	if strings.Contains(last, "address already in use") {
		last += ": another server holds the port; stop it, or run without --server caddy"
	}
	return last
}

// Close stops Caddy (SIGTERM, then SIGKILL to its group after 3 s) and
// its matching service.
func (s *Server) Close() error {
	err := s.process.Stop()
	s.match.Close()
	return err
}

// SetCache rewrites the cache policy's header fields and reloads Caddy.
func (s *Server) SetCache(on bool) error {
	if s.params.cache == on {
		return nil
	}
	s.params.cache = on
	if err := s.writeConf(); err != nil {
		return err
	}
	return s.reload()
}

// SetAltSvc sets the Alt-Svc field of every response (see
// origin.Server.SetAltSvc; Caddy's own is always replaced) and reloads
// Caddy.
func (s *Server) SetAltSvc(value string) error {
	if s.params.altSvc == value {
		return nil
	}
	s.params.altSvc = value
	if err := s.writeConf(); err != nil {
		return err
	}
	return s.reload()
}

// CloseConnections closes every client connection, TCP and QUIC alike (a
// forced reload: Caddy stops its servers, which close their connections,
// and starts new ones on the same sockets; the session ticket keys, kept
// in its storage, stay valid) and forgets the records.
func (s *Server) CloseConnections() error {
	if err := s.reload(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.readLog()
	s.sinceMark, s.fullSinceMark = nil, nil
	return nil
}

// Exited is closed when the Caddy process has exited (a reload between
// visits keeps the process).
func (s *Server) Exited() <-chan struct{} { return s.process.Done() }

// ExitReason names Caddy and how it exited, with its last error; "" while
// it serves.
func (s *Server) ExitReason() string { return s.process.ExitReason() }

// Counts returns the requests Caddy served since Start, per protocol.
func (s *Server) Counts() server.Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.readLog()
	return s.counts
}

// TakeReplay returns what Caddy answered since the last call: requests it
// served from the site (exact paths only), 404s, and body bytes sent.
func (s *Server) TakeReplay() server.Replay {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.readLog()
	return s.replay.Take()
}

// Connections returns a record per client connection since the last
// CloseConnections, from the access log: its transport and protocol, its
// handshake (resumed or full, as the TLS stack said) and requests; and,
// from the certificate selection log, when TCP connections made their full
// handshakes and the connections that made one and served no request
// (withHandshakes).
func (s *Server) Connections() []server.ConnRecord {
	s.mu.Lock()
	s.readLog()
	entries := append([]logEntry(nil), s.sinceMark...)
	full := append([]fullHandshake(nil), s.fullSinceMark...)
	s.mu.Unlock()
	return withHandshakes(accessRecords(entries), full)
}

// accessRecords are the access log's requests as a record per connection
// (transport and client address), in the order of their first requests.
func accessRecords(entries []logEntry) []server.ConnRecord {
	var recs []server.ConnRecord
	index := map[string]int{} // transport and remote address → recs index
	for _, e := range entries {
		key := e.transport() + " " + e.remote
		i, ok := index[key]
		if !ok {
			i = len(recs)
			index[key] = i
			rec := server.ConnRecord{Transport: e.transport(), ALPN: e.alpn, ServerName: e.sni, Remote: e.remote, Handshake: e.handshake()}
			recs = append(recs, rec)
		}
		recs[i].Requests++
	}
	return recs
}

// logEntry is one request of the access log.
type logEntry struct {
	remote, proto, alpn, sni string
	resumed                  bool
}

// handshake is the kind of the request's TLS handshake: resumed or full,
// as Caddy logs it; unknown where its log carries no TLS session state
// (HTTP/3: quic-go 0.29's requests give Caddy none, their server name
// empty among it).
func (e logEntry) handshake() string {
	switch {
	case e.transport() == "quic" && e.sni == "":
		return server.HandshakeUnknown
	case e.resumed:
		return server.HandshakeResumed
	}
	return server.HandshakeFull
}

// transport is "quic" for an HTTP/3 request, else "tcp".
func (e logEntry) transport() string {
	if e.proto == "HTTP/3.0" {
		return "quic"
	}
	return "tcp"
}

// alpnOf is a request's application protocol: the one TLS negotiated, or
// where the log has none (Caddy's QUIC logs none; a client may offer no
// ALPN over TLS) the one its HTTP version implies.
func alpnOf(proto, negotiated string) string {
	if negotiated != "" {
		return negotiated
	}
	switch proto {
	case "HTTP/3.0":
		return "h3"
	case "HTTP/2.0":
		return "h2"
	}
	return "http/1.1"
}

// accessLine is the part of an access log line quicbench reads.
type accessLine struct {
	Logger  string `json:"logger"`
	Request struct {
		RemoteIP   string `json:"remote_ip"`
		RemotePort string `json:"remote_port"`
		Proto      string `json:"proto"`
		Method     string `json:"method"`
		Host       string `json:"host"`
		URI        string `json:"uri"`
		TLS        struct {
			Resumed    bool   `json:"resumed"`
			Proto      string `json:"proto"`
			ServerName string `json:"server_name"`
		} `json:"tls"`
	} `json:"request"`
	Size   int `json:"size"`
	Status int `json:"status"`
}

// readLog parses the access log's and the certificate selection log's
// new complete lines. Call with s.mu held.
func (s *Server) readLog() {
	s.accessLog.Read(func(line string) {
		var a accessLine
		if json.Unmarshal([]byte(line), &a) == nil && a.Logger == accessLogger {
			s.note(a)
		}
	})
	s.handshakeLog.Read(func(line string) {
		if h, ok := s.handshakes.line(line); ok {
			s.fullSinceMark = append(s.fullSinceMark, h)
		}
	})
}

// note counts one request of the access log. Call with s.mu held.
func (s *Server) note(a accessLine) {
	req := a.Request
	e := logEntry{remote: net.JoinHostPort(req.RemoteIP, req.RemotePort), proto: req.Proto, alpn: alpnOf(req.Proto, req.TLS.Proto),
		sni: req.TLS.ServerName, resumed: req.TLS.Resumed}
	request := req.Method + " https://" + req.Host + req.URI
	switch kind, res := s.kindOf(req.Host, req.Method, req.URI); kind {
	case site.Unmatched:
		s.replay.Unmatched(request)
	case site.Variant:
		s.replay.VariantServed(request, res.Target())
		s.replay.Matched(kind, a.Size)
	default:
		s.replay.Matched(kind, a.Size)
	}
	switch req.Proto {
	case "HTTP/3.0":
		s.counts.H3++
	case "HTTP/2.0":
		s.counts.H2++
	case "HTTP/1.1", "HTTP/1.0":
		s.counts.H1++
	}
	s.sinceMark = append(s.sinceMark, e)
}

// reload hands Caddy its configuration anew through its admin endpoint,
// forced even when unchanged: Caddy starts new servers and stops the old
// ones, closing their connections.
func (s *Server) reload() error {
	data, err := conf(s.params)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return s.cfg.Namespace.DialContext(ctx, "tcp4", adminAddr)
	}}, Timeout: 10 * time.Second}
	req, err := http.NewRequest(http.MethodPost, "http://"+adminAddr+"/load", bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Cache-Control", "must-revalidate")
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("caddy: reload: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("caddy: reload: %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// kindOf is how Caddy answered a request logged with host, method and
// request target, and with which resource: by the Go origin's matching,
// which its routes (exact targets, a path's only resource) and the
// matching service follow.
func (s *Server) kindOf(host, method, target string) (site.MatchKind, *site.Resource) {
	path, query, _ := strings.Cut(target, "?")
	res, kind := s.match.matcher.Match(hostOnly(host), method, path, query)
	return kind, res
}
