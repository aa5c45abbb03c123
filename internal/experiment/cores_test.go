package experiment

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/quicbench/quicbench/internal/cpuuse"
	"github.com/quicbench/quicbench/internal/testenv"
)

// TestCoresAreClaimedApart: a claim of one CPU moves every thread of the
// process onto it; a claim of every CPU then waits and gives up naming
// the holder; a claim of one takes the other CPU; letting go moves the
// threads back. (The claims after the first stand for another run's: a
// claim chooses among the CPUs its process may use.)
func TestCoresAreClaimedApart(t *testing.T) {
	testenv.RequireRoot(t)
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Fatal(err)
	}
	if before.Count() < 2 {
		t.Skip("needs 2 CPUs")
	}
	log := slog.New(slog.DiscardHandler)
	first, err := claimCores(t.Context(), log, 1, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := threadCPUs(t); got != first.CoresText() {
		t.Errorf("threads on CPUs %q after claiming %q", got, first.CoresText())
	}
	// the claims that follow are another run's: a process on every CPU
	if err := cpuuse.PinProcess(&before); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = claimCores(t.Context(), log, before.Count(), 1200*time.Millisecond)
	var held *LockHeldError
	if !errors.As(err, &held) || time.Since(start) < time.Second || !strings.Contains(held.Holder, fmt.Sprintf("pid %d ", os.Getpid())) {
		t.Errorf("claiming every CPU beside a claim: %v after %v; want it held by this process", err, time.Since(start))
	}
	second, err := claimCores(t.Context(), log, 1, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if second.CoresText() == first.CoresText() {
		t.Errorf("two claims of one CPU both took %s", first.CoresText())
	}
	second.release()
	first.release()
	var after unix.CPUSet
	unix.SchedGetaffinity(0, &after)
	if after != before {
		t.Errorf("after letting go the threads may use %v, before %v", cpuuse.CPUList(after), cpuuse.CPUList(before))
	}
	var in *InputError
	if _, err := claimCores(t.Context(), log, before.Count()+1, time.Second); !errors.As(err, &in) {
		t.Errorf("more cores than the machine has: %v, want an input error", err)
	}
}

// threadCPUs is the CPUs every thread of this process may use, as
// CoresText gives them, or "differ" when the threads disagree.
func threadCPUs(t *testing.T) string {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	seen := ""
	for _, e := range entries {
		var tid int
		fmt.Sscan(e.Name(), &tid)
		var set unix.CPUSet
		if unix.SchedGetaffinity(tid, &set) != nil {
			continue
		}
		if got := joinCPUs(cpuuse.CPUList(set)); seen == "" {
			seen = got
		} else if got != seen {
			return "differ"
		}
	}
	return seen
}

// TestRunsWithCoresShareTheMachineLock: runs with cores of their own take
// the machine's lock shared, side by side; a run of the whole machine
// waits for them, and they for it.
func TestRunsWithCoresShareTheMachineLock(t *testing.T) {
	testenv.RequireRoot(t)
	dir, log := t.TempDir(), slog.New(slog.DiscardHandler)
	a, err := lockMachine(t.Context(), log, dir, time.Second, true)
	if err != nil {
		t.Fatal(err)
	}
	b, err := lockMachine(t.Context(), log, dir, time.Second, true)
	if err != nil {
		t.Fatalf("a second shared hold: %v", err)
	}
	var held *LockHeldError
	if _, err := lockMachine(t.Context(), log, dir, 1100*time.Millisecond, false); !errors.As(err, &held) {
		t.Errorf("the whole machine beside runs with cores: %v, want it to wait and give up", err)
	}
	a()
	b()
	whole, err := lockMachine(t.Context(), log, dir, time.Second, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockMachine(t.Context(), log, dir, 1100*time.Millisecond, true); !errors.As(err, &held) {
		t.Errorf("a run with cores beside the whole machine's: %v, want it to wait and give up", err)
	}
	whole()
}
