package experiment

import (
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/plan"
)

// TestTheTimeLeftWeighsTheTrialsToCome: a run whose light trials come
// first is not timed by them: the time left is the estimate of the
// trials to come at the pace the recorded ones kept against theirs, and
// a trial the stopping rule leaves out takes its estimate along.
func TestTheTimeLeftWeighsTheTrialsToCome(t *testing.T) {
	trials := []plan.Trial{{ID: "light-r1"}, {ID: "light-r2"}, {ID: "heavy-r1"}, {ID: "heavy-r2"}}
	p := newPace(trials, []time.Duration{time.Second, time.Second, 100 * time.Second, 100 * time.Second})
	if got := p.left(0); got != 202*time.Second {
		t.Errorf("before any trial: %s left, want the whole estimate, 3m22s", got)
	}
	p.recorded("light-r1")
	p.recorded("light-r2")
	// The light trials took 4 s against 2 s estimated: twice as slow.
	if got := p.left(4 * time.Second); got != 400*time.Second {
		t.Errorf("after the light trials, twice as slow as estimated: %s left, want 6m40s (the mean so far would say 4s)", got)
	}
	p.skipped("heavy-r2")
	if got := p.left(4 * time.Second); got != 200*time.Second {
		t.Errorf("a heavy trial left out: %s left, want 3m20s", got)
	}
	p.recorded("heavy-r1")
	if got := p.left(time.Minute); got != 0 {
		t.Errorf("nothing to run: %s left", got)
	}
}
