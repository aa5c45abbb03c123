package cpuuse

import (
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
