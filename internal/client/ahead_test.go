package client

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// slowBuild makes value after d, or fails when its context ends first.
func slowBuild(value string, d time.Duration) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		select {
		case <-time.After(d):
			return value, nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

func TestAheadTakeWaitsForTheValueOfItsKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var a Ahead[string]
		var discarded []string
		a.Start("h3", slowBuild("browser", 300*time.Millisecond), func(v string) { discarded = append(discarded, v) })
		time.Sleep(100 * time.Millisecond) // the harness's work after a load
		val, took, ok, err := a.Take(t.Context(), "h3")
		if err != nil || !ok || val != "browser" {
			t.Fatalf("Take = %q, ok %v, err %v; want the browser", val, ok, err)
		}
		if took != 300*time.Millisecond {
			t.Errorf("took %v, want 300ms: the making's own time, not the wait", took)
		}
		if len(discarded) != 0 {
			t.Errorf("a taken value was discarded: %v", discarded)
		}
		if _, _, ok, _ := a.Take(t.Context(), "h3"); ok {
			t.Error("a value was taken twice")
		}
	})
}

func TestAheadDiscardsAValueOfAnotherKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var a Ahead[string]
		var discarded []string
		a.Start("h3", slowBuild("h3 browser", 50*time.Millisecond), func(v string) { discarded = append(discarded, v) })
		time.Sleep(100 * time.Millisecond) // made by the time the load asks
		_, _, ok, err := a.Take(t.Context(), "h2")
		if ok || err != nil {
			t.Fatalf("Take of another key: ok %v, err %v; want not ok, no error", ok, err)
		}
		if len(discarded) != 1 || discarded[0] != "h3 browser" {
			t.Errorf("discarded %v, want the h3 browser once", discarded)
		}
	})
}

func TestAheadStartAndDiscardThrowAwayWhatIsBeingMade(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var a Ahead[string]
		var discarded []string
		discard := func(v string) { discarded = append(discarded, v) }
		canceled := false
		a.Start("h3", func(ctx context.Context) (string, error) {
			<-ctx.Done() // a start that only ends when canceled
			canceled = true
			return "", ctx.Err()
		}, discard)
		a.Start("h2", slowBuild("h2 browser", 10*time.Millisecond), discard)
		if !canceled {
			t.Error("a second Start did not cancel the first making")
		}
		time.Sleep(time.Second)
		a.Discard()
		if len(discarded) != 1 || discarded[0] != "h2 browser" {
			t.Errorf("discarded %v, want only the made h2 browser (a failed making cleans up itself)", discarded)
		}
		a.Discard() // nothing left: no second discard
		if len(discarded) != 1 {
			t.Errorf("Discard of nothing discarded %v", discarded)
		}
	})
}

func TestAheadTakeOfAFailedMakingIsNotOK(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var a Ahead[string]
		a.Start("h3", func(context.Context) (string, error) { return "", errors.New("no browser") },
			func(v string) { t.Errorf("discarded %q of a failed making", v) })
		if _, _, ok, err := a.Take(t.Context(), "h3"); ok || err != nil {
			t.Errorf("Take of a failed making: ok %v, err %v; want not ok, no error (the load starts its own)", ok, err)
		}
	})
}

func TestAheadTakeStopsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var a Ahead[string]
		var discarded []string
		a.Start("h3", slowBuild("browser", time.Hour), func(v string) { discarded = append(discarded, v) })
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start := time.Now()
		_, _, ok, err := a.Take(ctx, "h3")
		if ok || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Take past its context: ok %v, err %v; want the context's error", ok, err)
		}
		if waited := time.Since(start); waited != time.Second {
			t.Errorf("Take waited %v, want the context's 1s", waited)
		}
		if len(discarded) != 0 {
			t.Errorf("discarded %v: the canceled making made nothing", discarded)
		}
	})
}
