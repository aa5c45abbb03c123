package nginx

import (
	"cmp"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/quicbench/quicbench/internal/cpuuse"
	"github.com/quicbench/quicbench/internal/extserver"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/proc"
	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/sitefiles"

	"github.com/quicbench/quicbench/internal/trust"
)

// DefaultPath is Debian's nginx binary.
const DefaultPath = "/usr/sbin/nginx"

// Config describes an nginx server stack.
type Config struct {
	// Path is the nginx binary. Empty: DefaultPath.
	Path string
	// Site is what nginx serves; its archive is written to Dir/site.
	Site *site.Site
	// Dir is nginx's working directory: archive, nginx.conf, logs, pid.
	Dir string
	// Namespace is where nginx runs (the servers namespace).
	Namespace *netns.Namespace
	// Addrs maps each origin host to the address nginx listens on.
	Addrs map[string]netip.Addr
	// Port is the TCP port on every address. Zero: 443.
	Port int
	// CertFile and KeyFile are the PEM certificate and key of every origin.
	CertFile, KeyFile string
	// Cache starts with cacheable responses (see origin.Server.SetCache).
	Cache bool
	// Workers is nginx's worker_processes. Zero: one per core.
	Workers int
	// StartTimeout bounds the wait for nginx to listen. Zero: 10 s.
	StartTimeout time.Duration
	// CPU is the CPU accounting group nginx starts in; nil: none.
	CPU *cpuuse.Group
}

// Server is a running nginx. Close stops it.
type Server struct {
	cfg     Config
	params  confParams
	process *extserver.Process

	mu        sync.Mutex
	accessLog extserver.LogTail
	counts    server.Counts    // requests per protocol since Start
	sinceMark []logEntry       // requests since the last CloseConnections
	replay    server.ReplayLog // what it answered since the last TakeReplay
}

// CheckInstalled returns an error that says how to install nginx if path
// (empty: DefaultPath) is not an executable, or why it is not run if it is
// not trusted.
func CheckInstalled(path string) error {
	_, err := trusted(path)
	return err
}

// trusted is the trusted path of the nginx at path (empty: DefaultPath).
func trusted(path string) (string, error) {
	return extserver.CheckInstalled("nginx", cmp.Or(path, DefaultPath), "'make nginx' (apt-get install nginx, its service not started)")
}

// Start writes the archive and configuration and starts nginx in the
// namespace. It returns once every address accepts connections, or with
// nginx's own error (such as a port already taken) if it stopped.
func Start(cfg Config) (_ *Server, err error) {
	if cfg.Path == "" {
		cfg.Path = DefaultPath
	}
	if cfg.Port == 0 {
		cfg.Port = 443
	}
	nginxPath, err := trusted(cfg.Path)
	if err != nil {
		return nil, err
	}
	// nginx reads relative paths against its prefix: give it absolute ones.
	for _, p := range []*string{&cfg.Dir, &cfg.CertFile, &cfg.KeyFile} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return nil, fmt.Errorf("nginx: %w", err)
		}
		*p = abs
	}
	if err := cfg.Site.Validate(); err != nil {
		return nil, err
	}
	for _, sub := range []string{"tmp", "site"} {
		if err := safefs.MkdirAll(cfg.Dir, sub, 0o755); err != nil {
			return nil, fmt.Errorf("nginx: %w", err)
		}
	}
	locations, err := sitefiles.Write(cfg.Site, cfg.Dir, "site", "nginx")
	if err != nil {
		return nil, err
	}
	if err := writeTicketKey(cfg.Dir, "ticket.key"); err != nil {
		return nil, fmt.Errorf("nginx: ticket key: %w", err)
	}
	s := &Server{cfg: cfg, accessLog: extserver.LogTail{Dir: cfg.Dir, Name: "access.log"}}
	s.params = confParams{
		dir: cfg.Dir, root: filepath.Join(cfg.Dir, "site"), certFile: cfg.CertFile, keyFile: cfg.KeyFile,
		port: cfg.Port, workers: cfg.Workers, cache: cfg.Cache, addrs: cfg.Addrs, hosts: cfg.Site.Hosts(), locations: locations,
	}
	if err := s.writeConf(); err != nil {
		return nil, err
	}
	// A fresh error log, so that a failure names this start's problem, and
	// no old pid file, whose appearance says that nginx is listening.
	os.Remove(filepath.Join(cfg.Dir, "error.log"))
	os.Remove(filepath.Join(cfg.Dir, "nginx.pid"))
	cmd := exec.Command(nginxPath, "-p", cfg.Dir, "-c", filepath.Join(cfg.Dir, "nginx.conf"), "-e", filepath.Join(cfg.Dir, "error.log"))
	s.process, err = extserver.Start(extserver.Config{Name: "nginx", Namespace: cfg.Namespace, CPU: cfg.CPU, StartTimeout: cfg.StartTimeout, LastError: s.lastError}, cmd)
	if err != nil {
		return nil, err
	}
	if err := s.process.WaitServing(s.pidWritten, s.addrs()); err != nil {
		return nil, err
	}
	return s, nil
}

// pidWritten reports whether nginx has written its pid file, which it
// does once it has bound every listening socket (a bind that fails makes
// it retry for about 2.5 s and exit).
func (s *Server) pidWritten() bool {
	data, _ := os.ReadFile(filepath.Join(s.cfg.Dir, "nginx.pid"))
	return strings.TrimSpace(string(data)) == strconv.Itoa(s.process.Pid())
}

// addrs are the addresses nginx listens on, one per origin.
func (s *Server) addrs() []netip.AddrPort {
	var out []netip.AddrPort
	for _, host := range s.params.hosts {
		out = append(out, netip.AddrPortFrom(s.cfg.Addrs[host], uint16(s.cfg.Port)))
	}
	return out
}

func (s *Server) writeConf() error {
	if err := safefs.WriteFile(s.cfg.Dir, "nginx.conf", []byte(conf(s.params)), 0o644); err != nil {
		return fmt.Errorf("nginx: configuration: %w", err)
	}
	return nil
}

// lastError is the last [emerg] or [alert] line of nginx's error log, such
// as `bind() to 198.19.0.10:443 failed (98: Address already in use)`.
func (s *Server) lastError() string {
	data, _ := os.ReadFile(filepath.Join(s.cfg.Dir, "error.log"))
	var last string
	for line := range strings.SplitSeq(string(data), "\n") {
		if i := strings.Index(line, "[emerg]"); i >= 0 && !strings.Contains(line, "still could not bind()") {
			last = line[i:]
		} else if i := strings.Index(line, "[alert]"); i >= 0 && last == "" {
			last = line[i:]
		}
	}
	if last == "" {
		if s.process != nil && s.process.Stderr.LastLine() != "" {
			return s.process.Stderr.LastLine()
		}
		return "no error in " + filepath.Join(s.cfg.Dir, "error.log")
	}
	if strings.Contains(last, "Address already in use") {
		last += ": another server holds the port; stop it, or run without --server nginx"
	}
	return last
}

// Close stops nginx: SIGTERM, so that the master stops and reaps its
// workers, then SIGKILL to the whole group if it takes over 3 s.
func (s *Server) Close() error { return s.process.Stop() }

// SetCache rewrites the cache headers (see origin.Server.SetCache) and
// reloads nginx.
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
// origin.Server.SetAltSvc) and reloads nginx.
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

// CloseConnections makes nginx close every client connection (a graceful
// reload: the old workers close their idle connections, and session tickets
// stay valid because their key is in a file) and forgets the records.
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

// reload sends SIGHUP and waits until the workers that served before are
// gone and no client connection is left, at most 5 s.
func (s *Server) reload() error {
	old := childrenOf(s.process.Pid())
	if err := syscall.Kill(s.process.Pid(), syscall.SIGHUP); err != nil {
		return fmt.Errorf("nginx: reload: %w", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		now := childrenOf(s.process.Pid())
		oldLeft := 0
		for pid := range old {
			if now[pid] {
				oldLeft++
			}
		}
		var socks []socket
		var err error
		if oldLeft == 0 && len(now) > 0 {
			socks, err = s.sockets()
			if err == nil && len(socks) == 0 {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nginx: reload did not close the client connections within 5 s (%d old workers left, %d connections, %v): %s", oldLeft, len(socks), err, s.lastError())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// childrenOf returns the set of live processes whose parent is pid.
func childrenOf(pid int) map[int]bool {
	out := map[int]bool{}
	for _, p := range proc.List() {
		if p.State != "Z" && p.PPID == pid {
			out[p.PID] = true
		}
	}
	return out
}

// Counts returns the requests nginx served since Start, per protocol.
func (s *Server) Counts() server.Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.readLog()
	return s.counts
}

// Connections returns a record per client connection since the last
// CloseConnections: handshake kind and requests from the access log, and
// transport statistics read now from the kernel (ss); a connection that
// served no request yet has handshake server.HandshakeUnknown.
func (s *Server) Connections() []server.ConnRecord {
	s.mu.Lock()
	s.readLog()
	entries := append([]logEntry(nil), s.sinceMark...)
	s.mu.Unlock()
	socks, _ := s.sockets()
	var recs []server.ConnRecord
	index := map[string]int{} // connection serial → recs index
	for _, e := range entries {
		i, ok := index[e.conn]
		if !ok {
			i = len(recs)
			index[e.conn] = i
			rec := server.ConnRecord{Transport: "tcp", ALPN: e.alpn(), ServerName: e.sni, Remote: e.remote, Handshake: server.HandshakeFull, Closed: true}
			if e.resumed {
				rec.Handshake = server.HandshakeResumed
			}
			recs = append(recs, rec)
		}
		recs[i].Requests++
	}
	for _, sock := range socks {
		i := -1
		for j := range recs {
			if recs[j].Remote == sock.remote {
				i = j
			}
		}
		if i < 0 {
			recs = append(recs, server.ConnRecord{Transport: "tcp", Remote: sock.remote, Handshake: server.HandshakeUnknown})
			i = len(recs) - 1
		}
		sock.fill(&recs[i])
	}
	return recs
}

// logEntry is one access log line.
type logEntry struct {
	conn, remote, proto, sni string
	resumed                  bool
	status                   string
	request                  string // "METHOD URL"
}

func (e logEntry) alpn() string {
	if e.proto == "HTTP/2.0" {
		return "h2"
	}
	return "http/1.1"
}

// readLog parses the access log's new complete lines. Call with s.mu held.
func (s *Server) readLog() { s.accessLog.Read(s.note) }

// note counts one line of the access log. Call with s.mu held.
func (s *Server) note(line string) {
	f := strings.Fields(line)
	if len(f) < 6 {
		return
	}
	e := logEntry{conn: f[0], remote: f[1], proto: f[2], resumed: f[3] == "r", sni: f[5]}
	if len(f) >= 11 {
		e.status, e.request = f[6], f[9]+" "+f[10]
		if e.status == "404" {
			s.replay.Unmatched(e.request)
		} else {
			body, _ := strconv.Atoi(f[8])
			s.replay.Matched(site.Exact, body) // nginx serves exact paths only
		}
	}
	switch e.proto {
	case "HTTP/2.0":
		s.counts.H2++
	case "HTTP/1.1", "HTTP/1.0":
		s.counts.H1++
	}
	s.sinceMark = append(s.sinceMark, e)
}

// socket is one established TCP connection as ss reports it.
type socket struct {
	remote                    string
	congestion                string
	srttMs                    float64
	cwnd, mss                 uint64
	bytesAcked, bytesReceived uint64
	retransmits               uint64
}

func (k socket) fill(rec *server.ConnRecord) {
	rec.Closed = false
	rec.Congestion = k.congestion
	rec.SmoothedRTTMs = k.srttMs
	rec.CwndBytes = k.cwnd * k.mss
	rec.BytesSent, rec.BytesReceived = k.bytesAcked, k.bytesReceived
	rec.Retransmits = k.retransmits
}

// sockets lists the established connections on nginx's port with their
// TCP_INFO, from `ss -tin` in the namespace.
func (s *Server) sockets() ([]socket, error) {
	ss, err := trust.LookPath("ss")
	if err != nil {
		return nil, fmt.Errorf("nginx: %w", err)
	}
	cmd := exec.Command(ss, "-tinH", "state", "established", "sport", "=", ":"+strconv.Itoa(s.cfg.Port))
	if err := s.cfg.Namespace.WrapCommand(cmd); err != nil {
		return nil, err
	}
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("nginx: ss: %w", err)
	}
	return parseSS(string(out)), nil
}

// parseSS parses `ss -tinH state established` output: a line per socket
// (Recv-Q, Send-Q, local, peer), then an indented line of TCP_INFO fields.
func parseSS(out string) []socket {
	var socks []socket
	for line := range strings.SplitSeq(out, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Fields(line)
		if line[0] != ' ' && line[0] != '\t' {
			if len(f) >= 4 {
				socks = append(socks, socket{remote: f[3]})
			}
			continue
		}
		if len(socks) == 0 {
			continue
		}
		k := &socks[len(socks)-1]
		for _, field := range f {
			key, value, hasValue := strings.Cut(field, ":")
			if !hasValue {
				if key == "cubic" || key == "bbr" || key == "reno" {
					k.congestion = key
				}
				continue
			}
			num := func(s string) uint64 { n, _ := strconv.ParseUint(s, 10, 64); return n }
			switch key {
			case "rtt":
				srtt, _, _ := strings.Cut(value, "/")
				k.srttMs, _ = strconv.ParseFloat(srtt, 64)
			case "cwnd":
				k.cwnd = num(value)
			case "mss":
				k.mss = num(value)
			case "bytes_acked":
				k.bytesAcked = num(value)
			case "bytes_received":
				k.bytesReceived = num(value)
			case "retrans":
				_, total, _ := strings.Cut(value, "/")
				k.retransmits = num(total)
			}
		}
	}
	return socks
}

// TakeReplay returns what nginx answered since the last call: requests
// it served from the site (exact: it has no fuzzy matching), 404s (they
// matched no file of the site), and body bytes sent.
func (s *Server) TakeReplay() server.Replay {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.readLog()
	return s.replay.Take()
}
