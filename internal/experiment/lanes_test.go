package experiment

import (
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quicbench/quicbench/internal/results"
)

// fakeLanes is a reader whose counts grow at every reading: 3 ms of the
// client's CPU, 1 ms of quicbench's, 100 bytes up and 1000 down; its
// fail-th reading fails.
type fakeLanes struct {
	n, fail int
}

func (f *fakeLanes) read() (laneReading, error) {
	f.n++
	if f.n == f.fail {
		return laneReading{}, errors.New("cpu.stat vanished")
	}
	k := time.Duration(f.n)
	return laneReading{client: 3 * k * time.Millisecond, hasClient: true, self: k * time.Millisecond,
		up: 100 * int64(f.n), down: 1000 * int64(f.n)}, nil
}

// TestSamplingReadsEveryIntervalAndOnceAtTheEnd: a load of 120 ms is read
// at 50 and 100 ms and when it ends, each count since the start; a failed
// reading is left out; stop leaves no goroutine behind (synctest.Test
// waits for every goroutine of its bubble).
func TestSamplingReadsEveryIntervalAndOnceAtTheEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lanes := &fakeLanes{}
		s := startSampling(lanes.read, 50*time.Millisecond)
		time.Sleep(120 * time.Millisecond)
		got := s.stop()
		want := []results.Sample{
			{AtMs: 50, ClientCPUMs: results.F(3), QuicbenchCPUMs: 1, UpBytes: 100, DownBytes: 1000},
			{AtMs: 100, ClientCPUMs: results.F(6), QuicbenchCPUMs: 2, UpBytes: 200, DownBytes: 2000},
			{AtMs: 120, ClientCPUMs: results.F(9), QuicbenchCPUMs: 3, UpBytes: 300, DownBytes: 3000},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("samples (-want +got):\n%s", diff)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		lanes := &fakeLanes{fail: 3} // the second sample's reading
		s := startSampling(lanes.read, 50*time.Millisecond)
		time.Sleep(170 * time.Millisecond)
		got := s.stop()
		var at []float64
		for _, x := range got {
			at = append(at, x.AtMs)
		}
		if !slices.Equal(at, []float64{50, 150, 170}) {
			t.Errorf("samples at %v ms, want 50, 150 and 170: the failed reading at 100 left out", at)
		}
	})
}

// TestSamplingWithoutABaseIsNone: a first reading that fails starts no
// sampling, and stopping none gives none.
func TestSamplingWithoutABaseIsNone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startSampling((&fakeLanes{fail: 1}).read, 50*time.Millisecond)
		if s != nil {
			t.Fatal("a sampling started without its base reading")
		}
		if got := s.stop(); got != nil {
			t.Errorf("stopping none gave %v", got)
		}
	})
}

// TestALaneOfAPartyInQuicbenchIsNull: a party without a group of its own
// (a server in quicbench's process) has no CPU lane of its own.
func TestALaneOfAPartyInQuicbenchIsNull(t *testing.T) {
	base := laneReading{client: time.Second, hasClient: true, self: time.Second}
	got := laneReading{client: 1500 * time.Millisecond, hasClient: true, self: 1100 * time.Millisecond, down: 40}.since(base, 75*time.Millisecond)
	want := results.Sample{AtMs: 75, ClientCPUMs: results.F(500), QuicbenchCPUMs: 100, DownBytes: 40}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sample (-want +got):\n%s", diff)
	}
}
