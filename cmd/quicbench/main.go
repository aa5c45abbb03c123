// Command quicbench measures whether HTTP/3 over QUIC loads web pages faster
// than HTTP/2 and HTTP/1.1 over TCP+TLS, behind an emulated network, in a
// real browser. See the README and 'quicbench help'.
package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/quicbench/quicbench/internal/cli"
)

// exitInterrupted is cli's status for a run that a signal stopped.
const exitInterrupted = 130

func main() {
	// Become the reaper of orphaned browser processes, so that the ones a
	// run kills do not linger as zombies.
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	ctx, cancel := context.WithCancelCause(context.Background())
	signals := make(chan os.Signal, 1)
	// SIGHUP (the terminal closed) stops a run as Ctrl-C and SIGTERM do:
	// completed trials kept, namespaces and directories removed.
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		if sig, ok := <-signals; ok {
			cancel(&signalError{sig.(syscall.Signal)})
		}
	}()
	stdout, stderr := pipeWatched(os.Stdout, cancel), pipeWatched(os.Stderr, cancel)
	code := cli.Run(ctx, os.Args[1:], stdout, stderr)
	signal.Stop(signals)
	os.Exit(statusOf(code, context.Cause(ctx)))
}

// signalError is the cause of a run stopped by signal Sig.
type signalError struct{ Sig syscall.Signal }

// Error names the signal.
func (e *signalError) Error() string { return "stopped by " + e.Sig.String() }

// statusOf is the exit status of a run that ended with cli's code and
// whose context was canceled with cause (nil: not canceled): a run a
// signal stopped exits 128 plus the signal's number as a shell reports it
// (SIGHUP 129, SIGPIPE 141); Ctrl-C and SIGTERM keep cli's 130.
func statusOf(code int, cause error) int {
	var sig *signalError
	if code != exitInterrupted || !errors.As(cause, &sig) {
		return code
	}
	switch sig.Sig {
	case syscall.SIGHUP, syscall.SIGPIPE:
		return 128 + int(sig.Sig)
	}
	return code
}

// pipeWatched writes to f through a descriptor of its own: the Go runtime
// kills a program whose write to descriptor 1 or 2 finds the pipe closed
// (quicbench compare … | head -1), before any cleanup, while a write to
// another descriptor fails with EPIPE. The first such failure stops the
// run as SIGPIPE would, with its completed trials kept and its namespaces
// and directories removed.
func pipeWatched(f *os.File, cancel context.CancelCauseFunc) io.Writer {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return f
	}
	return &brokenPipeWriter{w: os.NewFile(uintptr(fd), f.Name()), cancel: cancel}
}

// brokenPipeWriter cancels the run when a write finds its pipe closed.
type brokenPipeWriter struct {
	w      *os.File
	cancel context.CancelCauseFunc
}

// File is the file written to, for a terminal's check and for a command
// that quicbench runs with this output as its own.
func (b *brokenPipeWriter) File() *os.File { return b.w }

// Write writes p, and on a broken pipe stops the command as SIGPIPE
// would.
func (b *brokenPipeWriter) Write(p []byte) (int, error) {
	n, err := b.w.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		b.cancel(&signalError{syscall.SIGPIPE})
	}
	return n, err
}
