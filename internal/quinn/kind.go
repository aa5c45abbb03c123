package quinn

import (
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/stacks"
)

// Kind is quicbench-h3 as a testbed's server stack for h3 (QUIC server
// quinn): its own process, on copies of the UDP sockets the testbed binds.
func Kind() server.Kind {
	return server.Kind{Name: "quinn", QUIC: factor.QUICQuinn, Files: true, Check: func() error { _, err := FindBinary(); return err }, Start: start}
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

var _ server.Server = (*Server)(nil)
