package analysis

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/quicbench/quicbench/internal/results"
)

// Calibration is one network's netcheck as the run stored it. A run
// measures a network whose first netcheck failed once more and stores the
// second, so a stored netcheck that failed failed twice.
type Calibration struct {
	Network string
	// Lines are every check, in the netcheck's order.
	Lines []CheckLine
}

// Failed returns the checks that failed (configured against measured).
func (c Calibration) Failed() []CheckLine {
	var out []CheckLine
	for _, l := range c.Lines {
		if l.Result == "FAIL" {
			out = append(out, l)
		}
	}
	return out
}

// CheckLine is one netcheck line.
type CheckLine struct {
	Check      string `json:"check"`
	Configured string `json:"configured"`
	Measured   string `json:"measured"`
	Result     string `json:"result"`
}

// Calibrations reads the run's netchecks, networks by name.
func Calibrations(store *results.Store) ([]Calibration, error) {
	reports, err := store.NetworkReports()
	if err != nil {
		return nil, err
	}
	var out []Calibration
	for name, text := range reports {
		c, err := CalibrationOf(name, text)
		if err != nil {
			return nil, err
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

// CalibrationOf reads the netcheck of network as the run stored it (text,
// its JSON).
func CalibrationOf(network, text string) (Calibration, error) {
	var r struct{ Lines []CheckLine }
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		return Calibration{}, fmt.Errorf("netcheck of %s in the results: %v", network, err)
	}
	return Calibration{Network: network, Lines: r.Lines}, nil
}

// EmulatorLatency is one testbed's calibration of the emulator.
type EmulatorLatency struct {
	Setup string
	// MeasuredMs is the latency per round trip, TakenOffMs what of it was
	// taken off the configured delays; both 0 when not measured.
	MeasuredMs, TakenOffMs float64
}

// EmulatorLatencies reads each testbed's calibration.
func EmulatorLatencies(store *results.Store) ([]EmulatorLatency, error) {
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
