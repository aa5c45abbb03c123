package proc

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Info is a process as /proc/PID/stat describes it.
type Info struct {
	PID, PPID int
	// State is the stat's state letter: "R", "S", "Z" (zombie), ….
	State string
	// Comm is the command name (at most 15 bytes, as the kernel keeps it).
	Comm string
	// CPUTicks is the CPU time the process used, user and system, and
	// ChildTicks that of its children it has waited for, in clock ticks
	// (TicksPerSecond).
	CPUTicks, ChildTicks int64
}

// TicksPerSecond is the unit of /proc's CPU times (Linux's USER_HZ, 100
// on every architecture quicbench runs on).
const TicksPerSecond = 100

// List lists the processes of /proc; one that exits while it is read is
// left out. It is the one reader of /proc's process list in quicbench.
func List() []Info {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []Info
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if info, ok := stat(pid); ok {
			out = append(out, info)
		}
	}
	return out
}

// stat reads /proc/PID/stat: "pid (comm) state ppid ...", where comm may
// hold spaces and parentheses, so it ends at the last ')'.
func stat(pid int) (Info, bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return Info{}, false
	}
	open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return Info{}, false
	}
	rest := strings.Fields(string(data[end+1:]))
	if len(rest) < 2 {
		return Info{}, false
	}
	ppid, _ := strconv.Atoi(rest[1])
	info := Info{PID: pid, PPID: ppid, State: rest[0], Comm: string(data[open+1 : end])}
	// Fields 14 to 17 of stat (utime, stime, cutime, cstime) are rest[11:15].
	if len(rest) >= 15 {
		info.CPUTicks = atoi64(rest[11]) + atoi64(rest[12])
		info.ChildTicks = atoi64(rest[13]) + atoi64(rest[14])
	}
	return info, true
}

// Trees are the processes of list in the trees rooted at roots: the
// roots that are in list and every process below them.
func Trees(list []Info, roots []int) []Info {
	mine := make(map[int]bool, len(roots))
	for _, pid := range roots {
		mine[pid] = true
	}
	children := map[int][]Info{}
	var out []Info
	for _, p := range list {
		children[p.PPID] = append(children[p.PPID], p)
		if mine[p.PID] {
			out = append(out, p)
		}
	}
	for i := 0; i < len(out); i++ { // out grows as it is walked
		for _, c := range children[out[i].PID] {
			if !mine[c.PID] {
				mine[c.PID] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// atoi64 is s as a decimal integer, 0 if it is none.
func atoi64(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// Cmdline returns the arguments of pid, or nil for a zombie or a process
// that is gone.
func Cmdline(pid int) []string {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || len(data) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")
}

// NetNS is the network namespace of pid, such as "net:[4026532281]", or ""
// if it cannot be read.
func NetNS(pid int) string {
	link, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "ns", "net"))
	if err != nil {
		return ""
	}
	return link
}

// Using lists the live processes other than this one with an argument
// that contains s.
func Using(s string) []int {
	var out []int
	for _, p := range List() {
		if p.PID == os.Getpid() {
			continue
		}
		for _, arg := range Cmdline(p.PID) {
			if strings.Contains(arg, s) {
				out = append(out, p.PID)
				break
			}
		}
	}
	return out
}
