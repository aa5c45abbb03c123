package cpuuse

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/quicbench/quicbench/internal/proc"
	"github.com/quicbench/quicbench/internal/testenv"
)

// spin is a shell command that keeps one CPU busy until killed.
const spin = `while :; do :; done`

// TestALimitedGroupGetsItsShareAndWaitsTheRest: a group capped at half a
// core, whose process spins, uses about half a core; its cap's holding
// back shows as throttled time and as waiting in its CPU pressure; a
// group whose process started before it was made cappable refuses a cap.
func TestALimitedGroupGetsItsShareAndWaitsTheRest(t *testing.T) {
	testenv.RequireRoot(t)
	m, err := Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	g, err := m.Group("client-test")
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Cappable(); err != nil {
		t.Skipf("no cpu limits here: %v", err)
	}
	if err := g.Limit(0.5); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", spin)
	g.Prepare(cmd)
	p, err := proc.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	if err := g.Started(p.Pid()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // past the start
	before, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	after, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	u := Between(before, after)
	cores := Cores(u.Groups["client-test"], u.Window)
	// The cap bounds it from above; a busy machine may give it less.
	if cores < 0.05 || cores > 0.6 {
		t.Errorf("a spinning process capped at 0.5 cores used %.2f", cores)
	}
	throttled, ok := u.Waits.Throttled["client-test"]
	if !ok || throttled < 100*time.Millisecond {
		t.Errorf("throttled %v (read: %v) over %v at half a core", throttled, ok, u.Window)
	}
	if wait, ok := u.Waits.Groups["client-test"]; ok && wait < 100*time.Millisecond {
		t.Errorf("the capped group waited %v of %v by its CPU pressure", wait, u.Window)
	}
	if err := g.Limit(0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // past the last capped period
	r0, _ := m.Read()
	time.Sleep(500 * time.Millisecond)
	r1, _ := m.Read()
	if u := Between(r0, r1); u.Waits.Throttled["client-test"] != 0 {
		t.Errorf("uncapped, the spinning process was throttled %v", u.Waits.Throttled["client-test"])
	}
	late, _ := m.Group("client-late")
	cmd = exec.Command("true")
	late.Prepare(cmd)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	late.Started(cmd.Process.Pid)
	if err := late.Limit(0); err != nil {
		t.Errorf("Limit(0) of a group never capped: %v", err)
	}
	if err := late.Limit(1); err == nil && m.limits().v1 != nil {
		t.Error("a group whose processes started first took a cap they would escape")
	}
}

// TestPressureCountsTasksWaitingBehindEachOther: three spinning
// processes in a group on a machine of fewer CPUs wait for them, and the
// group's pressure says so; a group of one sleeping process waits
// (almost) not at all.
func TestPressureCountsTasksWaitingBehindEachOther(t *testing.T) {
	testenv.RequireRoot(t)
	m, err := Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close) // after the processes' cleanups
	busy, _ := m.Group("busy")
	idle, _ := m.Group("idle")
	if busy == nil || idle == nil || busy.pressure == nil {
		t.Skip("no cgroup CPU pressure here")
	}
	start := func(g *Group, script string) {
		cmd := exec.Command("sh", "-c", script)
		g.Prepare(cmd)
		p, err := proc.Start(cmd)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Kill() })
	}
	start(idle, "sleep 30")
	before, _ := m.Read()
	for range runtimeCPUs() + 1 {
		start(busy, spin)
	}
	time.Sleep(time.Second)
	after, _ := m.Read()
	u := Between(before, after)
	if w := u.Waits.Groups["busy"]; w < 200*time.Millisecond {
		t.Errorf("more spinners than CPUs waited %v in %v", w, u.Window)
	}
	if w := u.Waits.Groups["idle"]; w > 20*time.Millisecond {
		t.Errorf("a sleeping process waited %v", w)
	}
	if u.Waits.Machine >= 0 && u.Waits.Machine < 200*time.Millisecond {
		t.Errorf("the machine's pressure rose %v", u.Waits.Machine)
	}
	if u.Waits.Self < 0 {
		t.Error("quicbench's own wait was not read")
	}
}

// runtimeCPUs is the number of CPUs this process may run on.
func runtimeCPUs() int { return runtime.NumCPU() }

// TestASplitKeepsTheClientsCPUsApart: with one CPU reserved, this
// process's threads run on the others, a confined group's process (moved
// in as it starts) on the reserved one only; Close gives this process its
// CPUs back.
func TestASplitKeepsTheClientsCPUsApart(t *testing.T) {
	testenv.RequireRoot(t)
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: nothing to split")
	}
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Fatal(err)
	}
	m, err := Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	reserved, err := m.ReserveCPUs(1)
	if err != nil {
		t.Skipf("no split here: %v", err)
	}
	last := CPUList(before)[before.Count()-1]
	if reserved != strconv.Itoa(last) {
		t.Errorf("reserved %q, want the last CPU %d", reserved, last)
	}
	var mine unix.CPUSet
	unix.SchedGetaffinity(0, &mine)
	if mine.IsSet(last) || mine.Count() != before.Count()-1 {
		t.Errorf("this thread's CPUs %v after reserving %d", CPUList(mine), last)
	}
	g, _ := m.Group("client-test")
	if err := g.Confine(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "30")
	g.Prepare(cmd)
	p, err := proc.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Kill() })
	if err := g.Started(p.Pid()); err != nil {
		t.Fatal(err)
	}
	awaitExec(t, p.Pid(), "sleep")
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Pid()))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("Cpus_allowed_list:\t%d\n", last); !strings.Contains(string(status), want) {
		t.Errorf("the confined process's status lacks %q", want)
	}
	checkWidenAndNarrow(t, g, p.Pid(), before, last)
	p.Kill()
	m.Close()
	unix.SchedGetaffinity(0, &mine)
	if mine != before {
		t.Errorf("after Close this thread has CPUs %v, had %v", CPUList(mine), CPUList(before))
	}
}

// awaitExec waits until process pid runs the program named comm, at most 5 s.
func awaitExec(t *testing.T, pid int, comm string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil && strings.TrimSpace(string(b)) == comm {
			return
		}
	}
	t.Fatalf("process %d did not run %s within 5 s", pid, comm)
}

// checkWidenAndNarrow: a widened group's process (started through
// taskset on the reserved CPU) runs on every CPU the run had, a process
// started while it is wide starts on them too, and Narrow puts both back
// on the reserved CPU.
func checkWidenAndNarrow(t *testing.T, g *Group, pid int, all unix.CPUSet, reserved int) {
	t.Helper()
	if err := g.Widen(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "30")
	g.Prepare(cmd)
	late, err := proc.Start(cmd)
	if err != nil {
		g.Narrow()
		t.Fatal(err)
	}
	defer late.Kill()
	if err := g.Started(late.Pid()); err != nil {
		g.Narrow()
		t.Fatal(err)
	}
	// Until taskset has set its CPUs and run sleep, the new process has
	// the CPUs of the thread that started it (one CPU fewer: a fresh
	// clone's run read it so).
	awaitExec(t, late.Pid(), "sleep")
	for _, p := range []int{pid, late.Pid()} {
		var got unix.CPUSet
		if err := unix.SchedGetaffinity(p, &got); err != nil || got != all {
			t.Errorf("widened: process %d runs on %v (%v), want %v", p, CPUList(got), err, CPUList(all))
		}
	}
	if err := g.Narrow(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{pid, late.Pid()} {
		var got unix.CPUSet
		if err := unix.SchedGetaffinity(p, &got); err != nil || got.Count() != 1 || !got.IsSet(reserved) {
			t.Errorf("narrowed: process %d runs on %v (%v), want CPU %d alone", p, CPUList(got), err, reserved)
		}
	}
}
