package cpuuse

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/quicbench/quicbench/internal/trust"
)

// split is the machine's CPUs divided between the groups that Confine
// (the browser) and this process with what it starts (the emulator, the
// servers, the harness).
type split struct {
	// set is the run's group in the v1 cpuset hierarchy; mems its memory
	// nodes, the parent's.
	set  *v1Twin
	mems string
	// reserved are the confined groups' CPUs, rest this process's, before
	// its CPUs before ReserveCPUs.
	reserved, rest, before unix.CPUSet
	// taskset is util-linux's taskset, which starts a confined group's
	// processes on the reserved CPUs (a cgroup v1 group cannot be entered
	// at the fork, as CLONE_INTO_CGROUP enters a v2 one).
	taskset string
}

// ReserveCPUs keeps the last n of the CPUs this process may use for the
// groups that Confine, and moves every thread of this process to the
// others until Close; processes it starts from then on (servers) inherit
// them. A weight cannot do this: on a kernel that does not preempt its
// own work (PREEMPT_NONE), a browser busy in a system call holds its CPU
// whatever its weight, and the emulator's packets wait behind it. It
// needs more than n CPUs and the cgroup v1 cpuset hierarchy; it returns
// the reserved CPUs as a list ("1").
func (m *Meter) ReserveCPUs(n int) (string, error) {
	if m.dir == nil {
		return "", errors.New("cpu split: no cgroup for this run")
	}
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		return "", fmt.Errorf("cpu split: %w", err)
	}
	cpus := CPUList(before)
	if n < 1 || len(cpus) <= n {
		return "", fmt.Errorf("cpu split: %d CPUs for the client need at least %d, this process may use %d", n, n+1, len(cpus))
	}
	taskset, err := trust.LookPath("taskset")
	if err != nil {
		return "", fmt.Errorf("cpu split: the 'taskset' command: %w (install util-linux)", err)
	}
	s := &split{before: before, taskset: taskset}
	for i, c := range cpus {
		if i < len(cpus)-n {
			s.rest.Set(c)
		} else {
			s.reserved.Set(c)
		}
	}
	parentPath, err := ownV1Dir("cpuset")
	if err != nil {
		return "", fmt.Errorf("cpu split: %w", err)
	}
	mems, err := os.ReadFile(parentPath + "/cpuset.mems")
	if err != nil {
		return "", fmt.Errorf("cpu split: %w", err)
	}
	s.mems = strings.TrimSpace(string(mems))
	if s.set, err = m.newV1Twin("cpuset", [][2]string{{"cpuset.cpus", formatCPUs(s.reserved)}, {"cpuset.mems", s.mems}}); err != nil {
		return "", fmt.Errorf("cpu split: %w", err)
	}
	m.mu.Lock()
	m.split = s
	m.mu.Unlock()
	if err := setOwnAffinity(m.tasks, &s.rest); err != nil {
		return "", fmt.Errorf("cpu split: %w", err)
	}
	return formatCPUs(s.reserved), nil
}

// Confine makes the group's processes started from now on run on the
// CPUs ReserveCPUs kept (an error without them).
func (g *Group) Confine() error {
	if g == nil || g.meter.split == nil {
		return errors.New("cpu split: no CPUs reserved")
	}
	s := g.meter.split
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.v1set != nil {
		return nil
	}
	dir, err := s.set.group(g.name, [][2]string{{"cpuset.cpus", formatCPUs(s.reserved)}, {"cpuset.mems", s.mems}})
	if err != nil {
		return fmt.Errorf("cpu split: %w", err)
	}
	g.v1set = dir
	return nil
}

// wrap makes cmd, not yet started, start on cpus (the reserved CPUs, or
// all the run's while its group is widened).
func (s *split) wrap(cmd *exec.Cmd, cpus unix.CPUSet) {
	cmd.Args = append([]string{"taskset", "--cpu-list", formatCPUs(cpus), cmd.Path}, cmd.Args[1:]...)
	cmd.Path = s.taskset
}

// Confined says the group runs on CPUs of its own (Confine).
func (g *Group) Confined() bool { return g != nil && g.v1set != nil }

// OnItsCPUs is f run on the group's CPUs when it is confined (on an OS
// thread of its own for the while; f as it is otherwise): for the work of
// this process that serves the group, such as removing a closed browser's
// profile, whose kernel time would otherwise hold up the emulator's CPUs.
func (g *Group) OnItsCPUs(f func()) func() {
	if g == nil || g.v1set == nil {
		return f
	}
	s := g.meter.split
	return func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := unix.SchedSetaffinity(0, &s.reserved); err != nil {
			f()
			return
		}
		defer unix.SchedSetaffinity(0, &s.rest)
		f()
	}
}

// undo gives this process its CPUs back and removes the cpuset twin.
func (s *split) undo(m *Meter) {
	if s == nil {
		return
	}
	if err := setOwnAffinity(m.tasks, &s.before); err != nil {
		m.log.Warn("cpu split: this process keeps fewer CPUs", "err", err)
	}
	s.set.close(m)
	m.split = nil
}

// PinProcess moves every thread of this process onto set (a run on
// cores of its own); what it starts from then on inherits them.
func PinProcess(set *unix.CPUSet) error {
	tasks, err := os.Open("/proc/self/task")
	if err != nil {
		return err
	}
	defer tasks.Close()
	return setOwnAffinity(tasks, set)
}

// setOwnAffinity puts every thread of this process (tasks is
// /proc/self/task) on set. It goes over the threads until a pass finds
// none it had not moved, so that a thread the runtime started meanwhile
// (from one not yet moved) is moved too.
func setOwnAffinity(tasks *os.File, set *unix.CPUSet) error {
	if tasks == nil {
		return errors.New("no /proc/self/task")
	}
	moved := map[int]bool{}
	for range maxAffinityPasses {
		if _, err := tasks.Seek(0, 0); err != nil {
			return err
		}
		names, err := tasks.Readdirnames(-1)
		if err != nil {
			return err
		}
		fresh := 0
		for _, name := range names {
			tid, err := strconv.Atoi(name)
			if err != nil || moved[tid] {
				continue
			}
			if err := unix.SchedSetaffinity(tid, set); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("thread %d: %w", tid, err)
			}
			moved[tid], fresh = true, fresh+1
		}
		if fresh == 0 {
			return nil
		}
	}
	return errors.New("threads kept starting while they were being moved")
}

// maxAffinityPasses bounds setOwnAffinity's passes over the threads.
const maxAffinityPasses = 10

// CPUList are the CPUs of set, ascending.
func CPUList(set unix.CPUSet) []int {
	var out []int
	for c := 0; len(out) < set.Count(); c++ {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out
}

// formatCPUs is set as cpuset.cpus writes it: "1" or "2,3".
func formatCPUs(set unix.CPUSet) string {
	var parts []string
	for _, c := range CPUList(set) {
		parts = append(parts, strconv.Itoa(c))
	}
	return strings.Join(parts, ",")
}

// MeasureOwnCPUs says which CPUs the run has to itself (a run on cores of
// its own), so that readings from now on carry their busy time
// (Reading.Own, Usage.OwnBusy): what others did there.
func (m *Meter) MeasureOwnCPUs(cpus []int) {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	m.mu.Lock()
	m.own = set
	m.mu.Unlock()
}

// HasOwnCPUs says the run has CPUs of its own (MeasureOwnCPUs).
func (m *Meter) HasOwnCPUs() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.own.Count() > 0
}
