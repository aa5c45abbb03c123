package netcheck

import (
	"context"
	"fmt"
	"time"

	"github.com/quicbench/quicbench/internal/stats"
	"github.com/quicbench/quicbench/internal/testbed"
)

// PathLatency is the emulator's own forwarding latency on a network and
// what was taken off its configured delays for it.
type PathLatency struct {
	// Measured is the round trip the emulator adds beyond its link: the
	// median RTT of UDP echo probes through it, less the configured RTT
	// and the probes' serialization, less the median RTT of the same echo
	// from inside the servers namespace (the echo's own turnaround and
	// the namespaces' stacks, which a real network has too). Zero when
	// Skipped says why it was not measured.
	Measured time.Duration `json:"measured_ns"`
	// Up and Down are what was taken off each direction's delay: half the
	// measured latency each, at most the direction's configured delay.
	Up   time.Duration `json:"up_ns"`
	Down time.Duration `json:"down_ns"`
	// Probes is how many probes through the emulator were answered.
	Probes int `json:"probes"`
	// Skipped is why the latency was not measured, "" when it was.
	Skipped string `json:"skipped,omitempty"`
}

// calibrationProbes is how many probes each measurement sends; at least
// minCalibrationAnswers must come back through the emulator.
const (
	calibrationProbes     = 100
	minCalibrationAnswers = 30
)

// Calibrate measures the emulator's forwarding latency on network n, whose
// link must be cfg.Link with no compensation yet, and takes it off the
// delays (emulator.Compensate). A trace's wait for its next opportunity
// leaves nothing to measure against: such a network is left as it is. It
// takes about calibrationProbes × 12 ms plus one RTT; the probes are paced
// as netcheck's idle probes are, since the wake-up latency it measures
// depends on how long the machine idled between packets.
func Calibrate(ctx context.Context, n *testbed.Network, cfg Config) (PathLatency, error) {
	if cfg.Link.Up.Trace != nil || cfg.Link.Down.Trace != nil {
		return PathLatency{Skipped: "a trace's wait for its next opportunity varies"}, nil
	}
	c := &checker{n: n, cfg: cfg.withDefaults(), server: n.Topo.ServerAddrs[0]}
	if err := c.startEcho(); err != nil {
		return PathLatency{}, err
	}
	defer c.echo.Close()
	expected, slack := c.expectedRTT()
	through, err := c.probeRTTs(ctx, n.Topo.Client, calibrationProbes, 10*time.Millisecond, expected+slack+time.Second)
	if err != nil {
		return PathLatency{}, fmt.Errorf("calibrate: %w", err)
	}
	if len(through) < minCalibrationAnswers {
		return PathLatency{Probes: len(through), Skipped: fmt.Sprintf("only %d of %d probes came back", len(through), calibrationProbes)}, nil
	}
	local, err := c.localEcho(ctx, calibrationProbes)
	if err != nil {
		return PathLatency{}, fmt.Errorf("calibrate: %w", err)
	}
	pl := PathLatency{Probes: len(through)}
	pl.Measured = max(0, msDuration(stats.Summarize(through).Median-local)-expected)
	pl.Up = min(pl.Measured/2, cfg.Link.Up.Delay)
	pl.Down = min(pl.Measured-pl.Measured/2, cfg.Link.Down.Delay)
	n.Emulator.Compensate(pl.Up, pl.Down)
	return pl, nil
}

// msDuration converts milliseconds to a Duration, to the nanosecond.
func msDuration(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// Line is the calibration as a report line, for information: there is no
// configured value to hold it to.
func (pl PathLatency) Line() Line {
	l := Line{Check: "emulator latency", Configured: "0 ms (not part of the network)", Result: Info,
		Rule: "measured when the network starts and taken off the configured delays"}
	if pl.Skipped != "" {
		l.Measured = "not measured: " + pl.Skipped
		return l
	}
	l.Measured = fmt.Sprintf("%.3f ms per round trip (%d probes); taken off: %.3f ms up, %.3f ms down",
		ms(pl.Measured), pl.Probes, ms(pl.Up), ms(pl.Down))
	l.Values = map[string]float64{"measured_ms": ms(pl.Measured), "up_ms": ms(pl.Up), "down_ms": ms(pl.Down), "probes": float64(pl.Probes)}
	return l
}
