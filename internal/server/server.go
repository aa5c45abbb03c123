// Package server is what every server stack of a testbed stands behind:
// the Server interface (cache policy, closing connections, request counts,
// replay statistics, connection records, qlog, stop), the Kind that
// declares which factor levels a stack implements and starts it, the Env
// it starts in, and the records servers give (request counts per
// protocol, connection records). The Go origin (in a process of its own:
// package originproc), nginx and quicbench-h3 each implement it in a
// package of their own; package testbed keeps the
// list of kinds, one line each.
package server

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/netip"

	"github.com/quicbench/quicbench/internal/cpuuse"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/stacks"
)

// Server is a running server stack: it serves its protocols (its Kind's)
// on every origin's address in the servers namespace.
type Server interface {
	// SetCache chooses from now on whether responses are cacheable
	// (Cache-Control max-age, ETag, Last-Modified, 304 answers) or say
	// no-store.
	SetCache(on bool) error
	// SetAltSvc makes every TCP (h1, h2) response carry the Alt-Svc
	// field value from now on, "" none: the servers offer h3 to a browser
	// left to discover it (factor.DiscoveryAltSvc). A server without TCP
	// has nothing to offer it on.
	SetAltSvc(value string) error
	// SetQlogDir makes a QUIC server write a qlog of every connection
	// that starts from now on into dir; "" stops it. A server without
	// QUIC has nothing to write.
	SetQlogDir(dir string) error
	// CloseConnections closes every client connection and forgets their
	// records: a repeat visit must reconnect.
	CloseConnections() error
	// Counts is the requests served since the start, per protocol.
	Counts() (Counts, error)
	// TakeReplay is what matching requests against the site did since
	// the last call: exact and fuzzy matches, unmatched requests (404s)
	// with some of them listed, and the body bytes sent.
	TakeReplay() (Replay, error)
	// Connections is a record per client connection since the last
	// CloseConnections, its transport statistics read now.
	Connections() ([]ConnRecord, error)
	// QUICTransport is what its QUIC runs with (zero without QUIC).
	QUICTransport() stacks.QUICTransport
	// Exited is closed when the server's process has exited; nil for a
	// server in quicbench's own process, which does not exit alone.
	Exited() <-chan struct{}
	// ExitReason says that it exited and how, naming it, such as "the
	// HTTP/3 server quicbench-h3 exited: signal: killed"; "" while it
	// runs.
	ExitReason() string
	// Close stops it.
	Close() error
}

// AltSvcH3 is the Alt-Svc field value that offers h3 on port of the same
// host for maxAge seconds, such as `h3=":443"; ma=86400`.
func AltSvcH3(port, maxAge int) string {
	return fmt.Sprintf(`h3=":%d"; ma=%d`, port, maxAge)
}

// Kind is a server stack quicbench can run: the factor levels it
// implements and how it starts. A stack serves h1 and h2 (TCP), h3
// (QUIC), or all three.
type Kind struct {
	// Name names it in messages; its files go to the testbed directory's
	// subdirectory of that name.
	Name string
	// TCP is the level of the server factor it implements, "" if it
	// serves no TCP; QUIC the QUIC server it implements, "" if none.
	TCP  factor.Server
	QUIC factor.QUICServer
	// Files: it writes files (its site, configuration, logs) into a
	// directory of its own, which the testbed makes (Env.Dir).
	Files bool
	// OwnProcess: it runs in processes of its own, started in Env.CPU,
	// rather than in quicbench's.
	OwnProcess bool
	// BindsTCP: it listens on TCP itself, so the testbed binds no TCP
	// socket for it, and the TCP stack's socket options (pacing) are not
	// set on its sockets; the route's settings still apply.
	BindsTCP bool
	// BindsUDP: it binds its QUIC sockets itself, so the testbed binds
	// no UDP socket for it.
	BindsUDP bool
	// Profiles describe the QUIC stacks it runs, one per controller, for
	// quicbench stacks and the checks of what it reports; nil without
	// QUIC.
	Profiles func() []stacks.QUICProfile
	// Check says what is missing on this machine to run it (with how to
	// get it); nil: nothing.
	Check func() error
	// Start starts it in env and returns once it serves.
	Start func(Env) (Server, error)
}

// Env is what a server starts with.
type Env struct {
	Site *site.Site
	// Cert is the run's leaf certificate for every origin host, and
	// CertFile and KeyFile the same as PEM files.
	Cert              tls.Certificate
	CertFile, KeyFile string
	// Namespace is the servers namespace, Addrs each origin host's
	// address in it, Port the port every origin listens on.
	Namespace *netns.Namespace
	Addrs     map[string]netip.Addr
	Port      int
	// TCP are bound TCP listeners, one per origin host in Site.Hosts()
	// order, for a stack that serves TCP and does not bind it itself; UDP
	// bound sockets likewise for a stack that serves QUIC. The testbed
	// closes both after the server.
	TCP []net.Listener
	UDP []*net.UDPConn
	// CC is the QUIC congestion control, for a stack that serves QUIC.
	CC factor.CC
	// Dir is, for a stack that writes Files, a directory of its own in
	// the run directory, made for it; nothing below it is written
	// through a link.
	Dir string
	// Cache starts with cacheable responses.
	Cache bool
	Log   *slog.Logger
	// CPU is the CPU accounting group a stack with processes of its own
	// starts them in; nil: none.
	CPU *cpuuse.Group
	// Stack is the servers' TCP stack profile (zero: the kernel's
	// defaults): a stack in a process of its own that serves the TCP
	// listeners sets the per-connection socket options itself
	// (stacks.PerConnection).
	Stack stacks.Profile
	// ServeTCP and ServeQUIC say which of its protocols the testbed asks
	// of a stack that serves both (h1 and h2, h3): another stack serves
	// the rest, on the same addresses and port.
	ServeTCP, ServeQUIC bool
}
