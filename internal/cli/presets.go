package cli

import (
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/quicbench/quicbench/internal/experiment"
	"github.com/quicbench/quicbench/internal/netconf"
	"github.com/quicbench/quicbench/internal/presets"
	"github.com/quicbench/quicbench/internal/stacks"
)

// runPresets lists the network presets with their numbers, grouped by
// source, each group with its citation and how its numbers were read.
func runPresets(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("presets", flag.ContinueOnError)
	if code, done := noArgs(fs, args, "Usage: quicbench presets\n\nLists the network presets (--net NAME, or a spec network's preset) with their numbers, grouped by\nsource, each group with its citation and how its numbers were read.", stdout, stderr); done {
		return code
	}
	fmt.Fprintln(stdout, "Network presets (use with --net NAME). Delays are round-trip times, split evenly between the")
	fmt.Fprintln(stdout, "directions; loss applies to each direction independently; rates are bottleneck rates.")
	group := ""
	var tw *tabwriter.Writer
	flush := func() {
		if tw != nil {
			tw.Flush()
		}
	}
	for _, p := range presets.All() {
		if p.Group != group {
			flush()
			group = p.Group
			fmt.Fprintf(stdout, "\n%s — %s\n  %s\n", p.Group, p.Source, p.Reading)
			tw = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "  name\tdown\tup\tRTT\tloss down\tloss up\tqueue")
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%v\t%s\t%s\t%s\n", p.Name, netconf.Rate(p.DownBitsPerSecond), netconf.Rate(p.UpBitsPerSecond),
			p.RTT, netconf.Percent(p.LossDown), netconf.Percent(p.LossUp), p.QueueText())
	}
	flush()
	return exitOK
}

// runStacks lists the transport stack profiles and what this machine cannot
// give them.
func runStacks(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("stacks", flag.ContinueOnError)
	if code, done := noArgs(fs, args, "Usage: quicbench stacks\n\nLists the servers' TCP and QUIC stacks, what each runs with, and what this machine cannot give them.", stdout, stderr); done {
		return code
	}
	fmt.Fprintln(stdout, "TCP stacks of the servers (Wolsing et al. 2019, Table 1) for h1 and h2: compare --stack, spec stacks: [...].")
	fmt.Fprintln(stdout, "Each run records what the kernel reports after applying it.")
	for _, p := range stacks.Profiles() {
		fmt.Fprintf(stdout, "\n%-8s %s\n", p.Name, p.Summary)
		for _, l := range p.Limits {
			fmt.Fprintf(stdout, "         cannot here: %s\n", l)
		}
	}
	fmt.Fprintln(stdout, "\nQUIC stacks for h3: compare --quic-server and --quic-cc, spec quic: [...]. Each testbed records")
	fmt.Fprintln(stdout, "the server's congestion control, initial window, pacing and HyStart.")
	for _, p := range experiment.QUICProfiles() {
		tr := p.Transport
		fmt.Fprintf(stdout, "\n%-14s %s: congestion control %s, initial window %d B, pacing %t, HyStart %t\n", p.Name, p.Server, tr.Congestion, tr.InitialWindowBytes, tr.Pacing, tr.HyStart)
		fmt.Fprintf(stdout, "               from: %s\n", p.Source)
		if why := p.Name.Experimental(); why != "" {
			fmt.Fprintf(stdout, "               EXPERIMENTAL: %s\n", why)
		}
		for _, l := range p.Limits {
			fmt.Fprintf(stdout, "               note: %s\n", l)
		}
	}
	return exitOK
}
