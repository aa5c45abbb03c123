package originproc

import (
	"bufio"
	"crypto/tls"
	"encoding/gob"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"

	"github.com/quicbench/quicbench/internal/h3server"
	"github.com/quicbench/quicbench/internal/origin"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/stacks"
)

// init serves as the Go origin's child, and exits, when the parent
// started this executable as one (ChildEnv and childCommand); otherwise
// it does nothing. It runs before main and before a test binary's tests.
func init() {
	if os.Getenv(ChildEnv) != "1" || len(os.Args) < 2 || os.Args[1] != childCommand {
		return
	}
	os.Exit(serveChild(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
}

// childConfig is the child's command line.
type childConfig struct {
	tcp, udp          int // listeners and UDP sockets passed, from descriptor 3
	certFile, keyFile string
	pacing            bool   // set SO_MAX_PACING_RATE on each TCP connection
	stack             string // the TCP stack's name, for messages
}

// parseChild reads the child's command line.
func parseChild(args []string) (childConfig, error) {
	var c childConfig
	fs := flag.NewFlagSet(childCommand, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.IntVar(&c.tcp, "tcp", 0, "TCP listeners passed")
	fs.IntVar(&c.udp, "udp", 0, "UDP sockets passed")
	fs.StringVar(&c.certFile, "cert", "", "PEM certificate")
	fs.StringVar(&c.keyFile, "key", "", "PEM key")
	fs.BoolVar(&c.pacing, "pacing", false, "pace each TCP connection")
	fs.StringVar(&c.stack, "stack", "", "TCP stack")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.tcp < 0 || c.udp < 0 || c.tcp+c.udp == 0 || fs.NArg() > 0 {
		return c, errors.New("give --tcp N and --udp M, not both zero, and nothing else")
	}
	return c, nil
}

// serveChild serves the site it reads from stdin on the passed sockets,
// answers the control protocol's commands from stdin on stdout until
// stdin closes, and returns the exit status.
func serveChild(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	in := bufio.NewReader(stdin)
	enc := json.NewEncoder(stdout)
	srv, lns, err := startChild(args, in, log)
	if err != nil {
		fmt.Fprintln(stderr, "go origin:", err)
		enc.Encode(map[string]string{"error": err.Error()})
		return 1
	}
	defer func() {
		srv.Close()
		for _, ln := range lns {
			ln.Close()
		}
	}()
	t := stacks.QUICGoTransport
	ready := struct {
		IsReady bool `json:"ready"`
		h3server.Ready
	}{true, h3server.Ready{CC: t.Congestion, InitialWindowBytes: t.InitialWindowBytes, Pacing: t.Pacing, HyStart: t.HyStart}}
	if err := enc.Encode(ready); err != nil {
		return 1
	}
	if err := control(srv, in, enc); err != nil {
		fmt.Fprintln(stderr, "go origin: control:", err)
		return 1
	}
	return 0
}

// startChild reads the site from in and serves it on the passed sockets.
func startChild(args []string, in io.Reader, log *slog.Logger) (*origin.Server, []origin.Listener, error) {
	cfg, err := parseChild(args)
	if err != nil {
		return nil, nil, err
	}
	var s site.Site
	// in is a bufio.Reader, an io.ByteReader: the decoder reads no further
	// than the site, and the commands that follow stay in it.
	if err := gob.NewDecoder(in).Decode(&s); err != nil {
		return nil, nil, fmt.Errorf("read the site: %w", err)
	}
	cert, err := tls.LoadX509KeyPair(cfg.certFile, cfg.keyFile)
	if err != nil {
		return nil, nil, fmt.Errorf("certificate: %w", err)
	}
	lns, err := passedListeners(cfg)
	if err != nil {
		return nil, nil, err
	}
	srv, err := origin.Start(&s, cert, lns, log)
	if err != nil {
		for _, ln := range lns {
			ln.Close()
		}
		return nil, nil, err
	}
	return srv, lns, nil
}

// passedListeners pairs the passed TCP listeners and UDP sockets, one
// origin address each; a stack serves either or both.
func passedListeners(cfg childConfig) ([]origin.Listener, error) {
	lns := make([]origin.Listener, max(cfg.tcp, cfg.udp))
	fail := func(err error) ([]origin.Listener, error) {
		for _, ln := range lns {
			ln.Close()
		}
		return nil, err
	}
	for i := range cfg.tcp {
		ln, err := passedListener(3 + i)
		if err != nil {
			return fail(err)
		}
		if cfg.pacing {
			ln = stacks.PerConnection(ln, stacks.Profile{Name: cfg.stack, Pacing: true}, nil)
		}
		lns[i].TCP = ln
	}
	for i := range cfg.udp {
		c, err := passedPacketConn(3 + cfg.tcp + i)
		if err != nil {
			return fail(err)
		}
		lns[i].UDP = c
	}
	return lns, nil
}

// passedListener is the TCP listener at descriptor fd.
func passedListener(fd int) (net.Listener, error) {
	f := os.NewFile(uintptr(fd), fmt.Sprintf("listener %d", fd))
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("descriptor %d: not a listening socket: %w", fd, err)
	}
	return ln, nil
}

// passedPacketConn is the UDP socket at descriptor fd.
func passedPacketConn(fd int) (*net.UDPConn, error) {
	f := os.NewFile(uintptr(fd), fmt.Sprintf("socket %d", fd))
	defer f.Close()
	pc, err := net.FilePacketConn(f)
	if err != nil {
		return nil, fmt.Errorf("descriptor %d: not a UDP socket: %w", fd, err)
	}
	c, ok := pc.(*net.UDPConn)
	if !ok {
		pc.Close()
		return nil, fmt.Errorf("descriptor %d: not a UDP socket (%T)", fd, pc)
	}
	return c, nil
}

// control answers each command line from in, until in ends.
func control(srv *origin.Server, in *bufio.Reader, enc *json.Encoder) error {
	for {
		line, err := in.ReadString('\n')
		if line != "" {
			if err := enc.Encode(answer(srv, strings.TrimRight(line, "\r\n"))); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// okReply is the reply of a command that has nothing to say.
type okReply struct {
	OK bool `json:"ok"`
}

// answer carries out one command of the control protocol
// (servers/common/testdata/control.txt) and is its reply.
func answer(srv *origin.Server, command string) any {
	ok := okReply{true}
	switch {
	case command == "cache on" || command == "cache off":
		srv.SetCache(command == "cache on")
		return ok
	case command == "close":
		srv.CloseConnections()
		return ok
	case command == "conns":
		recs := srv.Connections()
		out := make([]h3server.Record, len(recs))
		for i, r := range recs {
			out[i] = h3server.RecordOf(r)
		}
		return out
	case command == "counts":
		return srv.Counts()
	case command == "replay":
		r := srv.TakeReplay()
		if r.UnmatchedRequests == nil {
			r.UnmatchedRequests = []string{}
		}
		return r
	case command == "altsvc off":
		srv.SetAltSvc("")
		return ok
	case strings.HasPrefix(command, "altsvc "):
		srv.SetAltSvc(strings.TrimPrefix(command, "altsvc "))
		return ok
	case command == "qlog off":
		srv.SetQlogDir("")
		return ok
	case strings.HasPrefix(command, "qlog /"):
		srv.SetQlogDir(strings.TrimPrefix(command, "qlog "))
		return ok
	}
	return map[string]string{"error": "unknown command: use cache on|off, altsvc VALUE|off, close, conns, counts, qlog DIR|off or replay"}
}
