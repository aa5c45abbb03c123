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

// parityFlags are parity's flags as parsed, before validation.
type parityFlags struct {
	reps                                              *int
	sizes, stack, server, quic, out, nets, connection *string
	seed                                              *uint64
	jsonOut, qlog                                     *bool
}

// newParityFlags declares parity's flags on fs.
func newParityFlags(fs *flag.FlagSet) *parityFlags {
	return &parityFlags{
		reps:       fs.Int("reps", 31, "downloads per network, size and `protocol`"),
		sizes:      fs.String("sizes", "10KB,100KB,1MB,10MB", "comma-separated file `sizes`"),
		stack:      fs.String("stack", string(factor.StackTCP), "the servers' TCP `stack`: "+factor.Stacks().Names()),
		server:     fs.String("server", string(factor.ServerGo), "server `stack` for h1 and h2: "+factor.Servers().Names()),
		quic:       fs.String("quic", string(factor.QUICGoNewReno), "comma-separated `list` of QUIC stacks for h3, each in its own testbeds with its own h1 and h2 downloads: "+factor.QUICs().Names()),
		seed:       fs.Uint64("seed", 1, "`seed` of the file bytes and the order"),
		out:        fs.String("out", "", "run `directory` (default runs/parity-<time>)"),
		jsonOut:    fs.Bool("json", false, "print every cell, with every download, as JSON"),
		nets:       fs.String("net", "", "comma-separated network `presets` (quicbench presets) instead of the unshaped and the 100 Mbit/s, 10 ms links, such as wolsing2019-mss"),
		qlog:       fs.Bool("qlog", false, "write the h3 servers' qlog of every connection into DIR/qlog/<network>-<QUIC stack>/ (qvis reads them)"),
		connection: fs.String("connection", "fresh", "`fresh`: each download opens its connection and includes the handshakes; warm: a first request opens it, only the download is timed"),
	}
}

// parseSizes parses --sizes: a comma-separated list of distinct sizes
// from 1 B to 1 GiB, in bytes.
func parseSizes(text string) ([]int64, error) {
	var sizes []int64
	for _, s := range strings.Split(text, ",") {
		n, err := units.ParseBytes(s)
		if err != nil || n < 1 || n > 1<<30 {
			return nil, fmt.Errorf("--sizes: %q is not a size from 1 B to 1 GiB, such as 100KB", s)
		}
		if slices.Contains(sizes, n) {
			return nil, fmt.Errorf("--sizes: %s is listed twice (as %d B): list each size once", s, n)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

// config turns the flags into parity's configuration, but for its run
// directory and logger, or says which flag is wrong.
func (f *parityFlags) config() (parity.Config, error) {
	c := parity.Config{Protocols: []string{"h1", "h2", "h3"}, Reps: *f.reps, Seed: *f.seed, Warm: *f.connection == "warm", Qlog: *f.qlog}
	var err error
	if c.Sizes, err = parseSizes(*f.sizes); err != nil {
		return c, err
	}
	if *f.reps < 1 || *f.reps > 10_000 {
		return c, fmt.Errorf("--reps %d is outside 1 to 10000", *f.reps)
	}
	tcpStack, err := factor.Stacks().Parse(*f.stack)
	if err != nil {
		return c, fmt.Errorf("--stack: %w", err)
	}
	c.Stack = stacks.Of(tcpStack)
	if c.Server, err = factor.Servers().Parse(*f.server); err != nil {
		return c, fmt.Errorf("--server: %w", err)
	}
	if c.QUIC, err = factor.ParseList(factor.QUICs(), *f.quic); err != nil {
		return c, fmt.Errorf("--quic: %w", err)
	}
	if *f.connection != "fresh" && *f.connection != "warm" {
		return c, fmt.Errorf("--connection %q: use fresh or warm", *f.connection)
	}
	if c.Networks, err = parityNetworks(*f.nets, *f.seed); err != nil {
		return c, fmt.Errorf("--net: %w", err)
	}
	return c, nil
}

// runParity downloads files over every protocol through an unshaped and a
// 100 Mbit/s, 10 ms link, and compares the medians (Wolsing et al. 2019, Figure 2).
func runParity(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("parity", flag.ContinueOnError)
	f := newParityFlags(fs)
	if code, done := parseFlags(fs, args, "Usage: quicbench parity [flags]\n\nDownloads files over h1, h2 and h3 through an unshaped link and a 100 Mbit/s, 10 ms RTT link (or\nthe --net presets), and compares the medians. Each download uses a fresh Go client.", stdout, stderr); done {
		return code
	}
	cfg, err := f.config()
	if err == nil {
		err = checkPrivileges()
	}
	cfg.RunDir = *f.out
	if cfg.RunDir == "" {
		cfg.RunDir = "runs/parity-" + time.Now().Format("20060102-150405")
	}
	if err == nil {
		err = experiment.CheckRunDir(cfg.RunDir)
	}
	if err != nil {
		fmt.Fprintln(stderr, "quicbench parity:", err)
		return exitUsage
	}
	cfg.Log = newLogger(stderr, false)
	cells, err := parity.Run(ctx, cfg)
	if err != nil && cells == nil {
		fmt.Fprintln(stderr, "quicbench parity:", err)
		return exitFailure
	}
	if *f.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(cells)
	} else {
		printParity(stdout, parity.Sorted(cells, cfg.Networks), *f.stack, parityServers(cfg.Server, cfg.QUIC), *f.connection)
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

// printParity prints parity's cells as a table: per network, size,
// protocol and h3 server, the downloads' median, quartiles (ms) and the
// median's ratio to h2's.
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
