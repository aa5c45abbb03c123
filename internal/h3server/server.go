package h3server

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/quicbench/quicbench/internal/cpuuse"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/proc"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/stacks"
	"github.com/quicbench/quicbench/internal/trust"
)

// Config describes a server of servers/ to run.
type Config struct {
	// Binary is the executable's name (BinaryQuinn or BinaryQuiche).
	Binary string
	// QUIC is the QUIC server it is, whose controllers CC is one of.
	QUIC factor.QUICServer
	// Path is the executable. Empty: FindBinary(Binary).
	Path string
	// Site is what it serves; its manifest and bodies go to Dir.
	Site *site.Site
	// Dir receives the manifest and bodies.
	Dir string
	// UDP are the bound sockets to serve on (one per origin address); the
	// server gets copies, the caller keeps and closes these.
	UDP []*net.UDPConn
	// CertFile and KeyFile are the PEM certificate and key of every origin.
	CertFile, KeyFile string
	// CC is the congestion controller, one of QUIC's.
	CC factor.CC
	// InitialWindow is the initial congestion window in packets (of the
	// server's datagram size: its ready line reports the bytes). Zero:
	// DefaultInitialWindow.
	InitialWindow int
	// Cache starts with cacheable responses (see origin.Server.SetCache).
	Cache bool
	// StartTimeout bounds the wait for the server's ready line. Zero: 10 s.
	StartTimeout time.Duration
	// CPU is the CPU accounting group the server starts in; nil: none.
	CPU *cpuuse.Group
}

// The servers' executables, which `make servers` builds into bin/.
const (
	BinaryQuinn  = "quicbench-h3"
	BinaryQuiche = "quicbench-quiche"
)

// DefaultInitialWindow is the initial window in packets: 32, as quic-go's
// and Wolsing et al. 2019's Google QUIC's.
const DefaultInitialWindow = 32

// Ready is what the server says it runs with once it serves.
type Ready struct {
	CC                 string `json:"cc"`
	InitialWindowBytes int    `json:"initial_window_bytes"`
	Pacing             bool   `json:"pacing"`
	HyStart            bool   `json:"hystart"`
}

// Server is a running server of servers/. Close stops it.
type Server struct {
	name    string // the executable's name, for messages
	what    string // what it is, for ExitReason
	process *proc.Process
	// Ready is the server's own account of its transport.
	Ready  Ready
	stdin  io.WriteCloser
	mu     sync.Mutex // one command at a time
	out    *bufio.Reader
	stderr proc.Output
	exited chan struct{}
	// servesTCP: it takes the altsvc command (Process.ServesTCP).
	servesTCP bool
}

// EnvBinDir names the variable that points quicbench at the directory of
// its HTTP/3 servers when they are not beside the quicbench executable
// (tests, which run from a build cache, set it to bin/ of the source tree).
const EnvBinDir = "QUICBENCH_BIN"

// FindBinary finds the executable name where quicbench was installed or
// built: beside the running quicbench, in the directory $QUICBENCH_BIN
// names, or on PATH. It never looks in the working directory, and takes a
// file only when trust.Executable passes it (as root: owned by root, in
// directories no other user can write); a file found that fails is an
// error that names it and why.
func FindBinary(name string) (string, error) {
	var tried []string
	if exe, err := os.Executable(); err == nil {
		tried = append(tried, filepath.Join(filepath.Dir(exe), name))
	}
	if dir := os.Getenv(EnvBinDir); dir != "" {
		if !filepath.IsAbs(dir) {
			return "", fmt.Errorf("%s=%s is not an absolute path: name the directory of %s from the root", EnvBinDir, dir, name)
		}
		tried = append(tried, filepath.Join(dir, name))
	}
	for _, p := range tried {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		resolved, err := trust.Executable(p)
		if err != nil {
			return "", fmt.Errorf("%s: not run: %w", name, err)
		}
		return resolved, nil
	}
	p, err := trust.LookPath(name)
	if err == nil {
		return p, nil
	}
	if trust.IsUntrusted(err) || !errors.Is(err, exec.ErrNotFound) {
		return "", err
	}
	return "", fmt.Errorf("%s not found (looked beside quicbench, in $%s and on PATH): build it with 'make servers', which needs Rust's cargo, and run bin/quicbench or set %s to its directory", name, EnvBinDir, EnvBinDir)
}

// Start writes the manifest and starts the server on the sockets; it
// returns once the server serves, or with what it said if it stopped.
func Start(cfg Config) (_ *Server, err error) {
	if cfg.Path == "" {
		if cfg.Path, err = FindBinary(cfg.Binary); err != nil {
			return nil, err
		}
	} else if cfg.Path, err = trust.Executable(cfg.Path); err != nil {
		return nil, fmt.Errorf("%s: not run: %w", cfg.Binary, err)
	}
	if cfg.InitialWindow == 0 {
		cfg.InitialWindow = DefaultInitialWindow
	}
	if _, err := factor.QUICOf(cfg.QUIC, cfg.CC); err != nil {
		return nil, err
	}
	if len(cfg.UDP) == 0 {
		return nil, fmt.Errorf("%s: no socket to serve on", cfg.Binary)
	}
	if err := cfg.Site.Validate(); err != nil {
		return nil, err
	}
	if err := checkTargets(cfg.Binary, cfg.Site); err != nil {
		return nil, err
	}
	if err := writeManifest(cfg.Site, cfg.Dir); err != nil {
		return nil, err
	}
	cmd, files, err := command(cfg)
	if err != nil {
		closeAll(files)
		return nil, err
	}
	return Run(Process{Name: cfg.Binary, What: "the HTTP/3 server " + cfg.Binary, Cmd: cmd, Files: files,
		CPU: cfg.CPU, StartTimeout: cfg.StartTimeout, Cache: cfg.Cache})
}

// checkTargets refuses, for quinn's server, a site with a request target
// (path and query) longer than its HTTP library takes
// (server.MaxQuinnRequestTarget), as an input error: that request would
// get no answer, and the load would fail only as a broken image.
func checkTargets(binary string, s *site.Site) error {
	if binary != BinaryQuinn {
		return nil
	}
	for _, o := range s.Origins {
		for _, r := range o.Resources {
			target := len(r.Path)
			if r.Query != "" {
				target += 1 + len(r.Query)
			}
			if target > server.MaxQuinnRequestTarget {
				return &results.InputError{Err: fmt.Errorf("%s: %.100q… has a request target of %d bytes; quinn's server (the http crate's URI) takes at most %d: serve this page with --quic-server quic-go or quiche", binary, "https://"+o.Host+r.Path, target, server.MaxQuinnRequestTarget)}
			}
		}
	}
	return nil
}

// Process is a server to start in a process of its own that speaks the
// control protocol on its standard input and output.
type Process struct {
	// Name names it in messages, such as "quicbench-h3"; What names it in
	// its ExitReason, such as "the HTTP/3 server quicbench-h3".
	Name, What string
	// Cmd is its command line; Run sets its standard input, output and
	// error, and its CPU group.
	Cmd *exec.Cmd
	// Files are the descriptors Cmd passes (its ExtraFiles): Run closes
	// them once the child has its copies.
	Files []*os.File
	// CPU is the CPU accounting group it starts in; nil: none.
	CPU *cpuuse.Group
	// Send writes what it reads on its standard input before its ready
	// line; nil: nothing.
	Send func(io.Writer) error
	// Stderr also receives what it writes to its standard error; nil:
	// only the Server keeps it (its last line goes into errors).
	Stderr io.Writer
	// StartTimeout bounds the wait for its ready line. Zero: 10 s.
	StartTimeout time.Duration
	// Cache starts it with cacheable responses (see
	// origin.Server.SetCache).
	Cache bool
	// ServesTCP: it serves h1 and h2 too (the Go origin), so it takes the
	// command that sets their Alt-Svc field; the Rust servers serve only
	// h3 and are not asked.
	ServesTCP bool
}

// Run starts p and returns once it said it is ready (its Ready), or with
// what it said if it stopped.
func Run(p Process) (_ *Server, err error) {
	defer closeAll(p.Files) // the child has its copies
	if p.StartTimeout == 0 {
		p.StartTimeout = 10 * time.Second
	}
	stdin, err := p.Cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Name, err)
	}
	stdout, err := p.Cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Name, err)
	}
	s := over(p.Name, stdin, stdout)
	s.what, s.servesTCP = p.What, p.ServesTCP
	p.Cmd.Stderr = &s.stderr
	if p.Stderr != nil {
		p.Cmd.Stderr = io.MultiWriter(&s.stderr, p.Stderr)
	}
	p.CPU.Prepare(p.Cmd)
	if s.process, err = proc.Start(p.Cmd); err != nil {
		return nil, fmt.Errorf("%s: start %s: %w", p.Name, p.Cmd.Path, err)
	}
	go func() { s.process.Wait(); close(s.exited) }()
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if err = p.CPU.Started(s.process.Pid()); err != nil {
		return nil, fmt.Errorf("%s: %w", p.Name, err)
	}
	if p.Send != nil {
		if err := p.Send(stdin); err != nil {
			return nil, fmt.Errorf("%s: did not start: %w (%s)", p.Name, err, s.lastError())
		}
	}
	if err := s.readLine(&s.Ready, p.StartTimeout); err != nil {
		return nil, fmt.Errorf("%s: did not start: %w", p.Name, err)
	}
	if p.Cache {
		if err := s.SetCache(true); err != nil {
			return nil, err // the deferred Close stops it
		}
	}
	return s, nil
}

// closeAll closes files, ignoring errors: they are copies.
func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// over is the server name that quicbench drives over stdin and reads
// from stdout (its process, if any, is set by Start).
func over(name string, stdin io.WriteCloser, stdout io.Reader) *Server {
	return &Server{name: name, stdin: stdin, out: bufio.NewReader(stdout), exited: make(chan struct{})}
}

// command is the server's command line, with copies of the sockets as
// descriptors 3 on.
func command(cfg Config) (*exec.Cmd, []*os.File, error) {
	var files []*os.File
	for _, c := range cfg.UDP {
		f, err := c.File()
		if err != nil {
			return nil, files, fmt.Errorf("%s: socket %s: %w", cfg.Binary, c.LocalAddr(), err)
		}
		files = append(files, f)
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, files, fmt.Errorf("%s: %w", cfg.Binary, err)
	}
	cmd := exec.Command(cfg.Path,
		"--manifest", filepath.Join(dir, "manifest.json"), "--bodies", filepath.Join(dir, "bodies"),
		"--cert", cfg.CertFile, "--key", cfg.KeyFile, "--cc", string(cfg.CC),
		"--initial-window", strconv.Itoa(cfg.InitialWindow), "--sockets", strconv.Itoa(len(files)))
	cmd.ExtraFiles = files
	return cmd, files, nil
}

// do sends one command and decodes its reply into v.
func (s *Server) do(command string, v any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := io.WriteString(s.stdin, command+"\n"); err != nil {
		if reason := s.exitReason(time.Second); reason != "" {
			return errors.New(reason)
		}
		return fmt.Errorf("%s: %s: %w (%s)", s.name, command, err, s.lastError())
	}
	if err := s.readLine(v, 10*time.Second); err != nil {
		return fmt.Errorf("%s: %s: %w", s.name, command, err)
	}
	return nil
}

// readLine reads one reply line into v within timeout.
func (s *Server) readLine(v any, timeout time.Duration) error {
	type result struct {
		line []byte
		err  error
	}
	got := make(chan result, 1)
	go func() {
		line, err := s.out.ReadBytes('\n')
		got <- result{line, err}
	}()
	select {
	case r := <-got:
		if r.err != nil {
			if reason := s.exitReason(time.Second); reason != "" {
				return errors.New(reason)
			}
			return fmt.Errorf("the server stopped: %s", s.lastError())
		}
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(r.line, &e) == nil && e.Error != "" {
			return errors.New(e.Error)
		}
		return json.Unmarshal(r.line, v)
	case <-time.After(timeout):
		if s.process != nil {
			s.process.Kill()
		}
		return fmt.Errorf("no answer within %v: %s", timeout, s.lastError())
	}
}

// exitReason is ExitReason once the server has exited, waiting at most d
// for it to; "" if it still runs.
func (s *Server) exitReason(d time.Duration) string {
	<-s.exitedWithin(d)
	return s.ExitReason()
}

// exitedWithin is a channel closed when the server has exited or d passed.
func (s *Server) exitedWithin(d time.Duration) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		select {
		case <-s.exited:
		case <-time.After(d):
		}
		close(ch)
	}()
	return ch
}

// lastError is the last line the server wrote to its standard error.
func (s *Server) lastError() string {
	if msg := panicMessage(s.stderr.String()); msg != "" {
		return msg
	}
	if line := s.stderr.LastLine(); line != "" {
		return line
	}
	return "it said nothing"
}

// panicMessage is a Rust panic's place and message from a server's
// standard error ("thread 'main' panicked at FILE:LINE:COL:" and the
// message on the next line, then a note or a backtrace), or the line our
// servers' own hook prints ("NAME: panicked at FILE:LINE: MESSAGE"); ""
// if it tells of no panic.
func panicMessage(stderr string) string {
	lines := strings.Split(stderr, "\n")
	for i, line := range lines {
		_, at, ok := strings.Cut(line, "panicked at ")
		if !ok {
			continue
		}
		if !strings.HasSuffix(at, ":") || i+1 == len(lines) {
			return "panicked at " + at
		}
		return "panicked at " + at + " " + strings.TrimSpace(lines[i+1])
	}
	return ""
}

// SetCache chooses the cache policy from now on (see origin.Server.SetCache).
func (s *Server) SetCache(on bool) error {
	cmd := "cache off"
	if on {
		cmd = "cache on"
	}
	return s.do(cmd, &struct{}{})
}

// SetAltSvc makes a server that serves h1 and h2 (Process.ServesTCP) put
// the Alt-Svc field value on their responses from now on, "" none (see
// origin.Server.SetAltSvc); a server of h3 alone has nothing to offer it
// on.
func (s *Server) SetAltSvc(value string) error {
	if !s.servesTCP {
		return nil
	}
	if value == "" {
		return s.do("altsvc off", &struct{}{})
	}
	return s.do("altsvc "+value, &struct{}{})
}

// SetQlogDir makes the server write a qlog of every connection that
// starts from now on into dir, as <original destination connection
// ID>_server.sqlog; "" stops it (see origin.Server.SetQlogDir).
func (s *Server) SetQlogDir(dir string) error {
	if dir == "" {
		return s.do("qlog off", &struct{}{})
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("%s: qlog: %w", s.name, err)
	}
	if strings.ContainsAny(abs, "\n\r") {
		return fmt.Errorf("%s: qlog directory %q has a line break", s.name, abs)
	}
	return s.do("qlog "+abs, &struct{}{})
}

// CloseConnections closes every client connection with H3_NO_ERROR and
// forgets their records; a repeat visit must reconnect.
func (s *Server) CloseConnections() error { return s.do("close", &struct{}{}) }

// Counts returns the requests served since Start (all h3).
func (s *Server) Counts() (server.Counts, error) {
	var c server.Counts
	err := s.do("counts", &c)
	return c, err
}

// TakeReplay returns what matching did since the last call (see
// origin.Server.TakeReplay).
func (s *Server) TakeReplay() (server.Replay, error) {
	var r server.Replay
	err := s.do("replay", &r)
	return r, err
}

// Record is a connection as a server of the control protocol reports it
// (servers/common/src/control.rs), one element of its conns reply.
type Record struct {
	// Transport is "quic" (the Rust servers leave it out) or "tcp" (the Go
	// origin's h1 and h2 connections).
	Transport     string `json:"transport,omitempty"`
	ALPN          string `json:"alpn"`
	ServerName    string `json:"server_name"`
	Remote        string `json:"remote"`
	Handshake     string `json:"handshake"`
	Requests      int    `json:"requests"`
	OpenedUnixNs  int64  `json:"opened_unix_ns"`
	Closed        bool   `json:"closed"`
	BytesSent     uint64 `json:"bytes_sent"`
	BytesReceived uint64 `json:"bytes_received"`
	Congestion    string `json:"congestion"`
	// SmoothedRTTMs is in ms, CwndBytes in bytes.
	SmoothedRTTMs float64 `json:"srtt_ms"`
	CwndBytes     uint64  `json:"cwnd_bytes"`
	// LostPackets counts QUIC packets declared lost, or a TCP
	// connection's retransmitted segments (server.ConnRecord.Retransmits).
	LostPackets      uint64 `json:"lost_packets"`
	SentPackets      uint64 `json:"sent_packets"`
	CongestionEvents uint64 `json:"congestion_events"`
	// StallsUnixNs are the connection's waits for resent data
	// (server.ConnRecord.Stalls), each [from, to] in Unix ns: the Go
	// origin's QUIC connections only; the Rust servers leave it out.
	StallsUnixNs [][2]int64 `json:"stalls_unix_ns,omitempty"`
	// ServingUnixNs are the times the server worked on the connection's
	// requests (server.ConnRecord.Serving), each [from, to] in Unix ns:
	// the Go origin's only.
	ServingUnixNs [][2]int64 `json:"serving_unix_ns,omitempty"`
}

// Connections returns a record per client connection since the last
// CloseConnections, with its statistics read now.
func (s *Server) Connections() ([]server.ConnRecord, error) {
	var recs []Record
	if err := s.do("conns", &recs); err != nil {
		return nil, err
	}
	out := make([]server.ConnRecord, len(recs))
	for i, r := range recs {
		out[i] = r.connRecord()
	}
	return out, nil
}

// connRecord is r as a connection record.
func (r Record) connRecord() server.ConnRecord {
	return server.ConnRecord{
		Transport: cmp.Or(r.Transport, "quic"), ALPN: r.ALPN, ServerName: r.ServerName, Remote: r.Remote, Handshake: r.Handshake,
		Requests: r.Requests, OpenedAt: time.Unix(0, r.OpenedUnixNs), Closed: r.Closed,
		BytesSent: r.BytesSent, BytesReceived: r.BytesReceived, Congestion: r.Congestion,
		SmoothedRTTMs: r.SmoothedRTTMs, CwndBytes: r.CwndBytes, Retransmits: r.LostPackets, Stalls: windowsOf(r.StallsUnixNs),
		Serving: windowsOf(r.ServingUnixNs),
	}
}

// windowsOf reads windows in Unix ns; nil for none.
func windowsOf(ns [][2]int64) []server.Window {
	var out []server.Window
	for _, w := range ns {
		out = append(out, server.Window{From: time.Unix(0, w[0]), To: time.Unix(0, w[1])})
	}
	return out
}

// RecordOf is c as a server of the control protocol reports it.
func RecordOf(c server.ConnRecord) Record {
	return Record{
		Transport: c.Transport, ALPN: c.ALPN, ServerName: c.ServerName, Remote: c.Remote, Handshake: c.Handshake,
		Requests: c.Requests, OpenedUnixNs: c.OpenedAt.UnixNano(), Closed: c.Closed,
		BytesSent: c.BytesSent, BytesReceived: c.BytesReceived, Congestion: c.Congestion,
		SmoothedRTTMs: c.SmoothedRTTMs, CwndBytes: c.CwndBytes, LostPackets: c.Retransmits, StallsUnixNs: unixNs(c.Stalls),
		ServingUnixNs: unixNs(c.Serving),
	}
}

// unixNs writes windows in Unix ns; nil for none.
func unixNs(ws []server.Window) [][2]int64 {
	var out [][2]int64
	for _, w := range ws {
		out = append(out, [2]int64{w.From.UnixNano(), w.To.UnixNano()})
	}
	return out
}

// Close stops the server: its standard input closes, which ends it; after
// 3 s it is killed.
func (s *Server) Close() error {
	if s.process == nil {
		return nil
	}
	s.stdin.Close()
	select {
	case <-s.exited:
		return nil
	case <-time.After(3 * time.Second):
		return s.process.Kill()
	}
}

// QUICTransport is the transport the server reported when it started.
func (s *Server) QUICTransport() stacks.QUICTransport {
	return stacks.QUICTransport{Congestion: s.Ready.CC, InitialWindowBytes: s.Ready.InitialWindowBytes, Pacing: s.Ready.Pacing, HyStart: s.Ready.HyStart}
}

// Pid is the server's process id (0 for one without a process).
func (s *Server) Pid() int {
	if s.process == nil {
		return 0
	}
	return s.process.Pid()
}

// Exited is closed when the server has exited.
func (s *Server) Exited() <-chan struct{} { return s.exited }

// ExitReason names the server (Process.What) and how it exited, with the
// last line it wrote to its standard error.
func (s *Server) ExitReason() string {
	if s.process == nil {
		return ""
	}
	how := s.process.Exited()
	if how == "" {
		return ""
	}
	return fmt.Sprintf("%s exited: %s (%s)", s.what, how, s.lastError())
}

var _ server.Server = (*Server)(nil)

// Starter is a server.Kind's Start for the executable binary, which is
// QUIC server quic: it runs the server for env's site on env's UDP sockets
// with env's congestion controller.
func Starter(binary string, quic factor.QUICServer) func(server.Env) (server.Server, error) {
	return func(env server.Env) (server.Server, error) {
		s, err := Start(Config{Binary: binary, QUIC: quic, Site: env.Site, Dir: env.Dir, UDP: env.UDP,
			CertFile: env.CertFile, KeyFile: env.KeyFile, CC: env.CC, Cache: env.Cache, CPU: env.CPU})
		if err != nil {
			return nil, err
		}
		return s, nil
	}
}
