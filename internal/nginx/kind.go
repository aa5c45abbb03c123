package nginx

import (
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/stacks"
)

// Kind is Debian's nginx as a testbed's server stack for h1 and h2 (server
// nginx): it runs in the servers namespace and listens on TCP itself.
func Kind() server.Kind {
	return server.Kind{Name: "nginx", TCP: factor.ServerNginx, Files: true, BindsTCP: true, OwnProcess: true, Check: func() error { return CheckInstalled("") }, Start: start}
}

// start runs nginx for env's site on every origin's address.
func start(env server.Env) (server.Server, error) {
	s, err := Start(Config{Site: env.Site, Dir: env.Dir, Namespace: env.Namespace, Addrs: env.Addrs, Port: env.Port,
		CertFile: env.CertFile, KeyFile: env.KeyFile, Cache: env.Cache, CPU: env.CPU})
	if err != nil {
		return nil, err
	}
	return served{s}, nil
}

// served is a Server as a server.Server.
type served struct{ *Server }

// SetQlogDir has nothing to do: nginx serves no QUIC here (Debian's has
// none).
func (served) SetQlogDir(string) error { return nil }

// Counts is Server.Counts: the requests nginx served, per protocol.
func (s served) Counts() (server.Counts, error) { return s.Server.Counts(), nil }

// Connections is Server.Connections: a record per client connection.
func (s served) Connections() ([]server.ConnRecord, error) { return s.Server.Connections(), nil }

// TakeReplay is Server.TakeReplay: what nginx answered since the last take.
func (s served) TakeReplay() (server.Replay, error) { return s.Server.TakeReplay(), nil }

// QUICTransport is zero: nginx serves no QUIC here.
func (served) QUICTransport() stacks.QUICTransport { return stacks.QUICTransport{} }

// Exited is closed when the nginx master process has exited.
func (s served) Exited() <-chan struct{} { return s.process.Done() }

// ExitReason names nginx and how it exited, with its last error line.
func (s served) ExitReason() string { return s.process.ExitReason() }
