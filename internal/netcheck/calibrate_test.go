package netcheck

import (
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/link"
)

// TestCalibrateFindsHiddenLatency runs a 20 ms link but tells Calibrate it
// is 18 ms: the 2 ms it was not told of must come out as the emulator's
// latency (plus the little the emulator really adds), be taken off both
// directions, and leave the probes at the told RTT.
func TestCalibrateFindsHiddenLatency(t *testing.T) {
	real := emulator.Config{Up: link.Config{Delay: 10 * time.Millisecond}, Down: link.Config{Delay: 10 * time.Millisecond}}
	n := startNetwork(t, real)
	told := Config{Link: emulator.Config{Up: link.Config{Delay: 9 * time.Millisecond}, Down: link.Config{Delay: 9 * time.Millisecond}}, RTT: 18 * time.Millisecond}
	pl, err := Calibrate(t.Context(), n, told)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", pl)
	if pl.Skipped != "" || pl.Probes < minCalibrationAnswers {
		t.Fatalf("not measured: %+v", pl)
	}
	if pl.Measured < 1900*time.Microsecond || pl.Measured > 2500*time.Microsecond {
		t.Errorf("measured %v of hidden latency, want 2 ms and at most 0.5 ms of the emulator's own", pl.Measured)
	}
	up, down := n.Emulator.Compensation()
	if up != pl.Up || down != pl.Down || up+down != pl.Measured {
		t.Errorf("emulator compensates %v + %v, calibration says %v + %v of %v", up, down, pl.Up, pl.Down, pl.Measured)
	}
	// Measured again on the compensated link, nothing is left over.
	n.Emulator.Compensate(0, 0)
	pl2, err := Calibrate(t.Context(), n, Config{Link: real, RTT: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if pl2.Measured > 500*time.Microsecond {
		t.Errorf("the emulator alone adds %v per round trip, want at most 0.5 ms", pl2.Measured)
	}
}

// TestCalibrateCannotTakeOffMoreThanTheDelay: on a link with 100 µs each
// way, hidden latency beyond it stays: each direction gives at most its
// configured delay.
func TestCalibrateCannotTakeOffMoreThanTheDelay(t *testing.T) {
	real := emulator.Config{Up: link.Config{Delay: 2 * time.Millisecond}, Down: link.Config{Delay: 2 * time.Millisecond}}
	n := startNetwork(t, real)
	told := Config{Link: emulator.Config{Up: link.Config{Delay: 100 * time.Microsecond}, Down: link.Config{Delay: 100 * time.Microsecond}}, RTT: 200 * time.Microsecond}
	pl, err := Calibrate(t.Context(), n, told)
	if err != nil {
		t.Fatal(err)
	}
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
