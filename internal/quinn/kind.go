package quinn

import (
	"fmt"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/stacks"
)

// Kind is quicbench-h3 as a testbed's server stack for h3 (QUIC server
// quinn): its own process, on copies of the UDP sockets the testbed binds.
func Kind() server.Kind {
	return server.Kind{Name: "quinn", QUIC: factor.QUICQuinn, Files: true, Check: func() error { _, err := FindBinary(); return err },
		Start: start, Profiles: profiles}
}

// profiles describes quicbench-h3's QUIC stacks, one per controller.
// quinn's windows are what quicbench-h3 sets (32 packets of quinn's
// 1,200-byte starting datagram; it reports them when it starts, and
// testbeds record that report); its pacing is built into quinn and cannot
// be switched off.
func profiles() []stacks.QUICProfile {
	var out []stacks.QUICProfile
	for _, cc := range factor.QUICQuinn.Controllers() {
		q, _ := factor.QUICOf(factor.QUICQuinn, cc)
		p := stacks.QUICProfile{Name: q, Server: "quinn 0.11 with h3 0.0.8 and rustls 0.23 (quicbench-h3, its own process)",
			Transport: stacks.QUICTransport{Congestion: string(cc), InitialWindowBytes: DefaultInitialWindow * DatagramSize, Pacing: true},
			Source:    "quicbench-h3 sets the controller and initial_window(32 × 1,200 B) in quinn 0.11 (servers/h3) and reports them at start; quinn always paces"}
		if cc == factor.CCBBR {
			p.Limits = []string{"quinn's BBR is a port of Google quiche's BBR (version 1) sender, the BBR of seed 003's Google QUIC; quinn marks it experimental"}
		}
		out = append(out, p)
	}
	return out
}

// start runs quicbench-h3 for env's site on env's UDP sockets.
func start(env server.Env) (server.Server, error) {
	s, err := Start(Config{Site: env.Site, Dir: env.Dir, UDP: env.UDP, CertFile: env.CertFile, KeyFile: env.KeyFile, CC: env.CC, Cache: env.Cache})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// QUICTransport is the transport the server reported when it started.
func (s *Server) QUICTransport() stacks.QUICTransport {
	return stacks.QUICTransport{Congestion: s.Ready.CC, InitialWindowBytes: s.Ready.InitialWindowBytes, Pacing: s.Ready.Pacing}
}

// Exited is closed when quicbench-h3 has exited.
func (s *Server) Exited() <-chan struct{} { return s.exited }

// ExitReason names quicbench-h3 and how it exited, with the last line it
// wrote to its standard error.
func (s *Server) ExitReason() string {
	if s.process == nil {
		return ""
	}
	how := s.process.Exited()
	if how == "" {
		return ""
	}
	return fmt.Sprintf("the HTTP/3 server %s exited: %s (%s)", BinaryName, how, s.lastError())
}

var _ server.Server = (*Server)(nil)
