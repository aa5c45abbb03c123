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

// SetCache lets the server answer from its cache (on) or not; it cannot fail.
func (s served) SetCache(on bool) error { s.Server.SetCache(on); return nil }

// SetAltSvc has the server offer h3 in an Alt-Svc field of value ("" for
// none); it cannot fail.
func (s served) SetAltSvc(value string) error { s.Server.SetAltSvc(value); return nil }

// SetQlogDir has the server write a qlog per QUIC connection into dir
// ("" for none); it cannot fail.
func (s served) SetQlogDir(dir string) error { s.Server.SetQlogDir(dir); return nil }

// CloseConnections closes the server's connections; it cannot fail.
func (s served) CloseConnections() error { s.Server.CloseConnections(); return nil }

// Counts is what the server has served so far; it cannot fail.
func (s served) Counts() (server.Counts, error) { return s.Server.Counts(), nil }

// Connections is the server's record of its connections; it cannot fail.
func (s served) Connections() ([]server.ConnRecord, error) { return s.Server.Connections(), nil }

// TakeReplay is the server's replay record since the last take; it
// cannot fail.
func (s served) TakeReplay() (server.Replay, error) { return s.Server.TakeReplay(), nil }

// QUICTransport is quic-go's, as its code sets it (stacks.QUICGoTransport).
func (s served) QUICTransport() stacks.QUICTransport { return stacks.QUICGoTransport }

// Exited is nil: the Go origin runs in quicbench's own process.
func (served) Exited() <-chan struct{} { return nil }

// ExitReason is "": the Go origin does not exit alone.
func (served) ExitReason() string { return "" }
