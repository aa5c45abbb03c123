package cpuuse

import (
	"context"
	"time"

	"github.com/quicbench/quicbench/internal/proc"
)

// A browser goes on working after it says it is ready. Firefox's remote
// agent listens 0.6 s after its start, yet its start-up work (built-in
// add-ons registering their listeners, the session store, the new-tab
// page, the experiments' targeting) keeps one core busy for about 3.5 s
// more (measured 2026-11-30 with Firefox 153 ESR on one core): a load
// begun then shares the browser's CPU with the browser's own start, and
// its PLT on one core doubled (0.89–1.06 s against 0.40–0.47 s for an
// 8 × 10 KB page at 20 ms). Settle waits for that work to end before a
// timed load.

// A group has settled when it used at most SettleMaxCPU of CPU time over
// the last SettleWindow; Settle gives up after SettleLimit (the load then
// runs, and the CPU-bound check says whether the browser's work weighed
// on it).
const (
	SettleWindow = 100 * time.Millisecond
	SettleMaxCPU = 5 * time.Millisecond
	SettleLimit  = 10 * time.Second
	// settlePoll is how often Settle reads the group.
	settlePoll = 25 * time.Millisecond
)

// settler decides from successive readings of a group's CPU time whether
// it has settled.
type settler struct {
	readings []cpuReading
}

// cpuReading is a group's CPU time at a moment.
type cpuReading struct {
	at  time.Time
	cpu time.Duration
}

// add notes that the group had used cpu by at, and reports whether it
// used at most SettleMaxCPU since the latest reading at least
// SettleWindow before at.
func (s *settler) add(at time.Time, cpu time.Duration) bool {
	base := -1
	for i, r := range s.readings {
		if at.Sub(r.at) >= SettleWindow {
			base = i
		}
	}
	s.readings = append(s.readings, cpuReading{at, cpu})
	if base < 0 {
		return false
	}
	settled := cpu-s.readings[base].cpu <= SettleMaxCPU
	s.readings = s.readings[base:] // older ones can no longer be the base
	return settled
}

// Settle waits until g has settled (at most SettleMaxCPU of CPU time over
// SettleWindow), ctx ends or SettleLimit passes. It returns how long it
// waited and whether g settled; a nil group has nothing to wait for.
func (g *Group) Settle(ctx context.Context) (time.Duration, bool, error) {
	if g == nil {
		return 0, true, nil
	}
	return settle(ctx, g.cpuTime)
}

// cpuTime is the group's CPU time now.
func (g *Group) cpuTime() (time.Duration, error) {
	var list []proc.Info
	if g.stat == nil {
		list = proc.List()
	}
	t, err := g.read(list)
	return t.Total(), err
}

// settle is Settle over read, the group's CPU time now.
func settle(ctx context.Context, read func() (time.Duration, error)) (time.Duration, bool, error) {
	start := time.Now()
	var s settler
	timer := time.NewTimer(settlePoll)
	defer timer.Stop()
	for {
		cpu, err := read()
		now := time.Now()
		if err != nil {
			return now.Sub(start), false, err
		}
		if s.add(now, cpu) {
			return now.Sub(start), true, nil
		}
		if now.Sub(start) >= SettleLimit {
			return now.Sub(start), false, nil
		}
		timer.Reset(settlePoll)
		select {
		case <-ctx.Done():
			return time.Since(start), false, ctx.Err()
		case <-timer.C:
		}
	}
}
