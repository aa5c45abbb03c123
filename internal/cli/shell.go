package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sync"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/experiment"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/netconf"
	"github.com/quicbench/quicbench/internal/shell"
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
	servers := fs.Int("servers", 1, "`number` of server addresses in the servers namespace, listed in $"+shell.EnvServerAddrs)
	usage := fmt.Sprintf("Usage: quicbench shell [flags] -- COMMAND [ARG...]\n\nRuns COMMAND in the client namespace behind the emulated link. $%s is the server's\naddress and $%s the client's, for both commands.", shell.EnvServerAddr, shell.EnvClientAddr)
	if code, done := parseFlags(fs, args, usage, stdout, stderr); done {
		return code
	}
	cfg := shell.Config{Servers: *servers, Command: fs.Args(), Server: *server, ServerPort: *serverPort, PcapPath: *capturePath,
		Stdin: stdin, Stdout: stdout, Stderr: stderr}
	network, err := shellNetwork(netFlags, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "quicbench shell:", err)
		return exitUsage
	}
	var usedSeed uint64
	cfg.Link, usedSeed = experiment.SeededLink(network, *seed)
	if !*quiet {
		fmt.Fprintf(stderr, "quicbench shell: %s; seed %d; server %s, client %s\n", network.Describe(), usedSeed, shell.ServerAddr(), shell.ClientAddr())
	}
	res, err := shell.Run(ctx, cfg)
	if !*quiet && res.Wall > 0 {
		fmt.Fprintf(stderr, "quicbench shell: link up:   %s\nquicbench shell: link down: %s\n", linkText(res.Up, network.Up), linkText(res.Down, network.Down))
		fmt.Fprintf(stderr, "quicbench shell: emulator latency: %s\n", res.Calibration.Line().Measured)
		fmt.Fprintf(stderr, "quicbench shell: emulator CPU %.2f s over %.2f s (%.0f%% of one core; the commands not included)\n",
			res.CPU.Seconds(), res.Wall.Seconds(), 100*res.CPU.Seconds()/res.Wall.Seconds())
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return exitInterrupted
	case err != nil:
		fmt.Fprintln(stderr, "quicbench shell:", err)
		return exitFailure
	}
	return res.ExitCode
}

// shellNetwork checks shell's arguments and returns the network of its
// flags; every error is the user's to fix.
func shellNetwork(netFlags *networkFlags, cfg shell.Config) (*netconf.Network, error) {
	switch {
	case len(cfg.Command) == 0:
		return nil, fmt.Errorf("no command: give one after --, such as quicbench shell --rtt 100ms -- ping -c 3 $%s", shell.EnvServerAddr)
	case cfg.Servers < 1 || cfg.Servers > factor.MaxServers:
		return nil, fmt.Errorf("--servers %d is outside 1 to %d", cfg.Servers, factor.MaxServers)
	case cfg.ServerPort < 0 || cfg.ServerPort > 65535:
		return nil, fmt.Errorf("--server-port %d is not a port (1 to 65535)", cfg.ServerPort)
	}
	network, err := netFlags.resolve()
	if err != nil {
		return nil, err
	}
	if err := network.CheckServers(cfg.Servers); err != nil {
		return nil, err
	}
	return network, checkPrivileges()
}

// linkText is one direction's counters against its configured loss.
func linkText(s shell.Counters, cfg link.Config) string {
	return linkTotalsText(analysis.LinkTotals{Packets: s.Packets, Lost: s.DroppedLoss, QueueDrops: s.DroppedQueue, PathLost: s.DroppedPath,
		PeakQueueBytes: s.PeakQueueBytes, ConfiguredLossPct: 100 * cfg.MeanLoss()})
}

// serialized returns the file w writes to if it is one (fileOf), else w
// behind a mutex.
func serialized(w io.Writer) io.Writer {
	if f, ok := fileOf(w); ok {
		return f
	}
	return &lockedWriter{w: w}
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// Write writes p whole while holding the lock.
func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
