// Package originproc runs the Go origin (package origin: net/http for h1
// and h2, quic-go for h3) in a process of its own, so that its CPU is
// counted apart from the emulator's and its allocations and garbage
// collection stay out of the runtime that moves the packets.
//
// The child is the running executable itself, started with the
// environment variable ChildEnv set: this package's init serves as the
// child before any main or test runs, in quicbench and in every test
// binary that links a testbed. The parent passes the sockets the testbed
// bound (TCP listeners first, then UDP sockets, from descriptor 3) and
// writes the site (encoding/gob) on the child's standard input; after
// that the two speak h3server's control protocol, one JSON line each way,
// as quicbench-h3 and quicbench-quiche do.
package originproc

import (
	"bufio"
	"bytes"
	"encoding/gob"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"sync"

	"github.com/quicbench/quicbench/internal/h3server"
	"github.com/quicbench/quicbench/internal/origin"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/stacks"
)

// ChildEnv is the environment variable that makes the executable the Go
// origin's child (value "1"); its first argument is then childCommand.
const ChildEnv = "QUICBENCH_GO_ORIGIN_CHILD"

// childCommand is the child's first argument: what ps shows it doing.
const childCommand = "go-origin"

// Kind is the Go origin as a testbed's server stack (server go, QUIC
// server quic-go) in a process of its own, on copies of the sockets the
// testbed binds.
func Kind() server.Kind {
	k := origin.Kind()
	k.OwnProcess, k.Start = true, start
	k.Profiles = func() []stacks.QUICProfile {
		return origin.QUICProfiles("in a process of its own: quicbench go-origin")
	}
	return k
}

// start runs the child on env's sockets and returns once it serves.
func start(env server.Env) (server.Server, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("go origin: the executable to run it from: %w", err)
	}
	files, err := socketFiles(env)
	if err != nil {
		for _, f := range files {
			f.Close()
		}
		return nil, err
	}
	cmd := exec.Command(exe, childArgs(env)...)
	cmd.Env = append(os.Environ(), ChildEnv+"=1")
	cmd.ExtraFiles = files
	// Its ready line reports quic-go's transport (stacks.QUICGoTransport),
	// which the server's QUICTransport then gives.
	return h3server.Run(h3server.Process{Name: "go origin", What: "the Go origin (quicbench go-origin)", Cmd: cmd, Files: files,
		CPU: env.CPU, Send: sendSite(env.Site), Stderr: &logLines{log: env.Log}, Cache: env.Cache, ServesTCP: len(env.TCP) > 0})
}

// childArgs is the child's command line after the executable.
func childArgs(env server.Env) []string {
	args := []string{childCommand, "--tcp", strconv.Itoa(len(env.TCP)), "--udp", strconv.Itoa(len(env.UDP)),
		"--cert", env.CertFile, "--key", env.KeyFile}
	if env.Stack.Pacing {
		args = append(args, "--pacing", "--stack", env.Stack.Name)
	}
	return args
}

// socketFiles are copies of env's TCP listeners, then of its UDP sockets.
func socketFiles(env server.Env) ([]*os.File, error) {
	var files []*os.File
	for _, ln := range env.TCP {
		fl, ok := ln.(interface{ File() (*os.File, error) })
		if !ok {
			return files, fmt.Errorf("go origin: a %T listener has no descriptor to pass", ln)
		}
		f, err := fl.File()
		if err != nil {
			return files, fmt.Errorf("go origin: listener %s: %w", ln.Addr(), err)
		}
		files = append(files, f)
	}
	for _, c := range env.UDP {
		f, err := c.File()
		if err != nil {
			return files, fmt.Errorf("go origin: socket %s: %w", c.LocalAddr(), err)
		}
		files = append(files, f)
	}
	return files, nil
}

// sendSite writes s for the child to read before it serves.
func sendSite(s *site.Site) func(io.Writer) error {
	return func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<16)
		if err := gob.NewEncoder(bw).Encode(s); err != nil {
			return fmt.Errorf("send the site: %w", err)
		}
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("send the site: %w", err)
		}
		return nil
	}
}

// logLines passes each line the child writes to its standard error (its
// warnings and errors) to log.
type logLines struct {
	log     *slog.Logger
	mu      sync.Mutex
	partial []byte
}

// Write logs each whole line of p, keeping a partial line for the next
// write.
func (l *logLines) Write(p []byte) (int, error) {
	if l.log == nil {
		return len(p), nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.log.Warn("go origin: " + string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}
	if len(l.partial) > 4096 { // no line break in sight: say what there is
		l.log.Warn("go origin: " + string(l.partial))
		l.partial = nil
	}
	return len(p), nil
}
