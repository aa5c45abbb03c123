package cli

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/quicbench/quicbench/internal/experiment"
)

// runDoctor prints what this machine offers a study and what it means.
func runDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	binaries := newClientBinaries(fs)
	if code, done := noArgs(fs, args, "Usage: quicbench doctor [--chromium BINARY] [--firefox BINARY]\n\n"+
		"Says what this machine offers a study (cores, frequency governor, CPU accounting, TUN, the browsers,\n"+
		"the server stacks, Slurm, the emulator's own latency, the measurement lock) and what each means for the\n"+
		"results; a feature that is not installed says which make target installs it. As root it\n"+
		"builds a network to measure the emulator's latency, unless another run is measuring.", stdout, stderr); done {
		return code
	}
	findings := experiment.Doctor(ctx, binaries.values())
	problems, missing := 0, 0
	for _, f := range findings {
		mark := "ok"
		switch {
		case f.Problem:
			mark, problems = "!!", problems+1
		case f.Missing:
			mark, missing = "--", missing+1
		}
		fmt.Fprintf(stdout, "%s %s: %s\n   %s\n", mark, f.Name, f.Value, f.Meaning)
	}
	fmt.Fprintf(stdout, "%d of %d findings limit the results (marked !!); %d features beyond the default comparison are not installed (marked --, each with its make target); run records the machine's facts with every run\n", problems, len(findings), missing)
	return interruptedOr(ctx, exitOK)
}
