package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/quicbench/quicbench/internal/experiment"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/netconf"
	"github.com/quicbench/quicbench/internal/parity"
	"github.com/quicbench/quicbench/internal/stacks"
	"github.com/quicbench/quicbench/internal/units"
)

// runParity downloads files over every protocol through an unshaped and a
// 100 Mbit/s, 10 ms link, and compares the medians (Wolsing et al. 2019, Figure 2).
func runParity(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("parity", flag.ContinueOnError)
	reps := fs.Int("reps", 31, "downloads per network, size and `protocol`")
	sizesFlag := fs.String("sizes", "10KB,100KB,1MB,10MB", "comma-separated file `sizes`")
	stack := fs.String("stack", string(factor.StackTCP), "the servers' TCP `stack`: "+factor.Stacks().Names())
	server := fs.String("server", string(factor.ServerGo), "server `stack` for h1 and h2: "+factor.Servers().Names())
	quicFlag := fs.String("quic", string(factor.QUICGoNewReno), "comma-separated `list` of QUIC stacks for h3, each in its own testbeds with its own h1 and h2 downloads: "+factor.QUICs().Names())
	seed := fs.Uint64("seed", 1, "`seed` of the file bytes and the order")
	out := fs.String("out", "", "run `directory` (default runs/parity-<time>)")
	jsonOut := fs.Bool("json", false, "print every cell, with every download, as JSON")
	nets := fs.String("net", "", "comma-separated network `presets` (quicbench presets) instead of the unshaped and the 100 Mbit/s, 10 ms links, such as wolsing2019-mss")
	qlog := fs.Bool("qlog", false, "write the h3 servers' qlog of every connection into DIR/qlog/<network>-<QUIC stack>/ (qvis reads them)")
	connection := fs.String("connection", "fresh", "`fresh`: each download opens its connection and includes the handshakes; warm: a first request opens it, only the download is timed")
	if code, done := parseFlags(fs, args, "Usage: quicbench parity [flags]\n\nDownloads files over h1, h2 and h3 through an unshaped link and a 100 Mbit/s, 10 ms RTT link (or\nthe --net presets), and compares the medians. Each download uses a fresh Go client.", stdout, stderr); done {
		return code
	}
	var sizes []int64
	for _, s := range strings.Split(*sizesFlag, ",") {
		n, err := units.ParseBytes(s)
		if err != nil || n < 1 || n > 1<<30 {
			fmt.Fprintf(stderr, "quicbench parity: --sizes: %q is not a size from 1 B to 1 GiB, such as 100KB\n", s)
			return exitUsage
		}
		if slices.Contains(sizes, n) {
			fmt.Fprintf(stderr, "quicbench parity: --sizes: %s is listed twice (as %d B): list each size once\n", s, n)
			return exitUsage
		}
		sizes = append(sizes, n)
	}
	if *reps < 1 || *reps > 10_000 {
		fmt.Fprintf(stderr, "quicbench parity: --reps %d is outside 1 to 10000\n", *reps)
		return exitUsage
	}
	tcpStack, err := factor.Stacks().Parse(*stack)
	if err != nil {
		fmt.Fprintln(stderr, "quicbench parity: --stack:", err)
		return exitUsage
	}
	serverStack, err := factor.Servers().Parse(*server)
	if err != nil {
		fmt.Fprintln(stderr, "quicbench parity: --server:", err)
		return exitUsage
	}
	quics, err := factor.ParseList(factor.QUICs(), *quicFlag)
	if err != nil {
		fmt.Fprintln(stderr, "quicbench parity: --quic:", err)
		return exitUsage
	}
	if *connection != "fresh" && *connection != "warm" {
		fmt.Fprintf(stderr, "quicbench parity: --connection %q: use fresh or warm\n", *connection)
		return exitUsage
	}
	networks, err := parityNetworks(*nets, *seed)
	if err != nil {
		fmt.Fprintln(stderr, "quicbench parity: --net:", err)
		return exitUsage
	}
	if err := checkPrivileges(); err != nil {
		fmt.Fprintln(stderr, "quicbench parity:", err)
		return exitUsage
	}
	dir := *out
	if dir == "" {
		dir = "runs/parity-" + time.Now().Format("20060102-150405")
	}
	if err := experiment.CheckRunDir(dir); err != nil {
		fmt.Fprintln(stderr, "quicbench parity:", err)
		return exitUsage
	}
	cells, err := parity.Run(ctx, parity.Config{Networks: networks, Sizes: sizes, Protocols: []string{"h1", "h2", "h3"},
		Reps: *reps, Seed: *seed, Stack: stacks.Of(tcpStack), Server: serverStack, QUIC: quics, Warm: *connection == "warm", Qlog: *qlog, RunDir: dir, Log: newLogger(stderr, false)})
	if err != nil && cells == nil {
		fmt.Fprintln(stderr, "quicbench parity:", err)
		return exitFailure
	}
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(cells)
	} else {
		printParity(stdout, parity.Sorted(cells, networks), *stack, parityServers(serverStack, quics), *connection)
	}
	if err != nil {
		fmt.Fprintln(stderr, "quicbench parity:", err)
		if ctx.Err() != nil {
			return exitInterrupted
		}
		return exitFailure
	}
	return exitOK
}

func printParity(w io.Writer, cells []*parity.Cell, stack, servers, connection string) {
	what := "handshakes included (a fresh Go client and connection each time)"
	if connection == "warm" {
		what = "on an open connection (a first request made the handshakes)"
	}
	fmt.Fprintf(w, "Median download time in ms, %s; %s servers, TCP stack %s.\n", what, servers, stack)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "network\tsize\tprotocol\th3 from\tn\tfailed\tmedian\tp25\tp75\tmedian/h2\t")
	for _, c := range cells {
		ratio := "-"
		if c.RatioToH2 > 0 {
			ratio = fmt.Sprintf("%.3f", c.RatioToH2)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t\n", c.Network, sizeText(c.Size), c.Protocol, c.QUIC, c.Summary.N, c.Failed,
			msText(c.Summary.Median), msText(c.Summary.P25), msText(c.Summary.P75), ratio)
	}
	tw.Flush()
}

// parityNetworks is the links of the presets named in list (comma-separated),
// their losses seeded from seed; the default networks for "".
func parityNetworks(list string, seed uint64) ([]parity.Network, error) {
	if list == "" {
		return parity.DefaultNetworks(), nil
	}
	var out []parity.Network
	for _, name := range strings.Split(list, ",") {
		net, err := netconf.Resolve(netconf.Description{Preset: strings.TrimSpace(name)}, nil)
		if err != nil {
			return nil, errors.New(strings.TrimPrefix(err.Error(), "--net: "))
		}
		if slices.ContainsFunc(out, func(n parity.Network) bool { return n.Name == net.Name }) {
			return nil, fmt.Errorf("%s is listed twice: list each network once", net.Name)
		}
		link, _ := experiment.SeededLink(net, seed)
		out = append(out, parity.Network{Name: net.Name, Link: link})
	}
	return out, nil
}

// parityServers names the servers of a parity run.
func parityServers(server factor.Server, quics []factor.QUIC) string {
	names := make([]string, len(quics))
	for i, q := range quics {
		names[i] = string(q)
	}
	return fmt.Sprintf("%s (h1, h2) and %s (h3, each in its own testbeds)", server, strings.Join(names, ", "))
}

func sizeText(b int64) string {
	switch {
	case b >= 1e6 && b%1e6 == 0:
		return fmt.Sprintf("%dMB", b/1e6)
	case b >= 1e3 && b%1e3 == 0:
		return fmt.Sprintf("%dKB", b/1e3)
	}
	return fmt.Sprintf("%dB", b)
}
