package cpuuse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/quicbench/quicbench/internal/proc"
)

// Reading is what a Meter read at one moment: every group's CPU time,
// quicbench's own process's, and the machine's.
type Reading struct {
	// At is when it was read.
	At time.Time
	// Groups are the groups' times, by name.
	Groups map[string]Times
	// Self is quicbench's own process: every thread, the emulator's
	// included.
	Self Times
	// Machine is the CPU time of every CPU since boot, busy and idle;
	// Reserved that of the CPUs ReserveCPUs kept (zero without them), Own
	// that of the run's own CPUs (MeasureOwnCPUs; zero without them).
	Machine, Reserved, Own MachineTimes
	// Waits are the parties' and the machine's waiting for a CPU.
	Waits Waits
}

// MachineTimes is the machine's CPU time over all its CPUs since boot.
type MachineTimes struct {
	// Idle is the time CPUs were idle or waiting for I/O; Total every
	// state's time, Idle included.
	Idle, Total time.Duration
}

// Read reads every group, quicbench's process and the machine.
func (m *Meter) Read() (Reading, error) {
	r := Reading{At: time.Now(), Groups: map[string]Times{}}
	var err error
	if r.Self, err = selfTimes(); err != nil {
		return r, err
	}
	if r.Machine, r.Reserved, r.Own, err = m.machineTimes(); err != nil {
		return r, err
	}
	m.mu.Lock()
	groups := append([]*Group(nil), m.groups...)
	m.mu.Unlock()
	if err := m.readGroups(groups, r.Groups); err != nil {
		return r, err
	}
	r.Waits = m.readWaits(groups)
	return r, nil
}

// readGroups reads each group's time into into, by name.
func (m *Meter) readGroups(groups []*Group, into map[string]Times) error {
	var list []proc.Info
	if m.method == MethodProc && len(groups) > 0 {
		list = proc.List()
	}
	for _, g := range groups {
		t, err := g.read(list)
		if err != nil {
			return err
		}
		into[g.name] = t
	}
	return nil
}

// read is the group's time now: its cpu.stat, or the sum over its trees
// in list.
func (g *Group) read(list []proc.Info) (Times, error) {
	if g.stat != nil {
		buf := make([]byte, 512)
		n, err := g.stat.ReadAt(buf, 0)
		if err != nil && n == 0 {
			return Times{}, fmt.Errorf("cpu accounting: read %s's cpu.stat: %w", g.name, err)
		}
		return parseCPUStat(buf[:n])
	}
	g.mu.Lock()
	g.roots = alive(list, g.roots) // a pid used again later is not ours
	ticks := treeTicks(list, g.roots)
	g.mu.Unlock()
	// /proc does not split children's time into user and system: all of
	// it is User here.
	return Times{User: time.Duration(ticks) * time.Second / proc.TicksPerSecond}, nil
}

// parseCPUStat reads user_usec and system_usec from a cgroup's cpu.stat.
func parseCPUStat(data []byte) (Times, error) {
	var t Times
	var found int
	for line := range bytes.Lines(data) {
		key, value, ok := strings.Cut(strings.TrimSpace(string(line)), " ")
		if !ok {
			continue
		}
		usec, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			continue
		}
		switch key {
		case "user_usec":
			t.User, found = time.Duration(usec)*time.Microsecond, found+1
		case "system_usec":
			t.System, found = time.Duration(usec)*time.Microsecond, found+1
		}
	}
	if found != 2 {
		return Times{}, errors.New("cpu accounting: cpu.stat lacks user_usec or system_usec")
	}
	return t, nil
}

// treeTicks sums the CPU ticks, their waited-for children's included, of
// the processes in list that are roots or descend from one.
func treeTicks(list []proc.Info, roots []int) int64 {
	var sum int64
	for _, p := range proc.Trees(list, roots) {
		sum += p.CPUTicks + p.ChildTicks
	}
	return sum
}

// alive keeps the pids of roots that are in list.
func alive(list []proc.Info, roots []int) []int {
	live := make(map[int]bool, len(list))
	for _, p := range list {
		live[p.PID] = true
	}
	return slices.DeleteFunc(roots, func(pid int) bool { return !live[pid] })
}

// selfTimes is this process's CPU time.
func selfTimes() (Times, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return Times{}, fmt.Errorf("cpu accounting: getrusage: %w", err)
	}
	return Times{User: time.Duration(ru.Utime.Nano()), System: time.Duration(ru.Stime.Nano())}, nil
}

// machineTimes reads /proc/stat: every CPU's times together, the
// reserved CPUs' (ReserveCPUs) and the run's own (MeasureOwnCPUs), zero
// where there are none.
func (m *Meter) machineTimes() (all, reserved, own MachineTimes, err error) {
	buf := make([]byte, 256)
	if m.split != nil || m.own.Count() > 0 {
		buf = make([]byte, 16384)
	}
	n, err := m.machine.ReadAt(buf, 0)
	if err != nil && n == 0 {
		return all, reserved, own, fmt.Errorf("cpu accounting: read /proc/stat: %w", err)
	}
	if all, err = parseProcStat(buf[:n]); err != nil {
		return all, reserved, own, err
	}
	if m.split != nil {
		if reserved, err = cpuSetTimes(buf[:n], &m.split.reserved); err != nil {
			return all, reserved, own, err
		}
	}
	if m.own.Count() > 0 {
		own, err = cpuSetTimes(buf[:n], &m.own)
	}
	return all, reserved, own, err
}

// cpuSetTimes sums the "cpuN" lines of /proc/stat's text for the CPUs in
// set.
func cpuSetTimes(stat []byte, set *unix.CPUSet) (MachineTimes, error) {
	var sum MachineTimes
	for line := range bytes.Lines(stat) {
		name, _, _ := bytes.Cut(line, []byte(" "))
		cpu, err := strconv.Atoi(strings.TrimPrefix(string(name), "cpu"))
		if !bytes.HasPrefix(name, []byte("cpu")) || err != nil || !set.IsSet(cpu) {
			continue
		}
		t, err := parseProcStat(append([]byte("cpu "), line[len(name):]...))
		if err != nil {
			return sum, err
		}
		sum.Idle, sum.Total = sum.Idle+t.Idle, sum.Total+t.Total
	}
	return sum, nil
}

// parseProcStat reads the "cpu" line of /proc/stat: user nice system idle
// iowait irq softirq steal ..., in clock ticks. Guest time is already in
// user and nice, so only the first eight fields add up to the total.
func parseProcStat(data []byte) (MachineTimes, error) {
	line, _, _ := bytes.Cut(data, []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) < 9 || fields[0] != "cpu" {
		return MachineTimes{}, errors.New("cpu accounting: /proc/stat has no cpu line")
	}
	var ticks [8]int64
	for i := range ticks {
		v, err := strconv.ParseInt(fields[i+1], 10, 64)
		if err != nil {
			return MachineTimes{}, fmt.Errorf("cpu accounting: /proc/stat: %q is no number", fields[i+1])
		}
		ticks[i] = v
	}
	var total int64
	for _, v := range ticks {
		total += v
	}
	tick := time.Second / proc.TicksPerSecond
	return MachineTimes{Idle: time.Duration(ticks[3]+ticks[4]) * tick, Total: time.Duration(total) * tick}, nil
}

// ownCgroupDir is the directory of the cgroup v2 group this process runs
// in: the cgroup2 mount's and the path /proc/self/cgroup gives.
func ownCgroupDir() (string, error) { return ownDir("") }

// ownV1Dir is the directory of this process's group in the cgroup v1
// hierarchy that holds controller.
func ownV1Dir(controller string) (string, error) { return ownDir(controller) }

// ownV1CPUDir is ownV1Dir of the cpu controller.
func ownV1CPUDir() (string, error) { return ownV1Dir("cpu") }

// ownDir is the directory of this process's group in the cgroup v1
// hierarchy of controller, or the cgroup2 one for "".
func ownDir(controller string) (string, error) {
	mount, root, err := cgroupMount(controller)
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(data)) {
		// "ID:CONTROLLERS:PATH"; the v2 hierarchy's is "0::PATH"
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 || (controller == "" != (parts[0] == "0" && parts[1] == "")) ||
			controller != "" && !hasWord(parts[1], controller) {
			continue
		}
		rel, ok := strings.CutPrefix(parts[2], root)
		if !ok {
			return "", fmt.Errorf("this process's cgroup %s is outside its mount's root %s", parts[2], root)
		}
		return filepath.Join(mount, rel), nil
	}
	if controller == "" {
		return "", errors.New("this process is in no cgroup v2 group")
	}
	return "", fmt.Errorf("this process is in no cgroup v1 %s group", controller)
}

// cgroup2Mount finds where cgroup2 is mounted, and the mount's root.
func cgroup2Mount() (mount, root string, err error) { return cgroupMount("") }

// cgroupMount finds the cgroup v1 mount of controller, or the cgroup2
// mount for "", and the mount's root.
func cgroupMount(controller string) (mount, root string, err error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if mount, root, ok := parseMountLine(sc.Text(), controller); ok {
			return mount, root, nil
		}
	}
	if controller == "" {
		return "", "", errors.New("no cgroup2 file system is mounted")
	}
	return "", "", fmt.Errorf("no cgroup v1 %s hierarchy is mounted", controller)
}

// parseMountLine reads a mountinfo line: "ID PARENT MAJ:MIN ROOT MOUNT
// OPTIONS [TAGS...] - FSTYPE SOURCE SUPER"; ok for a cgroup2 mount
// (controller "") or a cgroup v1 mount whose options name controller.
func parseMountLine(line, controller string) (mount, root string, ok bool) {
	head, tail, found := strings.Cut(line, " - ")
	fields, after := strings.Fields(head), strings.Fields(tail)
	if !found || len(fields) < 5 || len(after) < 1 {
		return "", "", false
	}
	switch {
	case controller == "" && after[0] == "cgroup2",
		controller != "" && after[0] == "cgroup" && len(after) >= 3 && hasWord(after[2], controller):
		return fields[4], fields[3], true
	}
	return "", "", false
}

// Snapshot is the CPU time of quicbench's process and of some groups at
// one moment: what Read reads of them, without the machine's times and
// the waits, cheap enough to take several times a second.
type Snapshot struct {
	// Self is quicbench's own process, every thread.
	Self Times
	// Groups are the named groups' times; a name the meter has no group
	// of is absent.
	Groups map[string]Times
}

// Snapshot reads quicbench's process and the groups named.
func (m *Meter) Snapshot(names ...string) (Snapshot, error) {
	s := Snapshot{Groups: make(map[string]Times, len(names))}
	var err error
	if s.Self, err = selfTimes(); err != nil {
		return s, err
	}
	var want []*Group
	m.mu.Lock()
	for _, g := range m.groups {
		if slices.Contains(names, g.name) {
			want = append(want, g)
		}
	}
	m.mu.Unlock()
	return s, m.readGroups(want, s.Groups)
}
