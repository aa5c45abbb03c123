package cpuuse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Widen lets a confined group's processes run on every CPU of the run
// (the reserved ones and this process's) until Narrow: for the work
// between loads that no load times, a browser's start, which then takes
// the run's cores instead of one (a warm browser's new context is not
// widened: measured, that cost as much as it saved). A group that
// is not confined is left as it is. Each Widen must be followed by a
// Narrow before a timed load.
func (g *Group) Widen() error {
	if !g.Confined() {
		return nil
	}
	s := g.meter.split
	all := formatCPUs(s.before)
	g.mu.Lock()
	g.wide = true // processes started from now on start on all of them
	g.mu.Unlock()
	// A v1 cpuset's CPUs are within its parent's: the run's twin first.
	for _, dir := range []*os.File{s.set.run, g.v1set} {
		if err := writeAt(dir, "cpuset.cpus", all); err != nil {
			return fmt.Errorf("cpu split: widen: %w", err)
		}
	}
	// Processes started through taskset keep its CPUs as their own
	// affinity, which a wider cpuset does not lift: lift it per thread.
	tids, err := g.threads()
	if err != nil {
		return fmt.Errorf("cpu split: widen: %w", err)
	}
	for _, tid := range tids {
		if err := unix.SchedSetaffinity(tid, &s.before); err != nil && !errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("cpu split: widen thread %d: %w", tid, err)
		}
	}
	return nil
}

// Narrow puts a confined group's processes back on the reserved CPUs
// (after Widen; nothing for a group not confined).
func (g *Group) Narrow() error {
	if !g.Confined() {
		return nil
	}
	s := g.meter.split
	reserved := formatCPUs(s.reserved)
	g.mu.Lock()
	g.wide = false
	g.mu.Unlock()
	for _, dir := range []*os.File{g.v1set, s.set.run} {
		if err := writeAt(dir, "cpuset.cpus", reserved); err != nil {
			return fmt.Errorf("cpu split: narrow: %w", err)
		}
	}
	return nil
}

// threads lists the thread IDs in the group's v1 cpuset (its tasks
// file).
func (g *Group) threads() ([]int, error) {
	fd, err := unix.Openat(int(g.v1set.Fd()), "tasks", unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("cgroup tasks: %w", err)
	}
	f := os.NewFile(uintptr(fd), "tasks")
	defer f.Close()
	text, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("cgroup tasks: %w", err)
	}
	var tids []int
	for _, field := range strings.Fields(string(text)) {
		if tid, err := strconv.Atoi(field); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}

// widened runs f with g widened (Widen) and narrows g after it, whatever
// f returned. The error is f's, or else Widen's or Narrow's; a group that
// could not be narrowed must not time a load.
func widened(g *Group, f func() error) error {
	werr := g.Widen()
	ferr := f()
	return errors.Join(ferr, werr, g.Narrow())
}

// WidenedStart runs start with g widened (Widen, then Narrow) and
// returns what it started. What started but could not be narrowed after
// is given to drop (closed) and not returned.
func WidenedStart[T any](g *Group, start func() (T, error), drop func(T)) (T, error) {
	return widenedStart(context.Background(), g, false, start, drop)
}

// SettledStart is WidenedStart that returns what started once g has
// settled (Settle, still widened): the browser's own start-up work ends
// before the load, on every CPU of the run. What could not settle within
// ctx is given to drop too.
func SettledStart[T any](ctx context.Context, g *Group, start func() (T, error), drop func(T)) (T, error) {
	return widenedStart(ctx, g, true, start, drop)
}

// widenedStart is WidenedStart, and SettledStart where settle is true.
func widenedStart[T any](ctx context.Context, g *Group, settle bool, start func() (T, error), drop func(T)) (T, error) {
	var v T
	started := false
	err := widened(g, func() (err error) {
		if v, err = start(); err != nil {
			return err
		}
		started = true
		if settle {
			_, _, err = g.Settle(ctx)
		}
		return err
	})
	if err != nil {
		if started {
			drop(v)
		}
		var none T
		return none, err
	}
	return v, nil
}
