package cpuuse

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/quicbench/quicbench/internal/proc"
	"github.com/quicbench/quicbench/internal/testenv"
)

// burn is a shell command that keeps a CPU busy for about a second and
// does it in a grandchild, which a group must count too.
const burn = `sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done'`

// TestACgroupCountsEveryProcessItsPartyStarts: as root the meter makes
// cgroups; a shell started in a group, whose child burns CPU, is counted
// whole (the child included, though it forked after the start), as
// getrusage counts the shell and its waited-for children; Close removes
// the run's cgroups.
func TestACgroupCountsEveryProcessItsPartyStarts(t *testing.T) {
	testenv.RequireRoot(t)
	if _, _, err := cgroup2Mount(); err != nil {
		t.Skipf("no cgroup2 here: %v", err)
	}
	home, err := ownCgroupDir() // during the run, quicbench is in a group of its own
	if err != nil {
		t.Fatal(err)
	}
	m, err := Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Method() != MethodCgroup {
		t.Fatalf("method %s (%s), want cgroup2 as root", m.Method(), m.Why())
	}
	g, err := m.Group("client-test")
	if err != nil {
		t.Fatal(err)
	}
	before, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", burn)
	g.Prepare(cmd)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	after, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	used := Between(before, after).Groups["client-test"]
	want := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if want < 100*time.Millisecond {
		t.Fatalf("the shell used only %v: the test burns too little", want)
	}
	// getrusage rounds to the scheduler's accounting as cpu.stat does;
	// they agree to a few ms.
	if d := used.Total() - want; d < -5*time.Millisecond || d > 5*time.Millisecond {
		t.Errorf("the group counted %v (user %v, system %v); the shell and its child used %v", used.Total(), used.User, used.System, want)
	}
	snap, err := m.Snapshot("client-test", "server-absent")
	if err != nil {
		t.Fatal(err)
	}
	if got := snap.Groups["client-test"]; got != after.Groups["client-test"] {
		t.Errorf("Snapshot read the group's time as %v, Read as %v: the group is idle, they should agree", got, after.Groups["client-test"])
	}
	if _, ok := snap.Groups["server-absent"]; ok || len(snap.Groups) != 1 {
		t.Errorf("Snapshot's groups %v: want only the group the meter has", snap.Groups)
	}
	if snap.Self.Total() < after.Self.Total() {
		t.Errorf("Snapshot read quicbench's time as %v, earlier than Read's %v", snap.Self.Total(), after.Self.Total())
	}
	runDir := filepath.Join(home, m.name)
	if _, err := os.Stat(filepath.Join(runDir, "client-test", "cpu.stat")); err != nil {
		t.Fatalf("the group's cgroup: %v", err)
	}
	m.Close()
	if _, err := os.Stat(runDir); !os.IsNotExist(err) {
		t.Errorf("after Close, %s: %v; want it gone", runDir, err)
	}
}

// TestTheProcMethodSumsATreeWhileItRuns: without cgroups, a group is the
// process trees it was told of: a burning grandchild of a started shell
// shows in the group while it runs; a process outside the trees does not.
func TestTheProcMethodSumsATreeWhileItRuns(t *testing.T) {
	machine, err := os.Open("/proc/stat")
	if err != nil {
		t.Fatal(err)
	}
	m := &Meter{method: MethodProc, machine: machine}
	defer m.Close()
	g, err := m.Group("server-test")
	if err != nil {
		t.Fatal(err)
	}
	other, err := m.Group("other")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", burn+"; sleep 30")
	p, err := proc.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	g.Started(p.Pid())
	outside, err := proc.Start(exec.Command("sh", "-c", burn+"; sleep 30"))
	if err != nil {
		t.Fatal(err)
	}
	defer outside.Kill()
	other.Started(-1) // ignored
	deadline := time.Now().Add(20 * time.Second)
	for {
		r, err := m.Read()
		if err != nil {
			t.Fatal(err)
		}
		if r.Groups["server-test"].Total() >= 200*time.Millisecond {
			if o := r.Groups["other"]; o.Total() != 0 {
				t.Errorf("a group of no process counted %v", o)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s the group counts %v of a burning child", r.Groups["server-test"])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRemoveStaleRemovesADeadRunsCgroups: a run's cgroup named after a
// process that is gone is removed with its groups; a live run's is kept.
func TestRemoveStaleRemovesADeadRunsCgroups(t *testing.T) {
	testenv.RequireRoot(t)
	dir, err := ownCgroupDir()
	if err != nil {
		t.Skipf("no cgroup2 here: %v", err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, groupPrefix+strconv.Itoa(dead.Process.Pid)+"-1")
	if err := os.MkdirAll(filepath.Join(stale, "client-chromium"), 0o755); err != nil {
		t.Fatal(err)
	}
	m, err := Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	removed := RemoveStale()
	if len(removed) != 1 || removed[0] != stale {
		t.Errorf("removed %v, want [%s]", removed, stale)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("%s: %v", stale, err)
	}
	if m.Method() == MethodCgroup {
		if _, err := os.Stat(filepath.Join(dir, m.name)); err != nil {
			t.Errorf("a live run's cgroup went: %v", err)
		}
	}
}

// TestQuicbenchWaitsInAGroupOfItsOwn: as root, Open moves this process
// into a cgroup of its own in the run's, whose CPU pressure is its
// waiting: three threads kept busy on one CPU for 300 ms wait there
// nearly all of it, but never longer than the wall time (threads that wait
// together count once, as a party's pressure does, where their run-queue
// times would sum to about 600 ms); Close moves the process back where it
// was.
func TestQuicbenchWaitsInAGroupOfItsOwn(t *testing.T) {
	testenv.RequireRoot(t)
	if _, _, err := cgroup2Mount(); err != nil {
		t.Skipf("no cgroup2 here: %v", err)
	}
	home, err := ownCgroupDir()
	if err != nil {
		t.Fatal(err)
	}
	m, err := Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.self == nil {
		m.Close()
		t.Skip("no cgroup of its own for quicbench here (no PSI, or the move was refused)")
	}
	if dir, _ := ownCgroupDir(); filepath.Base(dir) != selfGroup || filepath.Dir(filepath.Dir(dir)) != home {
		t.Errorf("in cgroup %s during the run, want %s/<run>/%s", dir, home, selfGroup)
	}
	if dir, _ := homeCgroupDir(); dir != home {
		t.Errorf("home cgroup %s during the run, want %s", dir, home)
	}
	before, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4)) // three busy threads, each with a P
	if err := busyOnOneCPU(3, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	after, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	waited, wall := after.Waits.Sub(before.Waits).Self, after.At.Sub(before.At)
	if waited < 100*time.Millisecond || waited > wall+50*time.Millisecond {
		t.Errorf("quicbench waited %v in %v while three of its threads shared one CPU for 300 ms", waited, wall)
	}
	m.Close()
	if dir, _ := ownCgroupDir(); dir != home {
		t.Errorf("in cgroup %s after Close, want %s again", dir, home)
	}
}

// busyOnOneCPU keeps n threads of this process busy on CPU 0 for d.
func busyOnOneCPU(n int, d time.Duration) error {
	errs := make(chan error, n)
	for range n {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var one, all unix.CPUSet
			one.Set(0)
			if err := unix.SchedGetaffinity(0, &all); err != nil {
				errs <- err
				return
			}
			if err := unix.SchedSetaffinity(0, &one); err != nil {
				errs <- err
				return
			}
			defer unix.SchedSetaffinity(0, &all)
			for end := time.Now().Add(d); time.Now().Before(end); {
			}
			errs <- nil
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}
