// Package shell runs any program behind the emulated link, Mahimahi-style:
// a command in the client namespace, an optional server command in the
// servers namespace, both told the addresses in environment variables,
// and the emulator between them. `quicbench shell` is its command line.
package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/netcheck"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/proc"
	"github.com/quicbench/quicbench/internal/testbed"
)

// Environment variables that both commands get.
const (
	EnvServerAddr  = "QUICBENCH_SERVER_ADDR"  // the (first) server's address, in the servers namespace
	EnvServerAddrs = "QUICBENCH_SERVER_ADDRS" // every server address, space-separated
	EnvClientAddr  = "QUICBENCH_CLIENT_ADDR"  // the client's address, in the client namespace
)

// Config is one shell.
type Config struct {
	// Link is the emulated link, seeds included.
	Link emulator.Config
	// Servers is the number of server addresses (at least 1).
	Servers int
	// Command runs in the client namespace: its name and arguments.
	Command []string
	// Server, if set, runs with sh -c in the servers namespace while
	// Command runs; ServerPort, if not 0, is where it must accept TCP
	// connections before Command starts (within 10 s).
	Server     string
	ServerPort int
	// PcapPath, if set, receives the client side's packets.
	PcapPath string
	// Stdin goes to Command; Stdout and Stderr receive both commands'
	// output.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Counters are one direction's counters of the emulated link.
type Counters = emulator.Stats

// ClientAddr is the client namespace's address.
func ClientAddr() netip.Addr { return netns.ClientAddr }

// Result is how a shell ended.
type Result struct {
	// ExitCode is Command's exit status (-1 if it did not exit normally).
	ExitCode int
	// Up and Down are what the emulator did while Command ran.
	Up, Down Counters
	// Calibration is the emulator's own latency, measured when the network
	// started and taken off the configured delays.
	Calibration netcheck.PathLatency
	// CPU is the emulator's (this process's) CPU time while Command ran,
	// the commands' own not included; Wall is Command's run time.
	CPU, Wall time.Duration
}

// ServerAddr is the first server's address, the one in EnvServerAddr.
func ServerAddr() netip.Addr { return netns.ServerAddr(1) }

// Run builds the network, starts the server command, runs Command and
// removes everything. Canceling ctx interrupts Command (SIGINT to its
// process group); Run then returns ctx's error with the result so far.
func Run(ctx context.Context, cfg Config) (res Result, err error) {
	n, err := testbed.StartNetwork(netns.NewRunName("sh"), cfg.Link, cfg.Servers)
	if err != nil {
		return Result{ExitCode: -1}, err
	}
	defer n.Close()
	link := cfg.Link
	calibration, err := netcheck.Calibrate(ctx, n, netcheck.Config{Link: link, RTT: link.Up.Delay + link.Down.Delay})
	if err != nil {
		return Result{ExitCode: -1}, err
	}
	env := environment(n)
	if cfg.Server != "" {
		srv, err := startServer(ctx, n, cfg, env)
		if err != nil {
			return Result{ExitCode: -1}, err
		}
		defer srv.Kill() // the whole group: sh and its children
	}
	if cfg.PcapPath != "" {
		stop, err := n.StartCapture(cfg.PcapPath)
		if err != nil {
			return Result{ExitCode: -1}, err
		}
		defer func() {
			if cerr := stop(); cerr != nil && err == nil {
				err = cerr
			}
		}()
	}
	res, err = runCommand(ctx, n, cfg, env)
	res.Calibration = calibration
	return res, err
}

// environment is the commands' environment: ours and the addresses.
func environment(n *testbed.Network) []string {
	var all []string
	for _, a := range n.Topo.ServerAddrs {
		all = append(all, a.String())
	}
	return append(os.Environ(), EnvServerAddr+"="+n.Topo.ServerAddrs[0].String(), EnvServerAddrs+"="+strings.Join(all, " "),
		EnvClientAddr+"="+netns.ClientAddr.String())
}

// startServer starts the server command and waits for its port.
func startServer(ctx context.Context, n *testbed.Network, cfg Config, env []string) (*proc.Process, error) {
	cmd := n.Topo.Servers.Command(context.Background(), "sh", "-c", cfg.Server)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, cfg.Stderr, cfg.Stderr
	srv, err := proc.StartTree(cmd) // a server it forks dies with it, even if quicbench is killed
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if cfg.ServerPort > 0 {
		if err := waitForPort(ctx, n.Topo.Servers, netip.AddrPortFrom(n.Topo.ServerAddrs[0], uint16(cfg.ServerPort)), 10*time.Second); err != nil {
			srv.Kill()
			return nil, err
		}
	}
	return srv, nil
}

// runCommand runs Command and measures the emulator while it runs.
func runCommand(ctx context.Context, n *testbed.Network, cfg Config, env []string) (Result, error) {
	var before unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &before)
	upBefore, downBefore := n.Emulator.Stats()
	n.Emulator.ResetPeaks()
	start := time.Now()
	cmd := n.Topo.Client.Command(context.Background(), cfg.Command[0], cfg.Command[1:]...)
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = env, cfg.Stdin, cfg.Stdout, cfg.Stderr
	client, err := proc.Start(cmd)
	if err != nil {
		return Result{ExitCode: -1}, err
	}
	stopInterrupt := context.AfterFunc(ctx, func() { syscall.Kill(-client.Pid(), syscall.SIGINT) })
	runErr := client.Wait()
	stopInterrupt()
	res := Result{Wall: time.Since(start)}
	var after unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &after)
	res.CPU = time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	up, down := n.Emulator.Stats()
	res.Up, res.Down = up.Sub(upBefore), down.Sub(downBefore)
	var exitErr *exec.ExitError
	switch {
	case runErr == nil:
	case ctx.Err() != nil:
		res.ExitCode = -1
		return res, ctx.Err()
	case errors.As(runErr, &exitErr):
		res.ExitCode = exitErr.ExitCode()
	default:
		res.ExitCode = -1
		return res, runErr
	}
	return res, nil
}

// waitForPort waits until something in ns accepts TCP connections on addr.
func waitForPort(ctx context.Context, ns *netns.Namespace, addr netip.AddrPort, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		dialCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		conn, err := ns.DialContext(dialCtx, "tcp4", addr.String())
		cancel()
		if err == nil {
			conn.Close()
			return nil
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return fmt.Errorf("the server did not accept connections on port %s within %v: %w", strconv.Itoa(int(addr.Port())), limit, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
