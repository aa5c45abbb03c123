package report

import (
	"fmt"
	"io"
	"slices"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/stats"
)

// writeCalibration says which networks were not what they claimed to be.
func writeCalibration(w io.Writer, cals []analysis.Calibration) {
	if len(cals) == 0 {
		return
	}
	var off []analysis.Calibration
	for _, c := range cals {
		if len(c.Failed()) > 0 {
			off = append(off, c)
		}
	}
	if len(off) == 0 {
		fmt.Fprintf(w, "\nCalibration: every network's netcheck passed (%d networks).\n", len(cals))
		return
	}
	fmt.Fprintf(w, "\nCalibration: %d of %d networks were not what was configured (netcheck failed, also when measured again):\n", len(off), len(cals))
	for _, c := range off {
		for _, l := range c.Failed() {
			fmt.Fprintf(w, "  %s: %s: configured %s, measured %s\n", c.Network, l.Check, l.Configured, l.Measured)
		}
	}
}

// writeEmulatorLatency states the range of the emulator's own latency over
// the testbeds and how much of it the delays gave back.
func writeEmulatorLatency(w io.Writer, lats []analysis.EmulatorLatency) {
	if len(lats) == 0 {
		return
	}
	measured, takenOff := make([]float64, len(lats)), make([]float64, len(lats))
	for i, l := range lats {
		measured[i], takenOff[i] = l.MeasuredMs, l.TakenOffMs
	}
	fmt.Fprintf(w, "Emulator latency (measured as each of %d testbeds started): %.3f to %.3f ms per round trip, median %.3f; taken off the configured delays: %.3f to %.3f ms.\n",
		len(lats), slices.Min(measured), slices.Max(measured), stats.Summarize(measured).Median, slices.Min(takenOff), slices.Max(takenOff))
}

// writeStacks says which testbeds' stacks did not do on the wire what was
// applied (analysis.WireWarnings), of the testbeds measured; nothing where
// none was (runs made before 2026-11-28).
func writeStacks(w io.Writer, stacks []analysis.StackWarning, testbeds int) {
	if testbeds == 0 {
		return
	}
	if len(stacks) == 0 {
		fmt.Fprintf(w, "Stacks on the wire: every testbed's stacks did what was applied, as far as its packets showed (%d testbeds measured).\n", testbeds)
		return
	}
	fmt.Fprintf(w, "Stacks on the wire: on %d of %d testbeds measured the stacks did not do what was applied:\n", len(stacks), testbeds)
	for _, s := range stacks {
		for _, warning := range s.Warnings {
			fmt.Fprintf(w, "  WARNING: %s: %s\n", s.Setup, warning)
		}
	}
}
