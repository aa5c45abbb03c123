package caddy

import (
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/stacks"
)

// Kind is Debian's Caddy as a testbed's server stack: h1 and h2 (server
// caddy), h3 (QUIC server caddy), or all three from one process. It
// binds its TCP and UDP sockets itself in the servers namespace.
func Kind() server.Kind {
	return server.Kind{Name: "caddy", TCP: factor.ServerCaddy, QUIC: factor.QUICCaddy, Files: true, BindsTCP: true, BindsUDP: true,
		OwnProcess: true, Check: func() error { return CheckInstalled("") }, Start: start, Profiles: profiles}
}

// start runs Caddy for env's site on every origin's address, serving
// what the testbed asks of it.
func start(env server.Env) (server.Server, error) {
	s, err := Start(Config{Site: env.Site, Dir: env.Dir, Namespace: env.Namespace, Addrs: env.Addrs, Port: env.Port,
		TCP: env.ServeTCP, QUIC: env.ServeQUIC, CertFile: env.CertFile, KeyFile: env.KeyFile, Cache: env.Cache, CPU: env.CPU})
	if err != nil {
		return nil, err
	}
	return served{s}, nil
}

// served is a Server as a server.Server.
type served struct{ *Server }

// SetQlogDir has nothing to do: Debian's Caddy writes no qlog.
func (served) SetQlogDir(string) error { return nil }

// Counts is Server.Counts: the requests Caddy served, per protocol.
func (s served) Counts() (server.Counts, error) { return s.Server.Counts(), nil }

// Connections is Server.Connections: a record per client connection.
func (s served) Connections() ([]server.ConnRecord, error) { return s.Server.Connections(), nil }

// TakeReplay is Server.TakeReplay: what Caddy answered since the last take.
func (s served) TakeReplay() (server.Replay, error) { return s.Server.TakeReplay(), nil }

// QUICTransport is what Caddy's QUIC runs with (quicTransport).
func (s served) QUICTransport() stacks.QUICTransport {
	if !s.cfg.QUIC {
		return stacks.QUICTransport{}
	}
	return quicTransport
}

// quicTransport is Caddy 2.6's QUIC as Debian builds it, read from
// quic-go v0.29.0's code: the sent-packet handler makes a CUBIC sender in
// Reno mode (NewCubicSender(…, true // use Reno, …) in
// internal/ackhandler), whose initial window is 32 packets
// (initialCongestionWindow) of 1,252 bytes over IPv4
// (protocol.InitialPacketSizeIPv4, getMaxPacketSize), with its pacer and
// hybrid slow start (internal/congestion). Caddy sets neither.
var quicTransport = stacks.QUICTransport{Congestion: string(factor.CCNewReno), InitialWindowBytes: 32 * 1252, Pacing: true, HyStart: true}

// profiles describes Caddy's one QUIC stack.
func profiles() []stacks.QUICProfile {
	return []stacks.QUICProfile{{Name: factor.QUICCaddyNewReno,
		Server:    "Debian's Caddy 2.6.2 with quic-go 0.29 (lucas-clemente) and Go 1.19's TLS, in the servers namespace",
		Transport: quicTransport,
		Source:    "quic-go v0.29.0's code (Debian's caddy 2.6.2-5 is built with golang-github-lucas-clemente-quic-go 0.29.0): NewReno, 32 × 1,252 B initial window over IPv4, pacing, hybrid slow start; Caddy sets none of them",
		Limits: []string{"Caddy chooses no congestion controller: quic-go 0.29's NewReno, as quic-go's today",
			"Caddy's access log carries no TLS session state for HTTP/3 requests: an h3 connection's handshake is unknown (resumed and 0-RTT are not told)",
			"Caddy writes no qlog"}}}
}
