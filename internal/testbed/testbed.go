// Package testbed assembles one network cell of an experiment: the client and
// servers namespaces, the emulator between them, the per-run certificates,
// and the server stacks (Kinds: the Go origin, nginx, quicbench-h3, each
// behind server.Server) listening on one IP per origin host.
package testbed

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/quicbench/quicbench/internal/caddy"
	"github.com/quicbench/quicbench/internal/cpuuse"
	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/nginx"
	"github.com/quicbench/quicbench/internal/origin"
	"github.com/quicbench/quicbench/internal/originproc"
	"github.com/quicbench/quicbench/internal/quiche"
	"github.com/quicbench/quicbench/internal/quinn"
	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/stacks"
	"github.com/quicbench/quicbench/internal/trust"
	"os"
)

// Kinds are the server stacks a testbed can run, one line each: a new
// stack is a package with a Kind and a line here.
func Kinds() []server.Kind {
	return []server.Kind{
		originproc.Kind(),
		nginx.Kind(),
		quinn.Kind(),
		quiche.Kind(),
		caddy.Kind(),
	}
}

// QUICProfiles describes every QUIC stack, as the stacks that run them
// say, in the order of factor.QUICs.
func QUICProfiles() []stacks.QUICProfile {
	var out []stacks.QUICProfile
	for _, k := range Kinds() {
		if k.Profiles != nil {
			out = append(out, k.Profiles()...)
		}
	}
	return out
}

// Config describes a cell.
type Config struct {
	// Stem names the namespaces ("<stem>-client", "<stem>-servers"); make it
	// with netns.RunName so that stale ones can be found.
	Stem string
	// Link is the emulated link.
	Link emulator.Config
	// Site is what the origins serve.
	Site *site.Site
	// RunDir receives the certificates (and a directory per server stack
	// that writes files); nothing below it is written through a link.
	RunDir string
	// Log receives server errors. Nil: discard.
	Log *slog.Logger
	// Stack is the servers' TCP stack profile; the zero value leaves the
	// namespace's kernel defaults (on this kernel: BBR).
	Stack stacks.Profile
	// Server is the server stack for h1 and h2: factor.ServerGo (the zero
	// value) or another level a Kind implements.
	Server factor.Server
	// QUIC is the stack that serves h3: factor.QUICGoNewReno (the zero
	// value: quic-go in this process) or another level whose server a
	// Kind implements, with that congestion controller.
	QUIC factor.QUIC
	// Cache makes the site cacheable from the start (see SetCache).
	Cache bool
	// CPU accounts for the CPU of the server stacks that run in processes
	// of their own, a group each ("server-" and the stack's name); nil:
	// none.
	CPU *cpuuse.Meter
	// Kinds are the stacks to choose Server's and QUIC's from, the first
	// that serves each; nil: Kinds(). A measurement of the Go origin in
	// quicbench's own process gives origin.Kind() first.
	Kinds []server.Kind
}

// Testbed is a running cell. Close removes everything it created.
type Testbed struct {
	*Network
	Certs *origin.Certs
	Site  *site.Site
	// Addrs maps each origin host name to its IP in the servers namespace.
	Addrs map[string]netip.Addr
	// Stack is what the servers' TCP stack was, read back after applying;
	// its congestion control is read from the first TCP connection a
	// server reports when the testbed could not read it from a socket of
	// its own (nginx binds its own).
	Stack stacks.Applied
	// QUICTransport is what the h3 server runs with, as it reports it.
	QUICTransport stacks.QUICTransport
	// servers are the running stacks, with how each was started (to
	// start it again should it exit); h3 is the index of the one that
	// serves h3.
	servers []running
	h3      int
	// sockets are closed by Close: a socket left open would keep the
	// deleted namespace alive for as long as the process runs.
	sockets []interface{ Close() error }
	// uplink carries a live page's traffic to the host's network (nil
	// for a testbed that serves its page).
	uplink *netns.Uplink
	// Resolver answers the hosts' names for browsers that look them up
	// (dns: resolved); nil for a live page's testbed.
	Resolver *Resolver
}

// running is a started server stack with what it was started from.
type running struct {
	server.Server
	kind server.Kind
	env  server.Env
}

// OriginPort is the port every origin listens on, for TCP and UDP.
const OriginPort = 443

// Start builds the cell. On error it removes whatever it had created.
func Start(cfg Config) (_ *Testbed, err error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if err := cfg.Site.Validate(); err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		// The servers, nginx among them, run as root from what is written
		// there: no other user may be able to change it.
		if _, err := trust.DirOrParent(cfg.RunDir); err != nil {
			return nil, fmt.Errorf("testbed directory: %w", err)
		}
	}
	tcpKind, quicKind, err := kindsOf(&cfg)
	if err != nil {
		return nil, err
	}
	tb := &Testbed{Site: cfg.Site}
	defer func() {
		if err != nil {
			err = errors.Join(err, tb.Close())
		}
	}()
	hosts := cfg.Site.Hosts()
	if tb.Network, err = StartNetwork(cfg.Stem, cfg.Link, len(hosts)); err != nil {
		return nil, err
	}
	tb.Addrs = AddrsOf(hosts, tb.Topo.ServerAddrs)
	if tb.Resolver, err = StartResolver(tb.Topo.Servers, tb.Addrs); err != nil {
		return nil, err
	}
	if tb.Certs, err = origin.NewCerts(cfg.RunDir, hosts, time.Now()); err != nil {
		return nil, err
	}
	if cfg.Stack.Name != "" {
		if tb.Stack, err = stacks.Apply(tb.Topo.Servers, netns.ClientSubnet, cfg.Stack); err != nil {
			return nil, err
		}
	}
	return tb, tb.startServers(cfg, tcpKind, quicKind)
}

// CheckServers says what this machine lacks to serve server's h1 and h2
// and quic's h3 (a server binary missing or not to be trusted); nil if
// nothing.
func CheckServers(server factor.Server, quic factor.QUIC) error {
	_, _, err := kindsOf(&Config{Server: server, QUIC: quic})
	return err
}

// kindsOf are the stacks that serve cfg's h1 and h2 and its h3, after the
// zero values' defaults and each stack's check of this machine.
func kindsOf(cfg *Config) (tcp, quic server.Kind, err error) {
	if cfg.Server == "" {
		cfg.Server = factor.ServerGo
	}
	if cfg.QUIC == "" {
		cfg.QUIC = factor.QUICGoNewReno
	}
	if !factor.QUICs().Has(cfg.QUIC) {
		return tcp, quic, fmt.Errorf("testbed: QUIC stack %q is unknown: use %s", cfg.QUIC, factor.QUICs().Names())
	}
	kinds := cfg.Kinds
	if kinds == nil {
		kinds = Kinds()
	}
	var tcpOK, quicOK bool
	for _, k := range kinds { // the first that serves each
		if !tcpOK && k.TCP != "" && k.TCP == cfg.Server {
			tcp, tcpOK = k, true
		}
		if !quicOK && k.QUIC != "" && k.QUIC == cfg.QUIC.Server() {
			quic, quicOK = k, true
		}
	}
	switch {
	case !tcpOK:
		return tcp, quic, fmt.Errorf("testbed: no server stack serves server %q: use %s", cfg.Server, factor.Servers().Names())
	case !quicOK:
		return tcp, quic, fmt.Errorf("testbed: no server stack serves QUIC server %q: use %s", cfg.QUIC.Server(), factor.QUICServers().Names())
	}
	for _, k := range []server.Kind{tcp, quic} {
		if k.Check != nil {
			if err := k.Check(); err != nil {
				return tcp, quic, err
			}
		}
	}
	return tcp, quic, nil
}

// startServers binds the sockets the stacks need on every origin's
// address and starts them: one stack when it serves both TCP and QUIC.
func (tb *Testbed) startServers(cfg Config, tcpKind, quicKind server.Kind) error {
	env := server.Env{Site: cfg.Site, Cert: tb.Certs.Leaf, CertFile: tb.Certs.LeafFile, KeyFile: tb.Certs.LeafKeyFile,
		Namespace: tb.Topo.Servers, Addrs: tb.Addrs, Port: OriginPort, Cache: cfg.Cache, Log: cfg.Log, Stack: cfg.Stack}
	tcpEnv, quicEnv := env, env
	tcpEnv.ServeTCP, quicEnv.ServeQUIC = true, true
	var err error
	if !tcpKind.BindsTCP {
		if tcpEnv.TCP, err = tb.listenTCP(cfg.Stack); err != nil {
			return err
		}
	}
	if !quicKind.BindsUDP {
		if quicEnv.UDP, err = tb.listenUDP(); err != nil {
			return err
		}
	}
	quicEnv.CC = cfg.QUIC.CC()
	if tcpKind.Name == quicKind.Name {
		tcpEnv.UDP, tcpEnv.CC, tcpEnv.ServeQUIC = quicEnv.UDP, quicEnv.CC, true
		if err := tb.start(cfg, tcpKind, tcpEnv); err != nil {
			return err
		}
	} else {
		if err := tb.start(cfg, tcpKind, tcpEnv); err != nil {
			return err
		}
		if err := tb.start(cfg, quicKind, quicEnv); err != nil {
			return err
		}
	}
	tb.h3 = len(tb.servers) - 1
	tb.QUICTransport = tb.servers[tb.h3].QUICTransport()
	if tcpKind.BindsTCP {
		tb.Stack.Pacing = false // its sockets did not get the socket options
	}
	return nil
}

// start starts kind in env, with a directory of its own if it writes
// files, and keeps it.
func (tb *Testbed) start(cfg Config, kind server.Kind, env server.Env) error {
	if kind.Files {
		env.Dir = filepath.Join(cfg.RunDir, kind.Name)
		if err := safefs.MkdirAll(cfg.RunDir, kind.Name, 0o755); err != nil {
			return fmt.Errorf("%s: %w", kind.Name, err)
		}
	}
	if kind.OwnProcess && cfg.CPU != nil {
		var err error
		if env.CPU, err = cfg.CPU.Group(ServerGroup(kind.Name)); err != nil {
			return err
		}
	}
	s, err := kind.Start(env)
	if err != nil {
		return err
	}
	tb.servers = append(tb.servers, running{Server: s, kind: kind, env: env})
	return nil
}

// ServerGroup is the CPU accounting group of the server stack name.
func ServerGroup(name string) string { return "server-" + name }

// ServerOf names the server stack that serves p, and says whether it runs
// in a process of its own (in its ServerGroup) or in quicbench's.
func (tb *Testbed) ServerOf(p factor.Protocol) (name string, ownProcess bool) {
	if len(tb.servers) == 0 {
		return "", false // a live page's servers are the site's own
	}
	r := tb.servers[0]
	if p == factor.H3 {
		r = tb.servers[tb.h3]
	}
	return r.kind.Name, r.kind.OwnProcess
}

// Exited says which server exited and how ("" if none did): a server
// stack in a process of its own can die (killed, crashed) between or
// during loads.
func (tb *Testbed) Exited() string {
	for _, r := range tb.servers {
		if reason := r.ExitReason(); reason != "" {
			return reason
		}
	}
	return ""
}

// OnExit calls exited, once, with the reason when a server exits before
// stop is called; for a load to stop at once rather than time out.
func (tb *Testbed) OnExit(exited func(reason string)) (stop func()) {
	done := make(chan struct{})
	var once sync.Once
	for _, r := range tb.servers {
		ch := r.Exited()
		if ch == nil {
			continue
		}
		go func() {
			select {
			case <-ch:
				once.Do(func() { exited(r.ExitReason()) })
			case <-done:
			}
		}()
	}
	return func() { close(done) }
}

// Revive starts again, from what they were started with, the servers
// that exited, so that the next load has them; it says which it started.
func (tb *Testbed) Revive() ([]string, error) {
	var revived []string
	for i, r := range tb.servers {
		if r.ExitReason() == "" {
			continue
		}
		r.Close() // what is left of it
		s, err := r.kind.Start(r.env)
		if err != nil {
			return revived, fmt.Errorf("start %s again after it exited: %w", r.kind.Name, err)
		}
		tb.servers[i].Server = s
		revived = append(revived, r.kind.Name)
	}
	return revived, nil
}

// listenTCP binds a TCP listener on every origin's address, with the TCP
// stack's socket options when there is one.
func (tb *Testbed) listenTCP(profile stacks.Profile) ([]net.Listener, error) {
	var out []net.Listener
	for _, host := range tb.Site.Hosts() {
		addr := netip.AddrPortFrom(tb.Addrs[host], OriginPort).String()
		var ln net.Listener
		var err error
		if profile.Name != "" {
			ln, err = stacks.Listen(tb.Topo.Servers, addr, profile, &tb.Stack)
		} else {
			ln, err = tb.Topo.Servers.Listen("tcp4", addr)
		}
		if err != nil {
			return nil, fmt.Errorf("origin %s: listen tcp %s: %w%s", host, addr, err, portHint(err))
		}
		tb.sockets = append(tb.sockets, ln)
		out = append(out, ln)
	}
	return out, nil
}

// listenUDP binds a UDP socket on every origin's address.
func (tb *Testbed) listenUDP() ([]*net.UDPConn, error) {
	var out []*net.UDPConn
	for _, host := range tb.Site.Hosts() {
		addr := netip.AddrPortFrom(tb.Addrs[host], OriginPort).String()
		pc, err := tb.Topo.Servers.ListenPacket("udp4", addr)
		if err != nil {
			return nil, fmt.Errorf("origin %s: listen udp %s: %w%s", host, addr, err, portHint(err))
		}
		tb.sockets = append(tb.sockets, pc)
		udp, ok := pc.(*net.UDPConn)
		if !ok {
			return nil, fmt.Errorf("origin %s: listen udp %s: not a UDP socket (%T)", host, addr, pc)
		}
		out = append(out, udp)
	}
	return out, nil
}

// portHint says what to do about a port already taken.
func portHint(err error) string {
	if errors.Is(err, syscall.EADDRINUSE) {
		return ": another process in the servers namespace holds the port; stop it"
	}
	return ""
}

// AddrsOf maps hosts[i] to addrs[i].
func AddrsOf(hosts []string, addrs []netip.Addr) map[string]netip.Addr {
	m := make(map[string]netip.Addr, len(hosts))
	for i, h := range hosts {
		m[h] = addrs[i]
	}
	return m
}

// each calls do for every server, and joins their errors.
func (tb *Testbed) each(do func(server.Server) error) error {
	var errs []error
	for _, r := range tb.servers {
		errs = append(errs, do(r.Server))
	}
	return errors.Join(errs...)
}

// SetCache chooses whether every server sends cacheable responses.
func (tb *Testbed) SetCache(on bool) error {
	return tb.each(func(s server.Server) error { return s.SetCache(on) })
}

// SetAltSvc makes every server's TCP responses carry the Alt-Svc field
// value from now on, "" none (server.Server.SetAltSvc).
func (tb *Testbed) SetAltSvc(value string) error {
	return tb.each(func(s server.Server) error { return s.SetAltSvc(value) })
}

// SetQlogDir makes the h3 server write a qlog of every connection that
// starts from now on into dir; "" stops it.
func (tb *Testbed) SetQlogDir(dir string) error {
	if len(tb.servers) == 0 {
		return errors.New("qlog: a live page's servers are the site's own: quicbench cannot record their qlog")
	}
	return tb.servers[tb.h3].SetQlogDir(dir)
}

// Counts is the requests every server served so far, per protocol.
func (tb *Testbed) Counts() (server.Counts, error) {
	var total server.Counts
	err := tb.each(func(s server.Server) error {
		c, err := s.Counts()
		total = total.Add(c)
		return err
	})
	return total, err
}

// TakeReplay is what every server's matching did since the last call
// (see server.Server.TakeReplay), added up.
func (tb *Testbed) TakeReplay() (server.Replay, error) {
	var sum server.Replay
	err := tb.each(func(s server.Server) error {
		r, err := s.TakeReplay()
		sum = sum.Add(r)
		return err
	})
	return sum, err
}

// Connections is the servers' records of the connections since the last
// CloseConnections. The first TCP record that names a congestion control
// completes the stack's, if the testbed could not read it itself.
func (tb *Testbed) Connections() ([]server.ConnRecord, error) {
	var recs []server.ConnRecord
	err := tb.each(func(s server.Server) error {
		r, err := s.Connections()
		recs = append(recs, r...)
		return err
	})
	for _, r := range recs {
		if tb.Stack.Congestion == "" && r.Transport == "tcp" && r.Congestion != "" {
			tb.Stack.Congestion = r.Congestion
		}
	}
	return recs, err
}

// CloseConnections makes every server close its client connections.
func (tb *Testbed) CloseConnections() error {
	return tb.each(func(s server.Server) error { return s.CloseConnections() })
}

// Close stops the servers, closes their sockets, removes the namespaces
// and devices, and waits for the emulator to stop. It is safe on a partly
// started Testbed.
func (tb *Testbed) Close() error {
	errs := []error{tb.each(func(s server.Server) error { return s.Close() })}
	for _, s := range tb.sockets {
		s.Close() // already closed by its server, or never served
	}
	if tb.uplink != nil {
		errs = append(errs, tb.uplink.Close())
	}
	if tb.Resolver != nil {
		errs = append(errs, tb.Resolver.Close())
	}
	errs = append(errs, tb.Network.Close())
	return errors.Join(errs...)
}
