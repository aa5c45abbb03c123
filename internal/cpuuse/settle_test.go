package cpuuse

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// busyUntil is a group's CPU time that grows at one core until busy has
// passed since start, then by idle a second.
func busyUntil(start time.Time, busy time.Duration, idle float64) func() (time.Duration, error) {
	return func() (time.Duration, error) {
		el := time.Since(start)
		if el <= busy {
			return el, nil
		}
		return busy + time.Duration(idle*float64(el-busy)), nil
	}
}

// TestSettleWaitsForTheBrowsersOwnWork: a group busy for 3.5 s settles
// a window after it goes quiet; one already quiet after a window; one that
// never goes quiet is given up on at SettleLimit; a low steady use (2 %)
// counts as quiet, one of 10 % does not.
func TestSettleWaitsForTheBrowsersOwnWork(t *testing.T) {
	for _, c := range []struct {
		name     string
		busy     time.Duration
		idle     float64
		settled  bool
		min, max time.Duration
	}{
		{"start-up work", 3500 * time.Millisecond, 0, true, 3600 * time.Millisecond, 3650 * time.Millisecond},
		{"already quiet", 0, 0, true, SettleWindow, SettleWindow + settlePoll},
		{"quiet at 2 %", 0, 0.02, true, SettleWindow, SettleWindow + settlePoll},
		{"busy at 10 %", 0, 0.10, false, SettleLimit, SettleLimit + settlePoll},
		{"never quiet", time.Hour, 0, false, SettleLimit, SettleLimit + settlePoll},
	} {
		synctest.Test(t, func(t *testing.T) {
			waited, settled, err := settle(t.Context(), busyUntil(time.Now(), c.busy, c.idle))
			if err != nil || settled != c.settled || waited < c.min || waited > c.max {
				t.Errorf("%s: waited %v, settled %v, %v; want settled %v after %v to %v", c.name, waited, settled, err, c.settled, c.min, c.max)
			}
		})
	}
}

// TestSettleEndsWithItsContext: a canceled wait says so at once.
func TestSettleEndsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		waited, settled, err := settle(ctx, busyUntil(time.Now(), time.Hour, 0))
		if err == nil || settled || waited > time.Second+settlePoll {
			t.Errorf("waited %v, settled %v, err %v; want the context's end after a second", waited, settled, err)
		}
	})
}

// TestANilGroupHasSettled: nothing is measured, nothing is waited for.
func TestANilGroupHasSettled(t *testing.T) {
	var g *Group
	if waited, settled, err := g.Settle(context.Background()); waited != 0 || !settled || err != nil {
		t.Errorf("nil group: %v %v %v", waited, settled, err)
	}
}
