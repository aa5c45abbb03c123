package cpuuse

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/quicbench/quicbench/internal/proc"
)

// Limits: a limited group's CPU is capped per LimitPeriod.
const (
	// LimitPeriod is the period a CPU cap is enforced over: a group capped
	// at 0.5 cores may run 5 ms of every 10 ms. Short, so that a capped
	// browser runs slower rather than in 100 ms bursts.
	LimitPeriod = 10 * time.Millisecond
	// MinLimit is the smallest cap, in cores: the kernel refuses a quota
	// under 1 ms per period.
	MinLimit = 0.1
)

// limiter holds what capping groups needs, made on first use: the cpu
// controller in the run's cgroup v2 group, or, on a host that binds the
// cpu controller to a cgroup v1 hierarchy beside the v2 one, the run's
// twin group in that hierarchy.
type limiter struct {
	// v1 is the run's twin in the v1 cpu hierarchy; nil with the v2
	// controller.
	v1 *v1Twin
	// parentTurnedOn says the meter turned the cpu controller on in the
	// cgroup quicbench came from (enableV2), to be turned off again at
	// Close: a cgroup that hands a controller to its children may hold no
	// process, and quicbench goes back there.
	parentTurnedOn bool
	// err says why groups cannot be limited here.
	err error
}

// v1Twin is a run's group in a cgroup v1 hierarchy, named as its v2 group:
// parent is the group quicbench runs in there, run the run's.
type v1Twin struct {
	parent, run *os.File
}

// Cappable makes the group ready for caps (Limit) before its first
// process starts: on a host whose cpu controller is in cgroup v1, its
// processes then join the group's twin there as they start. A weight
// was tried beside it and dropped: on a kernel that does not preempt its
// own work, a tenth of the others' weight did not shorten the emulator's
// waits behind the browser (BENCHMARKS.md), and the build that gave it to
// every browser started a fresh one 30–70 ms slower.
func (g *Group) Cappable() error { return g.limitable() }

// Limit caps the group at cores of CPU time per wall time (0: no cap),
// from now on. A cap needs cgroups with the cpu controller and a group
// made Cappable before its processes started; Limit(0) on a group never
// capped does nothing.
func (g *Group) Limit(cores float64) error {
	if cores != 0 && cores < MinLimit {
		return fmt.Errorf("cpu limit: %g cores is below the least, %g", cores, MinLimit)
	}
	if cores == 0 && (g == nil || !g.capped) {
		return nil
	}
	if err := g.limitable(); err != nil {
		return err
	}
	period := LimitPeriod.Microseconds()
	quota := int64(cores * float64(period))
	g.capped = true
	if g.v1 != nil {
		if err := writeAt(g.v1, "cpu.cfs_period_us", strconv.FormatInt(period, 10)); err != nil {
			return err
		}
		if cores == 0 {
			return writeAt(g.v1, "cpu.cfs_quota_us", "-1")
		}
		return writeAt(g.v1, "cpu.cfs_quota_us", strconv.FormatInt(quota, 10))
	}
	text := fmt.Sprintf("max %d", period)
	if cores != 0 {
		text = fmt.Sprintf("%d %d", quota, period)
	}
	return writeAt(g.dir, "cpu.max", text)
}

// limitable makes the group ready for caps: the meter's limiter, and the
// group's v1 twin where the limiter uses one.
func (g *Group) limitable() error {
	if g == nil || g.dir == nil {
		return errors.New("cpu limit: groups are counted from /proc here, not in cgroups (run as root, or in a delegated cgroup)")
	}
	l := g.meter.limits()
	if l.err != nil {
		return l.err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if l.v1 == nil || g.v1 != nil {
		return nil
	}
	if g.started {
		return fmt.Errorf("cpu limit: %s's processes started before it was made cappable", g.name)
	}
	dir, err := l.v1.group(g.name, nil)
	if err != nil {
		return fmt.Errorf("cpu limit: %w", err)
	}
	g.v1 = dir
	return nil
}

// group makes and opens the twin's group name, writing each of set's
// control files (in order) before any process joins it.
func (t *v1Twin) group(name string, set [][2]string) (*os.File, error) {
	if err := unix.Mkdirat(int(t.run.Fd()), name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, fmt.Errorf("make v1 group %s: %w", name, err)
	}
	dir, err := openDir(int(t.run.Fd()), name)
	if err != nil {
		return nil, fmt.Errorf("v1 group %s: %w", name, err)
	}
	for _, kv := range set {
		if err := writeAt(dir, kv[0], kv[1]); err != nil {
			dir.Close()
			return nil, err
		}
	}
	return dir, nil
}

// CanCap reports whether a run started now could cap a process's CPU
// (Meter.CanLimit): nil if it could, else why not. It opens a meter to
// find out and closes it, leaving nothing behind.
func CanCap(log *slog.Logger) error {
	m, err := Open(log)
	if err != nil {
		return err
	}
	defer m.Close()
	return m.CanLimit()
}

// CanLimit says why groups cannot be capped here (nil when they can):
// Limit needs cgroups and the cpu controller.
func (m *Meter) CanLimit() error {
	if m.dir == nil {
		return fmt.Errorf("cpu limit: no cgroup for this run (%s)", m.why)
	}
	return m.limits().err
}

// limits is the meter's limiter, made on first use.
func (m *Meter) limits() *limiter {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.limiter == nil {
		m.limiter = m.newLimiter()
	}
	return m.limiter
}

// newLimiter turns on the cpu controller for the run's group, else makes
// the run's twin in the v1 cpu hierarchy; its err says why neither works.
func (m *Meter) newLimiter() *limiter {
	if m.dir == nil {
		return &limiter{err: errors.New("cpu limit: no cgroup for this run")}
	}
	parentTurnedOn, errV2 := m.enableV2()
	if errV2 == nil {
		return &limiter{parentTurnedOn: parentTurnedOn}
	}
	twin, errV1 := m.newV1Twin("cpu", nil)
	if errV1 == nil {
		return &limiter{v1: twin}
	}
	return &limiter{err: fmt.Errorf("cpu limit: no cpu controller here (cgroup v2: %v; v1: %v)", errV2, errV1)}
}

// enableV2 turns the cpu controller on for the run's group's children,
// and says whether it had to turn it on in the cgroup quicbench came from.
func (m *Meter) enableV2() (parentTurnedOn bool, err error) {
	have, err := readAt(m.parent, "cgroup.controllers")
	if err != nil {
		return false, err
	}
	if !hasWord(have, "cpu") {
		return false, errors.New("the cpu controller is not available in this process's cgroup")
	}
	if on, _ := readAt(m.parent, "cgroup.subtree_control"); !hasWord(on, "cpu") {
		if err := writeAt(m.parent, "cgroup.subtree_control", "+cpu"); err != nil {
			return false, fmt.Errorf("turn on cpu for this process's cgroup: %w", err)
		}
		parentTurnedOn = true
	}
	return parentTurnedOn, writeAt(m.dir, "cgroup.subtree_control", "+cpu")
}

// turnOffV2 turns the cpu controller off again where enableV2 turned it
// on, so that quicbench can go back to the cgroup it came from.
func (m *Meter) turnOffV2() {
	if m.limiter == nil || !m.limiter.parentTurnedOn || m.dir == nil {
		return
	}
	if err := writeAt(m.dir, "cgroup.subtree_control", "-cpu"); err != nil {
		m.log.Warn("cpu accounting: cpu controller left on", "group", m.name, "err", err)
	}
	if err := writeAt(m.parent, "cgroup.subtree_control", "-cpu"); err != nil {
		m.log.Warn("cpu accounting: cpu controller left on in quicbench's cgroup", "err", err)
	}
}

// newV1Twin makes the run's group, named as the v2 one, in the cgroup v1
// hierarchy that holds controller, writing set's control files first.
func (m *Meter) newV1Twin(controller string, set [][2]string) (*v1Twin, error) {
	path, err := ownV1Dir(controller)
	if err != nil {
		return nil, err
	}
	parent, err := openDir(unix.AT_FDCWD, path)
	if err != nil {
		return nil, err
	}
	t := &v1Twin{parent: parent}
	if t.run, err = (&v1Twin{run: parent}).group(m.name, set); err != nil {
		unix.Unlinkat(int(parent.Fd()), m.name, unix.AT_REMOVEDIR)
		parent.Close()
		return nil, fmt.Errorf("in %s: %w", path, err)
	}
	return t, nil
}

// hasWord says text has word among its words, separated by spaces or
// commas ("cpu,cpuacct", "cpu io").
func hasWord(text, word string) bool {
	return slices.Contains(strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == ',' }), word)
}

// moveTree puts process pid and its descendants into the group's v1
// twin: v1 has no way to start a process in a group, so a browser joins
// its twin just after it starts, with what it forked by then. Passes
// repeat until one finds nothing to move.
func (g *Group) moveTree(pid int) error {
	moved := map[int]bool{}
	for pass := 0; pass < 10; pass++ {
		todo := []int{}
		for _, p := range proc.Trees(proc.List(), []int{pid}) {
			if !moved[p.PID] {
				todo = append(todo, p.PID)
			}
		}
		if len(todo) == 0 {
			return nil
		}
		for _, p := range todo {
			for _, dir := range []*os.File{g.v1, g.v1set} {
				if dir == nil {
					continue
				}
				if err := writeAt(dir, "cgroup.procs", strconv.Itoa(p)); err != nil && !errors.Is(err, unix.ESRCH) {
					return fmt.Errorf("cpu limit: move process %d into %s: %w", p, g.name, err)
				}
			}
			moved[p] = true
		}
	}
	return nil
}

// throttled is the time the group's cap held it back, if it is capped
// by a controller that counts it.
func (g *Group) throttled() (time.Duration, bool) {
	if g.v1 != nil {
		data, err := readAt(g.v1, "cpu.stat")
		if err != nil {
			return 0, false
		}
		ns, ok := statField(data, "throttled_time")
		return time.Duration(ns), ok
	}
	if g.stat == nil {
		return 0, false
	}
	buf := make([]byte, 1024)
	n, _ := g.stat.ReadAt(buf, 0)
	usec, ok := statField(string(buf[:max(n, 0)]), "throttled_usec")
	return time.Duration(usec) * time.Microsecond, ok
}

// statField is the value of key in a cpu.stat's "key value" lines.
func statField(data, key string) (int64, bool) {
	for line := range strings.Lines(data) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if ok && k == key {
			n, err := strconv.ParseInt(v, 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// readAt reads the small file name under dir.
func readAt(dir *os.File, name string) (string, error) {
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return "", err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	buf := make([]byte, 4096)
	n, err := f.Read(buf)
	if err != nil && n == 0 {
		return "", err
	}
	return string(buf[:n]), nil
}

// writeAt writes text to the control file name under dir.
func writeAt(dir *os.File, name, text string) error {
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return fmt.Errorf("cgroup %s: %w", name, err)
	}
	defer unix.Close(fd)
	if _, err := unix.Write(fd, []byte(text)); err != nil {
		return fmt.Errorf("cgroup %s: write %q: %w", name, text, err)
	}
	return nil
}

// close removes the twin's run group and closes its files.
func (t *v1Twin) close(m *Meter) {
	if t == nil {
		return
	}
	t.run.Close()
	if err := unix.Unlinkat(int(t.parent.Fd()), m.name, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
		m.log.Warn("cpu limit: v1 cgroup left behind", "group", m.name, "err", err)
	}
	t.parent.Close()
}
