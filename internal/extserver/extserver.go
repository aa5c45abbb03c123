// Package extserver runs a server program that is not quicbench's own
// (nginx, Caddy) in a testbed's servers namespace, in one shape: the
// program is checked as installed and trusted before it runs, started in
// its CPU accounting group, waited for until it says it is ready and
// every address accepts TCP connections (or until it stops, with its own
// last error), stopped with SIGTERM and then SIGKILL to its group, and
// its access log read line by line as it grows. A third external server
// is its configuration, its readiness and its log reader.
package extserver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/quicbench/quicbench/internal/cpuuse"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/proc"
	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/trust"
)

// DefaultStartTimeout bounds the wait for a program to serve where its
// configuration sets no bound.
const DefaultStartTimeout = 10 * time.Second

// stopGrace is how long a program has to stop after SIGTERM before its
// whole process group is killed.
const stopGrace = 3 * time.Second

// CheckInstalled returns the trusted path of the program at path, or an
// error that says how to install it (install, such as "'make nginx'
// (apt-get install nginx, its service not started)") or why it is not run.
func CheckInstalled(name, path, install string) (string, error) {
	if info, err := os.Stat(path); err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s not found at %s: install it with %s", name, path, install)
	}
	trusted, err := trust.Executable(path)
	if err != nil {
		return "", fmt.Errorf("%s: not run: %w", name, err)
	}
	return trusted, nil
}

// Config is how a program runs.
type Config struct {
	// Name names the program in errors ("nginx").
	Name string
	// Namespace is where it runs (the servers namespace).
	Namespace *netns.Namespace
	// CPU is the CPU accounting group it starts in; nil: none.
	CPU *cpuuse.Group
	// StartTimeout bounds the wait for it to serve. Zero:
	// DefaultStartTimeout.
	StartTimeout time.Duration
	// LastError is its last error as its own logs tell it, for the errors
	// of a start that failed and of an exit; nil: the last line of its
	// standard error.
	LastError func() string
}

// Process is a running program. Stop stops it.
type Process struct {
	cfg     Config
	process *proc.Process
	// Stderr is what it writes to its standard error.
	Stderr proc.Output
}

// Start runs cmd (the trusted program with its arguments and
// environment) in cfg's namespace and CPU group, its standard error kept
// and its standard output discarded.
func Start(cfg Config, cmd *exec.Cmd) (_ *Process, err error) {
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = DefaultStartTimeout
	}
	p := &Process{cfg: cfg}
	if err := cfg.Namespace.WrapCommand(cmd); err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = io.Discard, &p.Stderr
	cfg.CPU.Prepare(cmd)
	if p.process, err = proc.Start(cmd); err != nil {
		return nil, fmt.Errorf("%s: start %s: %w", cfg.Name, cmd.Path, err)
	}
	if err := cfg.CPU.Started(p.process.Pid()); err != nil {
		p.process.Kill()
		p.process.Wait()
		return nil, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	return p, nil
}

// Pid is the program's process ID.
func (p *Process) Pid() int { return p.process.Pid() }

// Done is closed once the program has exited.
func (p *Process) Done() <-chan struct{} { return p.process.Done() }

// LastError is the program's last error (Config.LastError).
func (p *Process) LastError() string {
	if p.cfg.LastError != nil {
		return p.cfg.LastError()
	}
	return p.Stderr.LastLine()
}

// ExitReason names the program and how it exited, with its last error;
// "" while it runs.
func (p *Process) ExitReason() string {
	how := p.process.Exited()
	if how == "" {
		return ""
	}
	return fmt.Sprintf("the server %s exited: %s (%s)", p.cfg.Name, how, p.LastError())
}

// WaitServing waits until ready says the program is ready, then until
// each of addrs accepts a TCP connection, within the start timeout; it
// returns the program's last error if it stopped meanwhile or did not
// serve in time, and then kills it.
func (p *Process) WaitServing(ready func() bool, addrs []netip.AddrPort) (err error) {
	defer func() {
		if err != nil {
			p.process.Kill()
			p.process.Wait()
		}
	}()
	deadline := time.Now().Add(p.cfg.StartTimeout)
	for !ready() {
		if err := p.pause(deadline, "start"); err != nil {
			return err
		}
	}
	for _, addr := range addrs {
		for !p.accepts(addr) {
			if err := p.pause(deadline, "listen on "+addr.String()); err != nil {
				return err
			}
		}
	}
	return nil
}

// pause waits a little before the next look, and says why waiting is
// over: the program stopped, or the deadline for what (its start, or
// listening on an address) passed.
func (p *Process) pause(deadline time.Time, what string) error {
	select {
	case <-p.process.Done():
		return fmt.Errorf("%s stopped at start: %s", p.cfg.Name, p.LastError())
	case <-time.After(20 * time.Millisecond):
	}
	if time.Now().After(deadline) {
		return fmt.Errorf("%s did not %s within %v: %s", p.cfg.Name, what, p.cfg.StartTimeout, p.LastError())
	}
	return nil
}

// accepts reports whether addr accepts a TCP connection in the namespace.
func (p *Process) accepts(addr netip.AddrPort) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	c, err := p.cfg.Namespace.DialContext(ctx, "tcp4", addr.String())
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// Stop ends the program: SIGTERM, so that it stops its workers itself,
// then SIGKILL to its whole group if it takes over 3 s.
func (p *Process) Stop() error {
	if p == nil || p.process == nil {
		return nil
	}
	syscall.Kill(p.process.Pid(), syscall.SIGTERM)
	select {
	case <-p.process.Done():
		return nil
	case <-time.After(stopGrace):
		return p.process.Kill()
	}
}

// LogTail reads a log file in a directory as the program appends to it:
// each call hands over the complete lines written since the last. The zero
// value with Dir and Name set is ready; not safe for concurrent use.
type LogTail struct {
	Dir, Name string
	readUpTo  int64 // bytes handed over so far
}

// SkipWritten passes over what the log holds now (an earlier process's
// lines, where a program restarts in the same directory): Read hands over
// only lines written after it. A log not there yet holds nothing.
func (t *LogTail) SkipWritten() {
	f, err := safefs.OpenIn(t.Dir, t.Name)
	if err != nil {
		return
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil {
		t.readUpTo = info.Size()
	}
}

// Read calls line for each complete line written since the last Read, in
// order, with its line break; an incomplete last line waits for the next
// Read. A log not there yet has no lines.
func (t *LogTail) Read(line func(string)) {
	f, err := safefs.OpenIn(t.Dir, t.Name)
	if err != nil {
		return
	}
	defer f.Close()
	if _, err := f.Seek(t.readUpTo, io.SeekStart); err != nil {
		return
	}
	r := bufio.NewReader(f)
	for {
		text, err := r.ReadString('\n')
		if err != nil {
			return
		}
		t.readUpTo += int64(len(text))
		line(text)
	}
}
