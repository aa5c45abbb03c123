// Command quicbench measures whether HTTP/3 over QUIC loads web pages faster
// than HTTP/2 and HTTP/1.1 over TCP+TLS, behind an emulated network, in a
// real browser. See the README and 'quicbench help'.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/quicbench/quicbench/internal/cli"
)

func main() {
	// Become the reaper of orphaned browser processes, so that the ones a
	// run kills do not linger as zombies.
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
