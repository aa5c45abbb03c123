package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/pcap"
	"github.com/quicbench/quicbench/internal/proc"
)

// Environment variables that shell gives to both commands.
const (
	envServerAddr  = "QUICBENCH_SERVER_ADDR"  // the (first) server's address, in the servers namespace
	envServerAddrs = "QUICBENCH_SERVER_ADDRS" // every server address, space-separated
	envClientAddr  = "QUICBENCH_CLIENT_ADDR"  // the client's address, in the client namespace
)

// runShell runs a command in the client namespace behind the emulated link,
// Mahimahi-style, optionally with a server command in the servers namespace.
func runShell(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// Unless a writer is a file (a terminal keeps the commands interactive),
	// os/exec copies the commands' output in goroutines: serialize those
	// writers so that the copies and our own lines never interleave.
	stdout, stderr = serialized(stdout), serialized(stderr)
	fs := flag.NewFlagSet("shell", flag.ContinueOnError)
	netFlags := addNetworkFlags(fs, networkDefaults{rtt: "0", loss: "0", down: "0", up: "0", queue: "0"})
	server := fs.String("server", "", "`command` to run (with sh -c) in the servers namespace while the client command runs")
	serverPort := fs.Int("server-port", 0, "wait until the server accepts TCP connections on this `port` before starting the command")
	quiet := fs.Bool("quiet", false, "do not print the network and the link counters to stderr")
	capturePath := fs.String("pcap", "", "record the client side's packets to this `file` (pcap, Wireshark reads it)")
	seed := fs.Uint64("seed", 0, "`seed` of the loss decisions; 0 picks one, which is printed")
	servers := fs.Int("servers", 1, "`number` of server addresses in the servers namespace, listed in $"+envServerAddrs)
	usage := fmt.Sprintf("Usage: quicbench shell [flags] -- COMMAND [ARG...]\n\nRuns COMMAND in the client namespace behind the emulated link. $%s is the server's\naddress and $%s the client's, for both commands.", envServerAddr, envClientAddr)
	if code, done := parseFlags(fs, args, usage, stdout, stderr); done {
		return code
	}
	command := fs.Args()
	if len(command) == 0 {
		fmt.Fprintln(stderr, "quicbench shell: no command: give one after --, such as quicbench shell --rtt 100ms -- ping -c 3 $"+envServerAddr)
		return exitUsage
	}
	if *servers < 1 || *servers > netns.MaxServers {
		fmt.Fprintf(stderr, "quicbench shell: --servers %d is outside 1 to %d\n", *servers, netns.MaxServers)
		return exitUsage
	}
	if *serverPort < 0 || *serverPort > 65535 {
		fmt.Fprintf(stderr, "quicbench shell: --server-port %d is not a port (1 to 65535)\n", *serverPort)
		return exitUsage
	}
	network, err := netFlags.resolve()
	if err != nil {
		fmt.Fprintln(stderr, "quicbench shell:", err)
		return exitUsage
	}
	net0, usedSeed, err := startNetwork(network, *seed, "sh", *servers)
	if err != nil {
		fmt.Fprintln(stderr, "quicbench shell:", err)
		return exitCodeOf(err)
	}
	defer net0.Close()
	serverAddr := net0.Topo.ServerAddrs[0]
	var all []string
	for _, a := range net0.Topo.ServerAddrs {
		all = append(all, a.String())
	}
	env := append(os.Environ(), envServerAddr+"="+serverAddr.String(), envServerAddrs+"="+strings.Join(all, " "),
		envClientAddr+"="+netns.ClientAddr.String())
	if !*quiet {
		fmt.Fprintf(stderr, "quicbench shell: %s; seed %d; server %s, client %s\n", network.Describe(), usedSeed, serverAddr, netns.ClientAddr)
	}

	if *server != "" {
		srvCmd := net0.Topo.Servers.Command(context.Background(), "sh", "-c", *server)
		srvCmd.Env, srvCmd.Stdout, srvCmd.Stderr = env, stderr, stderr
		srv, err := proc.Start(srvCmd)
		if err != nil {
			fmt.Fprintln(stderr, "quicbench shell: server:", err)
			return exitFailure
		}
		defer srv.Kill() // the whole group: sh and its children
		if *serverPort > 0 {
			if err := waitForPort(ctx, net0.Topo.Servers, netip.AddrPortFrom(serverAddr, uint16(*serverPort)), 10*time.Second); err != nil {
				fmt.Fprintln(stderr, "quicbench shell:", err)
				return exitFailure
			}
		}
	}

	if *capturePath != "" {
		f, err := os.Create(*capturePath)
		if err != nil {
			fmt.Fprintln(stderr, "quicbench shell: --pcap:", err)
			return exitUsage
		}
		w, err := pcap.NewWriter(f)
		if err != nil {
			f.Close()
			fmt.Fprintln(stderr, "quicbench shell:", err)
			return exitFailure
		}
		net0.Emulator.SetCapture(w)
		defer func() {
			net0.Emulator.SetCapture(nil)
			if err := errors.Join(w.Flush(), f.Close()); err != nil {
				fmt.Fprintln(stderr, "quicbench shell: --pcap:", err)
			}
		}()
	}
	var usageBefore unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &usageBefore)
	commandStart := time.Now()
	cmd := net0.Topo.Client.Command(context.Background(), command[0], command[1:]...)
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = env, stdin, stdout, stderr
	client, err := proc.Start(cmd)
	if err != nil {
		fmt.Fprintln(stderr, "quicbench shell:", err)
		return exitFailure
	}
	stop := context.AfterFunc(ctx, func() { syscall.Kill(-client.Pid(), syscall.SIGINT) })
	runErr := client.Wait()
	stop()
	if !*quiet {
		up, down := net0.Emulator.Stats()
		fmt.Fprintf(stderr, "quicbench shell: link up:   %s\nquicbench shell: link down: %s\n", linkText(up, network.Link.Up), linkText(down, network.Link.Down))
		var usage unix.Rusage
		unix.Getrusage(unix.RUSAGE_SELF, &usage)
		cpu := time.Duration(usage.Utime.Nano()+usage.Stime.Nano()-usageBefore.Utime.Nano()-usageBefore.Stime.Nano()) * time.Nanosecond
		wall := time.Since(commandStart)
		fmt.Fprintf(stderr, "quicbench shell: emulator CPU %.2f s over %.2f s (%.0f%% of one core; the commands not included)\n",
			cpu.Seconds(), wall.Seconds(), 100*cpu.Seconds()/wall.Seconds())
	}
	var exitErr *exec.ExitError
	switch {
	case runErr == nil:
		return exitOK
	case ctx.Err() != nil:
		return exitInterrupted
	case errors.As(runErr, &exitErr):
		return exitErr.ExitCode()
	}
	fmt.Fprintln(stderr, "quicbench shell:", runErr)
	return exitFailure
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

// serialized returns w itself if it is a file, else w behind a mutex.
func serialized(w io.Writer) io.Writer {
	if _, ok := w.(*os.File); ok {
		return w
	}
	return &lockedWriter{w: w}
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
