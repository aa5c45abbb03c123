// Package cpuuse measures how much CPU each party of a page load used
// while the load was timed: the browser's processes, each server process,
// quicbench's own process (the emulator, the harness and whatever else
// runs in it), and how much of the machine stayed idle.
//
// A party that runs in processes of its own gets a group. Where quicbench
// may make cgroup v2 groups (root, or a delegated subtree) a group is a
// cgroup under quicbench's own: its processes start inside it (clone3's
// CLONE_INTO_CGROUP, so that no child forked early escapes) and its
// cpu.stat counts them, the exited ones too, in microseconds. Elsewhere a
// group is the process trees it was told of, read from /proc in clock
// ticks (10 ms), exited processes counted only once a member has waited
// for them. A Meter says which it used.
package cpuuse

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/quicbench/quicbench/internal/trust"
)

// Method is how a Meter counts its groups' CPU time.
type Method string

// The methods.
const (
	// MethodCgroup counts a group's processes in a cgroup v2 group.
	MethodCgroup Method = "cgroup2"
	// MethodProc sums the process trees' times in /proc.
	MethodProc Method = "proc"
)

// Times is CPU time used, user and system.
type Times struct {
	User, System time.Duration
}

// Total is user and system time together.
func (t Times) Total() time.Duration { return t.User + t.System }

// Sub is the time used since earlier.
func (t Times) Sub(earlier Times) Times {
	return Times{User: t.User - earlier.User, System: t.System - earlier.System}
}

// Meter is one run's CPU accounting: its groups, and the readers of
// quicbench's own and the machine's CPU time. Close removes its groups.
type Meter struct {
	method Method
	// why says why the method is MethodProc ("" for MethodCgroup).
	why string
	// parent is the cgroup quicbench runs in and dir the run's group in
	// it, named name (MethodCgroup only).
	parent, dir *os.File
	name        string
	// machine is /proc/stat, read again from its start at every Read.
	machine *os.File
	// tasks is /proc/self/task and pressure /proc/pressure/cpu (nil
	// without PSI), for Waits.
	tasks, pressure *os.File
	log             *slog.Logger

	// self is quicbench's own group (MethodCgroup, where this process
	// could move into it): the process joins it at Open and goes back to
	// parent at Close, so that its waiting for a CPU is its group's CPU
	// pressure, as every party's is. Nil: its threads' run-queue time.
	self *Group

	mu     sync.Mutex
	groups []*Group
	// limiter caps groups, made on first use (limit.go); split keeps
	// CPUs for confined groups (split.go).
	limiter *limiter
	split   *split
	// own are the CPUs the run has to itself (MeasureOwnCPUs); empty: none.
	own unix.CPUSet
}

// Group is a party's processes.
type Group struct {
	name  string
	meter *Meter
	// dir and stat are the cgroup's directory and cpu.stat, pressure its
	// cpu.pressure (nil without PSI) (MethodCgroup).
	dir, stat, pressure *os.File

	mu    sync.Mutex
	roots []int // the trees' first processes (MethodProc)
	// v1 is the group's twin in the cgroup v1 cpu hierarchy, where the
	// meter caps groups there (limit.go); v1set its twin in the v1 cpuset
	// hierarchy, once confined to the reserved CPUs (split.go).
	v1, v1set *os.File
	// capped says a cap was written (Limit); started that a process of
	// the group started (Started); wide that it runs on all the run's
	// CPUs for a while (Widen).
	capped, started, wide bool
}

// Open starts a run's accounting: a cgroup named after this process in
// the cgroup quicbench runs in if it may make one there and start a
// process in it, else the /proc method (Why says why). log receives what
// Close could not remove.
func Open(log *slog.Logger) (*Meter, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	machine, err := os.Open("/proc/stat")
	if err != nil {
		return nil, fmt.Errorf("cpu accounting: %w", err)
	}
	m := &Meter{method: MethodProc, machine: machine, log: log}
	m.tasks, _ = os.Open("/proc/self/task")
	m.pressure = openPressure(unix.AT_FDCWD, "/proc/pressure/cpu")
	if err := m.openCgroup(); err != nil {
		m.why = err.Error()
	}
	return m, nil
}

// openCgroup makes the run's cgroup and checks that a process starts in
// it; on error it leaves nothing behind.
func (m *Meter) openCgroup() (err error) {
	parentPath, err := ownCgroupDir()
	if err != nil {
		return err
	}
	parent, err := openDir(unix.AT_FDCWD, parentPath)
	if err != nil {
		return fmt.Errorf("cgroup %s: %w", parentPath, err)
	}
	name := fmt.Sprintf("%s%d-%d", groupPrefix, os.Getpid(), time.Now().UnixNano())
	if err := unix.Mkdirat(int(parent.Fd()), name, 0o755); err != nil {
		parent.Close()
		return fmt.Errorf("cannot make a cgroup in %s: %w", parentPath, err)
	}
	m.parent, m.name = parent, name
	defer func() {
		if err != nil {
			m.removeRunGroup()
		}
	}()
	if m.dir, err = openDir(int(parent.Fd()), name); err != nil {
		return fmt.Errorf("cgroup %s/%s: %w", parentPath, name, err)
	}
	m.method = MethodCgroup
	if err := m.probe(); err != nil {
		m.method = MethodProc
		return fmt.Errorf("cannot start a process in a cgroup: %w", err)
	}
	m.joinSelf()
	return nil
}

// selfGroup names quicbench's own group in the run's.
const selfGroup = "quicbench"

// joinSelf moves this process into a group of its own in the run's, whose
// CPU pressure is then quicbench's waiting (the emulator's and the
// harness's threads); where it cannot, quicbench stays where it is and its
// threads' run-queue time stands in.
func (m *Meter) joinSelf() {
	g, err := m.newCgroup(selfGroup)
	if err != nil {
		m.log.Debug("cpu accounting: quicbench stays in its cgroup", "err", err)
		return
	}
	if g.pressure == nil {
		g.remove()
		return
	}
	if err := writeAt(g.dir, "cgroup.procs", strconv.Itoa(os.Getpid())); err != nil {
		m.log.Debug("cpu accounting: quicbench stays in its cgroup", "err", err)
		g.remove()
		return
	}
	m.self = g
}

// leaveSelf moves this process back to the cgroup it came from and
// removes its own group.
func (m *Meter) leaveSelf() {
	if m.self == nil {
		return
	}
	if err := writeAt(m.parent, "cgroup.procs", strconv.Itoa(os.Getpid())); err != nil {
		m.log.Warn("cpu accounting: quicbench could not go back to its cgroup", "err", err)
	}
	m.self.remove()
	m.self = nil
}

// probe starts true(1) in a group of its own and removes the group.
func (m *Meter) probe() error {
	g, err := m.newCgroup("probe")
	if err != nil {
		return err
	}
	defer g.remove()
	path, err := trust.LookPath("true")
	if err != nil {
		return nil // nothing to start; CLONE_INTO_CGROUP is tried by the first party
	}
	cmd := exec.Command(path)
	g.Prepare(cmd)
	return cmd.Run()
}

// groupPrefix starts the name of every run's cgroup; the process id
// follows.
const groupPrefix = "quicbench-"

// Method is how the meter counts its groups' CPU time.
func (m *Meter) Method() Method { return m.method }

// Why says why the meter reads /proc rather than cgroups ("" when it uses
// cgroups).
func (m *Meter) Why() string { return m.why }

// Group returns the group of the party name, making it on first use.
// Names are short words such as "client-chromium" or "server-nginx".
func (m *Meter) Group(name string) (*Group, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, g := range m.groups {
		if g.name == name {
			return g, nil
		}
	}
	g := &Group{name: name, meter: m}
	if m.method == MethodCgroup {
		var err error
		if g, err = m.newCgroup(name); err != nil {
			return nil, err
		}
	}
	m.groups = append(m.groups, g)
	return g, nil
}

// newCgroup makes the cgroup name in the run's group and opens it.
func (m *Meter) newCgroup(name string) (*Group, error) {
	if err := unix.Mkdirat(int(m.dir.Fd()), name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, fmt.Errorf("cpu accounting: make cgroup %s: %w", name, err)
	}
	dir, err := openDir(int(m.dir.Fd()), name)
	if err != nil {
		return nil, fmt.Errorf("cpu accounting: cgroup %s: %w", name, err)
	}
	fd, err := unix.Openat(int(dir.Fd()), "cpu.stat", unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		dir.Close()
		return nil, fmt.Errorf("cpu accounting: cgroup %s: cpu.stat: %w", name, err)
	}
	return &Group{name: name, meter: m, dir: dir, stat: os.NewFile(uintptr(fd), "cpu.stat"),
		pressure: openPressure(int(dir.Fd()), "cpu.pressure")}, nil
}

// Name is the group's party name.
func (g *Group) Name() string {
	if g == nil {
		return ""
	}
	return g.name
}

// Prepare makes cmd, not yet started, start in the group (MethodCgroup;
// nothing otherwise, nor on a nil group), and on the reserved CPUs if the
// group is confined (Confine). Call it after anything else that sets
// cmd.SysProcAttr or wraps cmd.
func (g *Group) Prepare(cmd *exec.Cmd) {
	if g == nil || g.dir == nil {
		return
	}
	if g.v1set != nil {
		g.mu.Lock()
		cpus := g.meter.split.reserved
		if g.wide {
			cpus = g.meter.split.before
		}
		g.mu.Unlock()
		g.meter.split.wrap(cmd, cpus)
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.UseCgroupFD = true
	cmd.SysProcAttr.CgroupFD = int(g.dir.Fd())
}

// Started tells the group of a process it started: MethodProc counts the
// process and its descendants, and a group capped in a cgroup v1 twin
// (Limit) moves them there. Nil-safe.
func (g *Group) Started(pid int) error {
	if g == nil || pid <= 0 {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.started = true
	if g.v1 != nil || g.v1set != nil {
		return g.moveTree(pid)
	}
	if g.dir == nil {
		g.roots = append(g.roots, pid)
	}
	return nil
}

// Close removes the run's groups; a group whose processes are still
// exiting is waited for up to 2 s, then left (RemoveStale removes it
// later) and logged.
func (m *Meter) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, g := range m.groups {
		g.remove()
	}
	m.groups = nil
	if m.limiter != nil {
		m.limiter.v1.close(m)
	}
	m.split.undo(m)
	m.turnOffV2()
	m.leaveSelf()
	m.removeRunGroup()
	m.machine.Close()
	for _, f := range []*os.File{m.tasks, m.pressure} {
		if f != nil {
			f.Close()
		}
	}
}

// remove closes the group's files and removes its cgroup, waiting up to
// 2 s for it to empty.
func (g *Group) remove() {
	if g.dir == nil {
		return
	}
	g.stat.Close()
	if g.pressure != nil {
		g.pressure.Close()
	}
	g.dir.Close()
	g.dir = nil
	m := g.meter
	removeWaiting(m.dir, g.name, m.name, m.log)
	if g.v1 != nil {
		g.v1.Close()
		g.v1 = nil
		removeWaiting(m.limiter.v1.run, g.name, "v1 cpu "+m.name, m.log)
	}
	if g.v1set != nil {
		g.v1set.Close()
		g.v1set = nil
		removeWaiting(m.split.set.run, g.name, "v1 cpuset "+m.name, m.log)
	}
}

// removeWaiting removes the cgroup name under dir, waiting up to 2 s for
// its processes to leave it; what it cannot remove it logs.
func removeWaiting(dir *os.File, name, run string, log *slog.Logger) {
	var err error
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		err = unix.Unlinkat(int(dir.Fd()), name, unix.AT_REMOVEDIR)
		if err == nil || !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
			break
		}
	}
	if err != nil && !errors.Is(err, unix.ENOENT) {
		log.Warn("cpu accounting: cgroup left behind", "group", run+"/"+name, "err", err)
	}
}

// removeRunGroup removes the run's (empty) cgroup and closes its files.
func (m *Meter) removeRunGroup() {
	if m.parent == nil {
		return
	}
	if m.dir != nil {
		m.dir.Close()
		m.dir = nil
	}
	if err := unix.Unlinkat(int(m.parent.Fd()), m.name, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
		m.log.Warn("cpu accounting: cgroup left behind", "group", m.name, "err", err)
	}
	m.parent.Close()
	m.parent = nil
}

// openDir opens the directory name under dirfd without following a link.
func openDir(dirfd int, name string) (*os.File, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

// RemoveStale removes the cgroups of runs whose process is gone (a run
// killed with SIGKILL cannot remove its own) from the cgroup this process
// runs in and from its cgroup v1 cpu group (Limit's twins), and lists
// them. A group that still holds processes is left.
func RemoveStale() []string {
	var removed []string
	for _, own := range []func() (string, error){homeCgroupDir, ownV1CPUDir, func() (string, error) { return ownV1Dir("cpuset") }} {
		if parentPath, err := own(); err == nil {
			removed = append(removed, removeStaleIn(parentPath)...)
		}
	}
	return removed
}

// homeCgroupDir is the cgroup v2 directory this process runs in, or, while
// a meter of this process has it in its own group (selfGroup in a run's
// group), the one it came from.
func homeCgroupDir() (string, error) {
	dir, err := ownCgroupDir()
	if err != nil {
		return "", err
	}
	run := filepath.Dir(dir)
	if filepath.Base(dir) == selfGroup && strings.HasPrefix(filepath.Base(run), fmt.Sprintf("%s%d-", groupPrefix, os.Getpid())) {
		return filepath.Dir(run), nil
	}
	return dir, nil
}

// removeStaleIn removes the run groups of dead processes in parentPath.
func removeStaleIn(parentPath string) []string {
	parent, err := openDir(unix.AT_FDCWD, parentPath)
	if err != nil {
		return nil
	}
	defer parent.Close()
	names, _ := parent.Readdirnames(-1)
	var removed []string
	for _, name := range names {
		pidText, _, _ := strings.Cut(strings.TrimPrefix(name, groupPrefix), "-")
		pid, err := strconv.Atoi(pidText)
		if !strings.HasPrefix(name, groupPrefix) || err != nil || pid <= 0 || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue // not a run's, or its process lives
		}
		if removeTree(int(parent.Fd()), name) == nil {
			removed = append(removed, filepath.Join(parentPath, name))
		}
	}
	return removed
}

// removeTree removes the cgroup name under dirfd and the groups in it.
func removeTree(dirfd int, name string) error {
	dir, err := openDir(dirfd, name)
	if err != nil {
		return err
	}
	entries, _ := dir.ReadDir(-1)
	for _, e := range entries {
		if e.IsDir() {
			removeTree(int(dir.Fd()), e.Name())
		}
	}
	dir.Close()
	return unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR)
}
