package caddy

import (
	"bufio"
	"bytes"
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
	"syscall"
	"time"

	"github.com/quicbench/quicbench/internal/cpuuse"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/proc"
	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/trust"
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
	process *proc.Process
	stderr  *proc.Output

	mu        sync.Mutex
	readUpTo  int64            // access log bytes parsed so far
	counts    server.Counts    // requests per protocol since Start
	sinceMark []logEntry       // requests since the last CloseConnections
	replay    server.ReplayLog // what it answered since the last TakeReplay
}

// CheckInstalled returns an error that says how to install Caddy if path
// (empty: DefaultPath) is not there, or why it is not run if it is not
// trusted.
func CheckInstalled(path string) error {
	if path == "" {
		path = DefaultPath
	}
	if info, err := os.Stat(path); err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
		return fmt.Errorf("caddy not found at %s: install it with 'make caddy' (apt-get install caddy, its service not started)", path)
	}
	if _, err := trust.Executable(path); err != nil {
		return fmt.Errorf("caddy: not run: %w", err)
	}
	return nil
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
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 10 * time.Second
	}
	if !cfg.TCP && !cfg.QUIC {
		return nil, fmt.Errorf("caddy: asked to serve neither TCP nor QUIC")
	}
	if err := CheckInstalled(cfg.Path); err != nil {
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
	s := &Server{cfg: cfg}
	if s.path, err = trust.Executable(cfg.Path); err != nil {
		return nil, fmt.Errorf("caddy: not run: %w", err)
	}
	answers, err := newAnswers(cfg.Site)
	if err != nil {
		return nil, err
	}
	if err := writeBodies(cfg.Dir, answers); err != nil {
		return nil, err
	}
	s.params = confParams{dir: cfg.Dir, certFile: cfg.CertFile, keyFile: cfg.KeyFile, port: cfg.Port, tcp: cfg.TCP, quic: cfg.QUIC,
		cache: cfg.Cache, addrs: cfg.Addrs, hosts: cfg.Site.Hosts(), site: cfg.Site, answers: answers}
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
// serves. Its home and configuration directories are its own directory,
// so that it writes nothing elsewhere.
func (s *Server) run() (err error) {
	cmd := exec.Command(s.path, "run", "--config", filepath.Join(s.cfg.Dir, "caddy.json"))
	cmd.Env = append(os.Environ(), "HOME="+s.cfg.Dir, "XDG_CONFIG_HOME="+filepath.Join(s.cfg.Dir, "config"), "XDG_DATA_HOME="+filepath.Join(s.cfg.Dir, "data"))
	if err := s.cfg.Namespace.WrapCommand(cmd); err != nil {
		return err
	}
	s.stderr = &proc.Output{}
	cmd.Stdout, cmd.Stderr = io.Discard, s.stderr
	s.cfg.CPU.Prepare(cmd)
	if s.process, err = proc.Start(cmd); err != nil {
		return fmt.Errorf("caddy: start %s: %w", s.path, err)
	}
	defer func() {
		if err != nil {
			s.process.Kill()
			s.process.Wait()
		}
	}()
	if err = s.cfg.CPU.Started(s.process.Pid()); err != nil {
		return fmt.Errorf("caddy: %w", err)
	}
	return s.waitServing()
}

// waitServing waits for Caddy's word that it serves, then (when it serves
// TCP) for every address to accept a connection.
func (s *Server) waitServing() error {
	deadline := time.Now().Add(s.cfg.StartTimeout)
	for !strings.Contains(s.stderr.String(), readyMessage) {
		select {
		case <-s.process.Done():
			return fmt.Errorf("caddy stopped at start: %s", s.lastError())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("caddy did not start within %v: %s", s.cfg.StartTimeout, s.lastError())
		}
	}
	if !s.cfg.TCP {
		return nil
	}
	for _, host := range s.params.hosts {
		addr := netip.AddrPortFrom(s.cfg.Addrs[host], uint16(s.cfg.Port)).String()
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			c, err := s.cfg.Namespace.DialContext(ctx, "tcp4", addr)
			cancel()
			if err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("caddy did not listen on %s within %v: %s", addr, s.cfg.StartTimeout, s.lastError())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return nil
}

// lastError is the message of Caddy's last error line on its standard
// error, or its last line.
func (s *Server) lastError() string {
	last := ""
	for line := range strings.SplitSeq(s.stderr.String(), "\n") {
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
		return s.stderr.LastLine()
	}
	if strings.Contains(last, "address already in use") {
		last += ": another server holds the port; stop it, or run without --server caddy"
	}
	return last
}

// stop ends Caddy: SIGTERM, then SIGKILL to its group after 3 s.
func (s *Server) stop() error {
	if s.process == nil {
		return nil
	}
	syscall.Kill(s.process.Pid(), syscall.SIGTERM)
	select {
	case <-s.process.Done():
		return nil
	case <-time.After(3 * time.Second):
		return s.process.Kill()
	}
}

// Close stops Caddy.
func (s *Server) Close() error { return s.stop() }

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
	s.sinceMark = nil
	return nil
}

// Exited is closed when the Caddy process has exited (a reload between
// visits keeps the process).
func (s *Server) Exited() <-chan struct{} { return s.process.Done() }

// ExitReason names Caddy and how it exited, with its last error; "" while
// it serves.
func (s *Server) ExitReason() string {
	how := s.process.Exited()
	if how == "" {
		return ""
	}
	return fmt.Sprintf("the server caddy exited: %s (%s)", how, s.lastError())
}

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
// handshake (resumed or full, as the TLS stack said) and requests.
func (s *Server) Connections() []server.ConnRecord {
	s.mu.Lock()
	s.readLog()
	entries := append([]logEntry(nil), s.sinceMark...)
	s.mu.Unlock()
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

// readLog parses the access log's new complete lines. Call with s.mu held.
func (s *Server) readLog() {
	f, err := safefs.OpenIn(s.cfg.Dir, "access.log")
	if err != nil {
		return
	}
	defer f.Close()
	if _, err := f.Seek(s.readUpTo, io.SeekStart); err != nil {
		return
	}
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadString('\n')
		if err != nil { // an incomplete line is read next time
			return
		}
		s.readUpTo += int64(len(line))
		var a accessLine
		if json.Unmarshal([]byte(line), &a) != nil || a.Logger != accessLogger {
			continue
		}
		s.note(a)
	}
}

// note counts one request of the access log. Call with s.mu held.
func (s *Server) note(a accessLine) {
	req := a.Request
	e := logEntry{remote: net.JoinHostPort(req.RemoteIP, req.RemotePort), proto: req.Proto, alpn: alpnOf(req.Proto, req.TLS.Proto),
		sni: req.TLS.ServerName, resumed: req.TLS.Resumed}
	if kind := s.params.answers.kindOf(req.Host, req.Method, req.URI); kind == site.Unmatched {
		s.replay.Unmatched(req.Method + " https://" + req.Host + req.URI)
	} else {
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
