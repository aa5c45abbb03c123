// Package proc starts child processes that cannot outlive quicbench: each
// gets SIGKILL when quicbench dies (PR_SET_PDEATHSIG), in its own process
// group so its children can be killed with it.
//
// Linux sends the parent-death signal when the *thread* that forked the
// child exits, not the process, and Go ends threads whose goroutine exits
// while locked (netns does that on purpose). So Start forks from a goroutine
// locked to its thread until the child exits (see go.dev/issue/27505).
package proc

import (
	"bytes"
	"errors"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
)

// Process is a started child.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Start starts cmd as described in the package comment.
func Start(cmd *exec.Cmd) (*Process, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	cmd.SysProcAttr.Setpgid = true
	p := &Process{cmd: cmd, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.err = cmd.Wait()
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return p, nil
}

// Wait waits for the child to exit and returns what exec.Cmd.Wait returned.
func (p *Process) Wait() error {
	<-p.done
	return p.err
}

// Done is closed once the child has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited says how the child ended, such as "signal: killed" or "exit
// status 1"; "" while it runs.
func (p *Process) Exited() string {
	select {
	case <-p.done:
	default:
		return ""
	}
	if p.err == nil {
		return "exit status 0"
	}
	return p.err.Error()
}

// Kill kills the child's whole process group and waits for the child.
func (p *Process) Kill() error {
	if err := p.KillGroup(); err != nil {
		return err
	}
	<-p.done
	return nil
}

// KillGroup sends SIGKILL to the child's whole process group and returns
// without waiting; Done tells when the child is gone.
func (p *Process) KillGroup() error {
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// StartTree is Start for a command that may start processes of its own
// (a user's shell command): the child is the first process of a new PID
// namespace, and when it dies, by the parent-death signal or otherwise,
// the kernel kills every process it started, however they detached.
// Needs root (CAP_SYS_ADMIN), as the namespaces do.
func StartTree(cmd *exec.Cmd) (*Process, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWPID
	return Start(cmd)
}

// Pid is the child's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Output collects what a child writes (to its standard error, say),
// safe for the copying goroutine and readers at once.
type Output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

// String returns everything written so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// LastLine is the last non-empty line written, or "" if there is none.
func (o *Output) LastLine() string {
	lines := strings.Split(strings.TrimSpace(o.String()), "\n")
	return lines[len(lines)-1]
}
