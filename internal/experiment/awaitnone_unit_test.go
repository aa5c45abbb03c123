package experiment

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// TestAwaitNoneWaitsForZeroWithinItsLimit: a count that reaches zero on
// its fourth reading is awaited three polls; one that never does is given
// up at the limit; a failed reading and a canceled context end the wait.
func TestAwaitNoneWaitsForZeroWithinItsLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		readings := []int{2, 2, 1, 0}
		waited, none, err := awaitNone(t.Context(), func() (int, error) { n := readings[0]; readings = readings[1:]; return n, nil }, time.Second)
		if err != nil || !none || waited != 3*quicClosePoll {
			t.Errorf("reaching zero: waited %v, none %v, %v; want 3 polls, none", waited, none, err)
		}
		waited, none, err = awaitNone(t.Context(), func() (int, error) { return 1, nil }, 100*time.Millisecond)
		if err != nil || none || waited != 100*time.Millisecond {
			t.Errorf("never zero: waited %v, none %v, %v; want the 100 ms limit", waited, none, err)
		}
		bad := errors.New("no table")
		if _, none, err = awaitNone(t.Context(), func() (int, error) { return 0, bad }, time.Second); !errors.Is(err, bad) || none {
			t.Errorf("a failed reading: none %v, %v", none, err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		go func() { time.Sleep(12 * time.Millisecond); cancel() }()
		if _, none, err = awaitNone(ctx, func() (int, error) { return 1, nil }, time.Second); !errors.Is(err, context.Canceled) || none {
			t.Errorf("canceled: none %v, %v", none, err)
		}
	})
}
