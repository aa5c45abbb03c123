package cpuuse

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Waits are how long tasks waited for a CPU while they could have run,
// read at one moment: totals since each counter began.
type Waits struct {
	// Groups are the groups' CPU pressure ("some": the wall time at least
	// one of the group's tasks waited), by name; a group without a
	// cgroup, or on a kernel without pressure accounting, is absent.
	Groups map[string]time.Duration
	// Throttled is, by name, the time a limited group was held back by
	// its CPU limit (Group.Limit), summed over the CPUs it was held on.
	Throttled map[string]time.Duration
	// Self is quicbench's own waiting: its group's CPU pressure ("some")
	// where it runs in a group of its own (Meter's self), else its
	// threads' time on a run queue summed over its threads
	// (/proc/self/task/*/schedstat, which counts threads that waited
	// together once each); -1 when unreadable.
	Self time.Duration
	// Machine is the machine's CPU pressure ("some", /proc/pressure/cpu);
	// -1 without it.
	Machine time.Duration
}

// parsePressure reads the "some" line's total (µs) of a PSI file such as
// cpu.pressure: "some avg10=0.00 avg60=0.00 avg300=0.00 total=4751".
func parsePressure(data []byte) (time.Duration, error) {
	for line := range bytes.Lines(data) {
		fields := strings.Fields(string(line))
		if len(fields) == 0 || fields[0] != "some" {
			continue
		}
		for _, f := range fields[1:] {
			if v, ok := strings.CutPrefix(f, "total="); ok {
				usec, err := strconv.ParseInt(v, 10, 64)
				if err != nil || usec < 0 {
					return 0, fmt.Errorf("cpu pressure: total %q is no count of µs", v)
				}
				return time.Duration(usec) * time.Microsecond, nil
			}
		}
	}
	return 0, errors.New("cpu pressure: no \"some ... total=\" line")
}

// readPressure reads the pressure file f from its start.
func readPressure(f *os.File) (time.Duration, error) {
	buf := make([]byte, 256)
	n, err := f.ReadAt(buf, 0)
	if err != nil && n == 0 {
		return 0, err
	}
	return parsePressure(buf[:n])
}

// openPressure opens name under dirfd (cpu.pressure) without following a
// link; nil when it cannot be read (a kernel without PSI, or booted with
// psi=0, has the file but fails its read).
func openPressure(dirfd int, name string) *os.File {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), name)
	if _, err := readPressure(f); err != nil {
		f.Close()
		return nil
	}
	return f
}

// parseSchedstat reads the second field of a task's schedstat: "run_ns
// wait_ns timeslices", the time it spent waiting on a run queue.
func parseSchedstat(data []byte) (time.Duration, error) {
	fields := strings.Fields(string(data))
	if len(fields) < 2 {
		return 0, errors.New("schedstat: fewer than two fields")
	}
	ns, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil || ns < 0 {
		return 0, fmt.Errorf("schedstat: wait %q is no count of ns", fields[1])
	}
	return time.Duration(ns), nil
}

// selfWait sums the run-queue wait of this process's threads; tasks is
// /proc/self/task, read again from its start.
func selfWait(tasks *os.File) (time.Duration, error) {
	if _, err := tasks.Seek(0, 0); err != nil {
		return 0, err
	}
	names, err := tasks.Readdirnames(-1)
	if err != nil {
		return 0, err
	}
	var sum time.Duration
	buf := make([]byte, 128)
	for _, tid := range names {
		fd, err := unix.Openat(int(tasks.Fd()), tid+"/schedstat", unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err != nil {
			continue // the thread has exited
		}
		n, _ := unix.Read(fd, buf)
		unix.Close(fd)
		if n <= 0 {
			continue
		}
		wait, err := parseSchedstat(buf[:n])
		if err != nil {
			return 0, err
		}
		sum += wait
	}
	return sum, nil
}

// readWaits reads every wait counter the meter has; a counter it lacks
// reads as absent (groups) or -1.
func (m *Meter) readWaits(groups []*Group) Waits {
	w := Waits{Groups: map[string]time.Duration{}, Throttled: map[string]time.Duration{}, Self: -1, Machine: -1}
	if m.self != nil {
		if d, err := readPressure(m.self.pressure); err == nil {
			w.Self = d
		}
	} else if m.tasks != nil {
		if d, err := selfWait(m.tasks); err == nil {
			w.Self = d
		}
	}
	if m.pressure != nil {
		if d, err := readPressure(m.pressure); err == nil {
			w.Machine = d
		}
	}
	for _, g := range groups {
		if g.pressure != nil {
			if d, err := readPressure(g.pressure); err == nil {
				w.Groups[g.name] = d
			}
		}
		if d, ok := g.throttled(); ok {
			w.Throttled[g.name] = d
		}
	}
	return w
}

// Sub is the waiting since earlier: groups absent from either reading
// are absent, a counter unread in either is -1.
func (w Waits) Sub(earlier Waits) Waits {
	out := Waits{Groups: map[string]time.Duration{}, Throttled: map[string]time.Duration{}, Self: -1, Machine: -1}
	for name, d := range w.Groups {
		if e, ok := earlier.Groups[name]; ok {
			out.Groups[name] = d - e
		}
	}
	for name, d := range w.Throttled {
		out.Throttled[name] = d - earlier.Throttled[name]
	}
	if w.Self >= 0 && earlier.Self >= 0 {
		out.Self = w.Self - earlier.Self
	}
	if w.Machine >= 0 && earlier.Machine >= 0 {
		out.Machine = w.Machine - earlier.Machine
	}
	return out
}
