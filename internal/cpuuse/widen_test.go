package cpuuse

import (
	"context"
	"errors"
	"testing"
)

// TestWidenedStartGivesWhatStarted: on a group that is not confined
// (nil), WidenedStart returns what start made, or start's error and
// nothing, and drops nothing.
func TestWidenedStartGivesWhatStarted(t *testing.T) {
	dropped := 0
	drop := func(int) { dropped++ }
	v, err := WidenedStart(nil, func() (int, error) { return 7, nil }, drop)
	if v != 7 || err != nil {
		t.Errorf("a start: %d, %v", v, err)
	}
	failed := errors.New("no browser")
	v, err = WidenedStart(nil, func() (int, error) { return 3, failed }, drop)
	if v != 0 || !errors.Is(err, failed) {
		t.Errorf("a failed start: %d, %v", v, err)
	}
	if dropped != 0 {
		t.Errorf("%d dropped, want none", dropped)
	}
}

// TestSettledStartGivesWhatStartedOrDropsIt: on a group that is not
// measured (nil) SettledStart returns what start made at once; with its
// context ended before the group settled, what started is dropped and the
// error is the context's.
func TestSettledStartGivesWhatStartedOrDropsIt(t *testing.T) {
	dropped := 0
	drop := func(int) { dropped++ }
	if v, err := SettledStart(t.Context(), nil, func() (int, error) { return 7, nil }, drop); v != 7 || err != nil || dropped != 0 {
		t.Errorf("a start: %d, %v, %d dropped", v, err, dropped)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	g := &Group{} // measured by /proc, with no process: never read as settled before the context's end
	if v, err := SettledStart(ctx, g, func() (int, error) { return 3, nil }, drop); v != 0 || !errors.Is(err, context.Canceled) || dropped != 1 {
		t.Errorf("a start whose context ended: %d, %v, %d dropped; want the context's error and what started dropped", v, err, dropped)
	}
}
