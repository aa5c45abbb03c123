package origin

import (
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/stacks"
)

// Kind is the Go origin as a testbed's server stack: net/http for h1 and
// h2 (server go) and quic-go for h3 (QUIC server quic-go), in the
// quicbench process, on the sockets the testbed binds.
func Kind() server.Kind {
	return server.Kind{Name: "go", TCP: factor.ServerGo, QUIC: factor.QUICGo, Start: start,
		Profiles: func() []stacks.QUICProfile { return QUICProfiles("in the quicbench process") }}
}

// QUICProfiles describes quic-go's one QUIC stack, the Go origin running
// where says.
func QUICProfiles(where string) []stacks.QUICProfile {
	return []stacks.QUICProfile{{Name: factor.QUICGoNewReno, Server: "quic-go v0.65 http3 (" + where + ")", Transport: stacks.QUICGoTransport,
		Source: "quic-go's code: NewCubicSender(…, true /* use Reno */, …) in internal/ackhandler, initial window 32 × 1,280 B, pacing",
		Limits: []string{"quic-go has only NewReno: no CUBIC, no BBR"}}}
}

// start serves env's site on its sockets: TCP, UDP or both.
func start(env server.Env) (server.Server, error) {
	lns := make([]Listener, max(len(env.TCP), len(env.UDP)))
	for i := range lns {
		if i < len(env.TCP) {
			lns[i].TCP = env.TCP[i]
		}
		if i < len(env.UDP) {
			lns[i].UDP = env.UDP[i]
		}
	}
	srv, err := Start(env.Site, env.Cert, lns, env.Log)
	if err != nil {
		return nil, err
	}
	srv.SetCache(env.Cache)
	return served{srv}, nil
}

// served is a Server as a server.Server: its methods cannot fail.
type served struct{ *Server }

func (s served) SetCache(on bool) error                    { s.Server.SetCache(on); return nil }
func (s served) SetAltSvc(value string) error              { s.Server.SetAltSvc(value); return nil }
func (s served) SetQlogDir(dir string) error               { s.Server.SetQlogDir(dir); return nil }
func (s served) CloseConnections() error                   { s.Server.CloseConnections(); return nil }
func (s served) Counts() (server.Counts, error)            { return s.Server.Counts(), nil }
func (s served) Connections() ([]server.ConnRecord, error) { return s.Server.Connections(), nil }

func (s served) TakeReplay() (server.Replay, error) { return s.Server.TakeReplay(), nil }

// QUICTransport is quic-go's, as its code sets it (stacks.QUICGoTransport).
func (s served) QUICTransport() stacks.QUICTransport { return stacks.QUICGoTransport }

// Exited is nil: the Go origin runs in quicbench's own process.
func (served) Exited() <-chan struct{} { return nil }

// ExitReason is "": the Go origin does not exit alone.
func (served) ExitReason() string { return "" }
