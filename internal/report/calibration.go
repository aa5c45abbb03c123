package report

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/stats"
)

// Calibration is one network's netcheck as the run stored it: the checks
// that failed (configured against measured), and how many passed or were
// measured for information only.
type Calibration struct {
	Network      string
	Failed       []CheckLine
	Passed, Info int
	// Retried says the first netcheck failed and this is the second.
	Retried bool
}

// CheckLine is one netcheck line.
type CheckLine struct {
	Check      string `json:"check"`
	Configured string `json:"configured"`
	Measured   string `json:"measured"`
	Result     string `json:"result"`
}

// calibrations reads the run's netchecks, networks by name.
func calibrations(store *results.Store) ([]Calibration, error) {
	reports, err := store.NetworkReports()
	if err != nil {
		return nil, err
	}
	facts, err := store.Facts()
	if err != nil {
		return nil, err
	}
	var out []Calibration
	for name, text := range reports {
		var r struct{ Lines []CheckLine }
		if err := json.Unmarshal([]byte(text), &r); err != nil {
			return nil, fmt.Errorf("netcheck of %s in the results: %v", name, err)
		}
		c := Calibration{Network: name, Retried: facts["netcheck failed first: "+name] != ""}
		for _, l := range r.Lines {
			switch l.Result {
			case "FAIL":
				c.Failed = append(c.Failed, l)
			case "pass":
				c.Passed++
			default:
				c.Info++
			}
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Calibration) int {
		if a.Network < b.Network {
			return -1
		}
		return 1
	})
	return out, nil
}

// writeCalibration says which networks were not what they claimed to be.
func writeCalibration(w io.Writer, cals []Calibration) {
	if len(cals) == 0 {
		return
	}
	var off []Calibration
	for _, c := range cals {
		if len(c.Failed) > 0 {
			off = append(off, c)
		}
	}
	if len(off) == 0 {
		fmt.Fprintf(w, "\nCalibration: every network's netcheck passed (%d networks).\n", len(cals))
		return
	}
	fmt.Fprintf(w, "\nCalibration: %d of %d networks were not what was configured (netcheck failed, also when measured again):\n", len(off), len(cals))
	for _, c := range off {
		for _, l := range c.Failed {
			fmt.Fprintf(w, "  %s: %s: configured %s, measured %s\n", c.Network, l.Check, l.Configured, l.Measured)
		}
	}
}

// EmulatorLatency is one testbed's calibration of the emulator.
type EmulatorLatency struct {
	Setup string
	// MeasuredMs is the latency per round trip, TakenOffMs what of it was
	// taken off the configured delays; both 0 when not measured.
	MeasuredMs, TakenOffMs float64
}

// emulatorLatencies reads each testbed's calibration.
func emulatorLatencies(store *results.Store) ([]EmulatorLatency, error) {
	tbs, err := store.Testbeds()
	if err != nil {
		return nil, err
	}
	out := make([]EmulatorLatency, 0, len(tbs))
	for _, tb := range tbs {
		out = append(out, EmulatorLatency{Setup: tb.Key, MeasuredMs: tb.PathLatencyMs, TakenOffMs: tb.CompensationMs})
	}
	return out, nil
}

// writeEmulatorLatency states the range of the emulator's own latency over
// the testbeds and how much of it the delays gave back.
func writeEmulatorLatency(w io.Writer, lats []EmulatorLatency) {
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
