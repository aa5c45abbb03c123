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
)

// runNetcheck builds the network of the flags and measures it against its
// configuration. Exit status 1 when a check fails.
func runNetcheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("netcheck", flag.ContinueOnError)
	netFlags := addNetworkFlags(fs, networkDefaults{rtt: "0", loss: "0", down: "0", up: "0", queue: "0"})
	probes := fs.Int("probes", 200, "idle RTT `probes`, one every 10 ms")
	lossProbes := fs.Int("loss-probes", 0, "loss probes per `direction`; 0: as many as fit in 5 s at half the rate (at most 5000)")
	transfer := fs.Duration("transfer", 5*time.Second, "`length` of each TCP transfer")
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	confidence := fs.Float64("confidence", 0.999, "`level` of the loss checks' intervals: 0.95, 0.99 or 0.999")
	seed := fs.Uint64("seed", 0, "`seed` of the loss decisions; 0 picks one, which is printed")
	if code, done := parseFlags(fs, args, "Usage: quicbench netcheck [flags]\n\nMeasures the emulated network through the real emulator and compares it with its configuration.", stdout, stderr); done {
		return code
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "quicbench netcheck: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	case *probes < 1 || *probes > 100_000:
		fmt.Fprintf(stderr, "quicbench netcheck: --probes %d is outside 1 to 100000\n", *probes)
		return exitUsage
	case *lossProbes < 0 || *lossProbes > 10_000_000:
		fmt.Fprintf(stderr, "quicbench netcheck: --loss-probes %d is outside 0 to 10000000\n", *lossProbes)
		return exitUsage
	case *confidence != 0.95 && *confidence != 0.99 && *confidence != 0.999:
		fmt.Fprintf(stderr, "quicbench netcheck: --confidence %v: use 0.95, 0.99 or 0.999\n", *confidence)
		return exitUsage
	case *transfer < time.Second || *transfer > 10*time.Minute:
		fmt.Fprintf(stderr, "quicbench netcheck: --transfer %v is outside 1s to 10m\n", *transfer)
		return exitUsage
	}
	network, err := netFlags.resolve()
	if err == nil {
		err = network.CheckServers(1)
	}
	if err == nil {
		err = checkPrivileges()
	}
	if err != nil {
		fmt.Fprintln(stderr, "quicbench netcheck:", err)
		return exitUsage
	}
	link, usedSeed := experiment.SeededLink(network, *seed)
	if !*jsonOut {
		fmt.Fprintf(stdout, "netcheck: %s; seed %d\n", network.Describe(), usedSeed)
	}
	report, err := netcheck.Measure(ctx, "", netcheck.Config{Link: link, RTT: network.RTT,
		RTTProbes: *probes, LossProbes: *lossProbes, TransferTime: *transfer, Confidence: *confidence})
	if err != nil {
		fmt.Fprintln(stderr, "quicbench netcheck:", err)
		if ctx.Err() != nil {
			return exitInterrupted
		}
		return exitFailure
	}
	if *jsonOut {
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

func printNetcheck(w io.Writer, r *netcheck.Report) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "check\tconfigured\tmeasured\tresult\trule")
	for _, l := range r.Lines {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", l.Check, l.Configured, l.Measured, l.Result, l.Rule)
	}
	tw.Flush()
}
