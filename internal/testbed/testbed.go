// Package testbed assembles one network cell of an experiment: the client and
// servers namespaces, the emulator between them, the per-run certificates,
// and the origin servers listening on one IP per origin host.
package testbed

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/nginx"
	"github.com/quicbench/quicbench/internal/origin"
	"github.com/quicbench/quicbench/internal/quinn"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/stacks"
)

// Config describes a cell.
type Config struct {
	// Stem names the namespaces ("<stem>-client", "<stem>-servers"); make it
	// with netns.RunName so that stale ones can be found.
	Stem string
	// Link is the emulated link.
	Link emulator.Config
	// Site is what the origins serve.
	Site *site.Site
	// RunDir receives the certificates (and nginx/ its files); nothing
	// below it is written through a link.
	RunDir string
	// Log receives server errors. Nil: discard.
	Log *slog.Logger
	// Stack is the servers' TCP stack profile; the zero value leaves the
	// namespace's kernel defaults (on this kernel: BBR).
	Stack stacks.Profile
	// Server is the server stack for h1 and h2: factor.ServerGo (the zero
	// value) or factor.ServerNginx.
	Server factor.Server
	// QUIC is the stack that serves h3: factor.QUICGoNewReno (the zero
	// value: quic-go in this process) or a quinn stack (quicbench-h3 with
	// that congestion controller).
	QUIC factor.QUIC
	// Cache makes the site cacheable from the start (see SetCache).
	Cache bool
}

// Testbed is a running cell. Close removes everything it created.
type Testbed struct {
	*Network
	Certs *origin.Certs
	// Origin serves h1 and h2 unless Nginx does, and h3 unless Quinn does.
	Origin *origin.Server
	// Nginx serves h1 and h2 when the server stack is nginx; else nil.
	Nginx *nginx.Server
	// Quinn serves h3 when the QUIC stack is quinn's; else nil.
	Quinn *quinn.Server
	Site  *site.Site
	// Addrs maps each origin host name to its IP in the servers namespace.
	Addrs map[string]netip.Addr
	// Stack is what the servers' TCP stack was, read back after applying.
	Stack stacks.Applied
	// QUICTransport is what the h3 server runs with: as quicbench-h3
	// reported it, or quic-go's as its code sets it.
	QUICTransport stacks.QUICTransport
	// listeners are closed by Close: a socket left open would keep the
	// deleted namespace alive for as long as the process runs.
	listeners []origin.Listener
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
	if cfg.Server == "" {
		cfg.Server = factor.ServerGo
	}
	if !factor.Servers().Has(cfg.Server) {
		return nil, fmt.Errorf("testbed: server %q is unknown: use %s", cfg.Server, factor.Servers().Names())
	}
	if cfg.Server == factor.ServerNginx {
		if err := nginx.CheckInstalled(""); err != nil {
			return nil, err
		}
	}
	if cfg.QUIC == "" {
		cfg.QUIC = factor.QUICGoNewReno
	}
	if !factor.QUICs().Has(cfg.QUIC) {
		return nil, fmt.Errorf("testbed: QUIC stack %q is unknown: use %s", cfg.QUIC, factor.QUICs().Names())
	}
	quinnPath := ""
	if cfg.QUIC.Server() == factor.QUICQuinn {
		if quinnPath, err = quinn.FindBinary(); err != nil {
			return nil, err
		}
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
	if tb.Certs, err = origin.NewCerts(cfg.RunDir, hosts, time.Now()); err != nil {
		return nil, err
	}
	if cfg.Stack.Name != "" {
		if tb.Stack, err = stacks.Apply(tb.Topo.Servers, netns.ClientSubnet, cfg.Stack); err != nil {
			return nil, err
		}
	}
	var lns []origin.Listener
	closeAll := func() {
		for _, l := range lns {
			l.Close()
		}
	}
	defer func() { tb.listeners = lns }()
	for _, host := range hosts {
		addr := netip.AddrPortFrom(tb.Addrs[host], OriginPort).String()
		var tcp net.Listener
		if cfg.Server == factor.ServerNginx {
			// nginx listens on TCP itself.
		} else if cfg.Stack.Name != "" {
			tcp, err = stacks.Listen(tb.Topo.Servers, addr, cfg.Stack, &tb.Stack)
		} else {
			tcp, err = tb.Topo.Servers.Listen("tcp4", addr)
		}
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("origin %s: listen tcp %s: %w%s", host, addr, err, portHint(err))
		}
		udp, err := tb.Topo.Servers.ListenPacket("udp4", addr)
		if err != nil {
			if tcp != nil {
				tcp.Close()
			}
			closeAll()
			return nil, fmt.Errorf("origin %s: listen udp %s: %w%s", host, addr, err, portHint(err))
		}
		lns = append(lns, origin.Listener{TCP: tcp, UDP: udp})
	}
	if err := tb.startServers(cfg, lns, quinnPath); err != nil {
		closeAll()
		return nil, err
	}
	return tb, nil
}

// startServers starts the Go origin on lns, and nginx and quinn where cfg
// asks for them (the Go origin then leaves them TCP or UDP).
func (tb *Testbed) startServers(cfg Config, lns []origin.Listener, quinnPath string) (err error) {
	originLns := slices.Clone(lns)
	var udp []*net.UDPConn
	if quinnPath != "" {
		for i := range originLns {
			udp = append(udp, originLns[i].UDP.(*net.UDPConn))
			originLns[i].UDP = nil
		}
	}
	if tb.Origin, err = origin.Start(cfg.Site, tb.Certs.Leaf, originLns, cfg.Log); err != nil {
		return err
	}
	tb.Origin.SetCache(cfg.Cache)
	tb.QUICTransport = stacks.QUICGoTransport
	if quinnPath != "" {
		tb.Quinn, err = quinn.Start(quinn.Config{
			Path: quinnPath, Site: cfg.Site, Dir: filepath.Join(cfg.RunDir, "quinn"), UDP: udp,
			CertFile: tb.Certs.LeafFile, KeyFile: tb.Certs.LeafKeyFile, CC: cfg.QUIC.CC(), Cache: cfg.Cache,
		})
		if err != nil {
			return err
		}
		r := tb.Quinn.Ready
		tb.QUICTransport = stacks.QUICTransport{Congestion: r.CC, InitialWindowBytes: r.InitialWindowBytes, Pacing: r.Pacing}
	}
	if cfg.Server == factor.ServerNginx {
		tb.Nginx, err = nginx.Start(nginx.Config{
			Site: cfg.Site, Dir: filepath.Join(cfg.RunDir, "nginx"), Namespace: tb.Topo.Servers, Addrs: tb.Addrs,
			Port: OriginPort, CertFile: tb.Certs.LeafFile, KeyFile: tb.Certs.LeafKeyFile, Cache: cfg.Cache,
		})
		if err != nil {
			return err
		}
		// nginx cannot set SO_MAX_PACING_RATE; its sockets get the
		// route's congestion control (stacks.Apply), read back per
		// connection.
		tb.Stack.Pacing = false
	}
	return nil
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

// SetCache chooses whether every server sends cacheable responses (see
// origin.Server.SetCache).
func (tb *Testbed) SetCache(on bool) error {
	tb.Origin.SetCache(on)
	var errs []error
	if tb.Nginx != nil {
		errs = append(errs, tb.Nginx.SetCache(on))
	}
	if tb.Quinn != nil {
		errs = append(errs, tb.Quinn.SetCache(on))
	}
	return errors.Join(errs...)
}

// SetQlogDir makes the h3 server write a qlog of every connection that
// starts from now on into dir; "" stops it (see origin.Server.SetQlogDir).
func (tb *Testbed) SetQlogDir(dir string) error {
	if tb.Quinn != nil {
		return tb.Quinn.SetQlogDir(dir)
	}
	tb.Origin.SetQlogDir(dir)
	return nil
}

// Counts is the requests every server served so far, per protocol.
func (tb *Testbed) Counts() (origin.Counts, error) {
	c := tb.Origin.Counts()
	if tb.Nginx != nil {
		n := tb.Nginx.Counts()
		c.H1, c.H2 = c.H1+n.H1, c.H2+n.H2
	}
	if tb.Quinn != nil {
		q, err := tb.Quinn.Counts()
		if err != nil {
			return c, err
		}
		c.H3 += q.H3
	}
	return c, nil
}

// TakeUnmatched is every server's count of requests that matched nothing
// since the last call, with some of them (see origin.Server.TakeUnmatched).
func (tb *Testbed) TakeUnmatched() (int, []string, error) {
	n, examples := tb.Origin.TakeUnmatched()
	if tb.Quinn != nil {
		qn, qex, err := tb.Quinn.TakeUnmatched()
		if err != nil {
			return n, examples, err
		}
		n += qn
		examples = append(examples, qex...)
	}
	return n, examples, nil
}

// Connections is the servers' records of the connections since the last
// CloseConnections.
func (tb *Testbed) Connections() ([]origin.ConnRecord, error) {
	recs := tb.Origin.Connections()
	if tb.Nginx != nil {
		recs = append(recs, tb.Nginx.Connections()...)
	}
	if tb.Quinn != nil {
		q, err := tb.Quinn.Connections()
		if err != nil {
			return recs, err
		}
		recs = append(recs, q...)
	}
	return recs, nil
}

// CloseConnections makes every server close its client connections.
func (tb *Testbed) CloseConnections() error {
	tb.Origin.CloseConnections()
	var errs []error
	if tb.Nginx != nil {
		errs = append(errs, tb.Nginx.CloseConnections())
	}
	if tb.Quinn != nil {
		errs = append(errs, tb.Quinn.CloseConnections())
	}
	return errors.Join(errs...)
}

// HostResolverRules is the value of Chromium's --host-resolver-rules that maps
// every origin host to its IP, such as "MAP a.test 198.19.0.10,MAP b.test …".
func (tb *Testbed) HostResolverRules() string {
	var rules []string
	for _, host := range tb.Site.Hosts() {
		rules = append(rules, fmt.Sprintf("MAP %s %s", host, tb.Addrs[host]))
	}
	return strings.Join(rules, ",")
}

// Close stops the origin, removes the namespaces and devices, and waits for
// the emulator to stop. It is safe on a partly started Testbed.
func (tb *Testbed) Close() error {
	var errs []error
	if tb.Nginx != nil {
		errs = append(errs, tb.Nginx.Close())
	}
	if tb.Quinn != nil {
		errs = append(errs, tb.Quinn.Close())
	}
	if tb.Origin != nil {
		errs = append(errs, tb.Origin.Close())
	}
	for _, l := range tb.listeners {
		l.Close() // already closed by the server, or never served
	}
	errs = append(errs, tb.Network.Close())
	return errors.Join(errs...)
}
