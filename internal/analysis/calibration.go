package analysis

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/quicbench/quicbench/internal/results"
)

// Calibration is one network's netcheck as the run stored it: the checks
// that failed (configured against measured), and how many passed or were
// measured for information only.
type Calibration struct {
	Network      string
	Failed       []CheckLine
	Passed, Info int
	// Lines are every check, in the netcheck's order.
	Lines []CheckLine
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

// Calibrations reads the run's netchecks, networks by name.
func Calibrations(store *results.Store) ([]Calibration, error) {
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
		c, err := CalibrationOf(name, text, facts["netcheck failed first: "+name] != "")
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
// its JSON); retried says that the first one failed and this is the
// second.
func CalibrationOf(network, text string, retried bool) (Calibration, error) {
	var r struct{ Lines []CheckLine }
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		return Calibration{}, fmt.Errorf("netcheck of %s in the results: %v", network, err)
	}
	c := Calibration{Network: network, Retried: retried, Lines: r.Lines}
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
	return c, nil
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
