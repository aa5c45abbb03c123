package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/quicbench/quicbench/internal/experiment"
	"github.com/quicbench/quicbench/internal/netcheck"
	"github.com/quicbench/quicbench/internal/netconf"
)

// netcheckFlags are netcheck's flags as parsed, before validation.
type netcheckFlags struct {
	net                *networkFlags
	probes, lossProbes *int
	transfer           *time.Duration
	jsonOut            *bool
	confidence         *float64
	seed               *uint64
}

// newNetcheckFlags declares netcheck's flags on fs.
func newNetcheckFlags(fs *flag.FlagSet) *netcheckFlags {
	return &netcheckFlags{
		net:        addNetworkFlags(fs, networkDefaults{rtt: "0", loss: "0", down: "0", up: "0", queue: "0"}),
		probes:     fs.Int("probes", 200, "idle RTT `probes`, one every 10 ms"),
		lossProbes: fs.Int("loss-probes", 0, "loss probes per `direction`; 0: as many as fit in 5 s at half the rate (at most 5000)"),
		transfer:   fs.Duration("transfer", 5*time.Second, "`length` of each TCP transfer"),
		jsonOut:    fs.Bool("json", false, "print the report as JSON"),
		confidence: fs.Float64("confidence", 0.999, "`level` of the loss checks' intervals: 0.95, 0.99 or 0.999"),
		seed:       fs.Uint64("seed", 0, "`seed` of the loss decisions; 0 picks one, which is printed"),
	}
}

// network checks the flags and resolves the network they describe.
func (f *netcheckFlags) network(fs *flag.FlagSet) (*netconf.Network, error) {
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case *f.probes < 1 || *f.probes > 100_000:
		return nil, fmt.Errorf("--probes %d is outside 1 to 100000", *f.probes)
	case *f.lossProbes < 0 || *f.lossProbes > 10_000_000:
		return nil, fmt.Errorf("--loss-probes %d is outside 0 to 10000000", *f.lossProbes)
	case *f.confidence != 0.95 && *f.confidence != 0.99 && *f.confidence != 0.999:
		return nil, fmt.Errorf("--confidence %v: use 0.95, 0.99 or 0.999", *f.confidence)
	case *f.transfer < time.Second || *f.transfer > 10*time.Minute:
		return nil, fmt.Errorf("--transfer %v is outside 1s to 10m", *f.transfer)
	}
	network, err := f.net.resolve()
	if err != nil {
		return nil, err
	}
	return network, network.CheckServers(1)
}

// runNetcheck builds the network of the flags and measures it against its
// configuration. Exit status 1 when a check fails.
func runNetcheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("netcheck", flag.ContinueOnError)
	f := newNetcheckFlags(fs)
	if code, done := parseFlags(fs, args, "Usage: quicbench netcheck [flags]\n\nMeasures the emulated network through the real emulator and compares it with its configuration.", stdout, stderr); done {
		return code
	}
	network, err := f.network(fs)
	if err == nil {
		err = checkPrivileges()
	}
	if err != nil {
		fmt.Fprintln(stderr, "quicbench netcheck:", err)
		return exitUsage
	}
	link, usedSeed := experiment.SeededLink(network, *f.seed)
	if !*f.jsonOut {
		fmt.Fprintf(stdout, "netcheck: %s; seed %d\n", network.Describe(), usedSeed)
	}
	report, err := netcheck.Measure(ctx, "", netcheck.Config{Link: link, RTT: network.RTT,
		RTTProbes: *f.probes, LossProbes: *f.lossProbes, TransferTime: *f.transfer, Confidence: *f.confidence})
	if err != nil {
		fmt.Fprintln(stderr, "quicbench netcheck:", err)
		if ctx.Err() != nil {
			return exitInterrupted
		}
		return exitFailure
	}
	if *f.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(struct {
			Network string `json:"network"`
			Seed    uint64 `json:"seed"`
			*netcheck.Report
			Passed bool `json:"passed"`
		}{network.Describe(), usedSeed, report, report.Passed()})
	} else {
		printNetcheck(stdout, report)
	}
	if !report.Passed() {
		return exitFailure
	}
	return exitOK
}

// printNetcheck prints a netcheck's report as a table: each check's
// configured and measured value, its result and its rule.
func printNetcheck(w io.Writer, r *netcheck.Report) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "check\tconfigured\tmeasured\tresult\trule")
	for _, l := range r.Lines {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", l.Check, l.Configured, l.Measured, l.Result, l.Rule)
	}
	tw.Flush()
}
