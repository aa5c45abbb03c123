package netcheck

import (
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/testbed"
)

// TestCalibrateFindsHiddenLatency runs a 20 ms link but tells Calibrate it
// is 18 ms: the 2 ms it was not told of must come out as the emulator's
// latency (plus the little the emulator really adds), be taken off both
// directions, and leave the probes at the told RTT.
func TestCalibrateFindsHiddenLatency(t *testing.T) {
	n, pl := calibrateHidden(t, 10*time.Millisecond, 9*time.Millisecond)
	t.Logf("%+v", pl)
	if pl.Skipped != "" || pl.Probes < minCalibrationAnswers {
		t.Fatalf("not measured: %+v", pl)
	}
	// The emulator's own share is 0.1–0.2 ms on an idle machine; a busy
	// one (the test suite's other packages) may add up to a millisecond.
	if pl.Measured < 1800*time.Microsecond || pl.Measured > 3*time.Millisecond {
		t.Errorf("measured %v of hidden latency, want 2 ms and at most 1 ms of the emulator's own", pl.Measured)
	}
	up, down := n.Emulator.Compensation()
	if up != pl.Up || down != pl.Down || up+down != pl.Measured {
		t.Errorf("emulator compensates %v + %v, calibration says %v + %v of %v", up, down, pl.Up, pl.Down, pl.Measured)
	}
	// Measured again on the compensated link, nothing is left over.
	n.Emulator.Compensate(0, 0)
	pl2, err := Calibrate(t.Context(), n, Config{Link: symmetric(10 * time.Millisecond), RTT: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if pl2.Measured > time.Millisecond {
		t.Errorf("the emulator alone adds %v per round trip, want at most 1 ms", pl2.Measured)
	}
}

// TestCalibrateCannotTakeOffMoreThanTheDelay: on a link with 100 µs each
// way, hidden latency beyond it stays: each direction gives at most its
// configured delay.
func TestCalibrateCannotTakeOffMoreThanTheDelay(t *testing.T) {
	_, pl := calibrateHidden(t, 2*time.Millisecond, 100*time.Microsecond)
	if pl.Measured < 3*time.Millisecond || pl.Up != 100*time.Microsecond || pl.Down != 100*time.Microsecond {
		t.Errorf("calibration %+v, want about 3.8 ms measured and 100 µs taken off each way", pl)
	}
}

func TestCalibrateSkipsTraces(t *testing.T) {
	tr := &link.Trace{Name: "t", Ms: []int64{1}}
	pl, err := Calibrate(t.Context(), nil, Config{Link: emulator.Config{Down: link.Config{Trace: tr}}})
	if err != nil || pl.Skipped == "" {
		t.Errorf("a trace link was calibrated: %+v, %v", pl, err)
	}
}

// symmetric is a link with oneWay delay each way.
func symmetric(oneWay time.Duration) emulator.Config {
	return emulator.Config{Up: link.Config{Delay: oneWay}, Down: link.Config{Delay: oneWay}}
}

// calibrateHidden runs a link of real one-way delays and calibrates it as
// one of told delays.
func calibrateHidden(t *testing.T, real, told time.Duration) (*testbed.Network, PathLatency) {
	t.Helper()
	n := startNetwork(t, symmetric(real))
	pl, err := Calibrate(t.Context(), n, Config{Link: symmetric(told), RTT: 2 * told})
	if err != nil {
		t.Fatal(err)
	}
	return n, pl
}

// TestProbesEndWithTheirLastAnswer: on a lossless link, probing returns
// once the last probe is answered, not after the answers' timeout (10 s
// here; the probes take about 60 ms), with every probe's round trip.
func TestProbesEndWithTheirLastAnswer(t *testing.T) {
	n := startNetwork(t, symmetric(10*time.Millisecond))
	c := &checker{n: n, cfg: Config{Link: symmetric(10 * time.Millisecond), RTT: 20 * time.Millisecond}.withDefaults(), server: n.Topo.ServerAddrs[0]}
	if err := c.startEcho(); err != nil {
		t.Fatal(err)
	}
	defer c.echo.Close()
	start := time.Now()
	rtts, err := c.probeRTTs(t.Context(), n.Topo.Client, 20, 2*time.Millisecond, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); len(rtts) != 20 || took > 5*time.Second {
		t.Errorf("%d of 20 probes answered in %v; want all, well before the 10 s timeout", len(rtts), took)
	}
}
