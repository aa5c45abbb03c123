package proc

import (
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestChildSurvivesThreadExit starts a child, then ends the thread the
// caller ran on by exiting locked goroutines: the child must keep running.
func TestChildSurvivesThreadExit(t *testing.T) {
	p, err := Start(exec.Command("sleep", "5"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	for range 20 { // end some threads, as netns.Do does
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			close(done)
		}()
		<-done
	}
	exited := make(chan error, 1)
	go func() { exited <- p.Wait() }()
	select {
	case err := <-exited:
		t.Fatalf("the child died when threads ended: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
}

func TestKillEndsTheGroup(t *testing.T) {
	p, err := Start(exec.Command("sh", "-c", "sleep 30 & sleep 30"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 5*time.Second {
		t.Error("Kill did not end the child promptly")
	}
}

// TestScan finds a child by its arguments, its parent, state and name.
func TestScan(t *testing.T) {
	p, err := Start(exec.Command("sleep", "7.123"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	using := Using("7.123")
	if len(using) != 1 || using[0] != p.Pid() {
		t.Fatalf("Using = %v, want [%d]", using, p.Pid())
	}
	var found *Info
	for _, info := range List() {
		if info.PID == p.Pid() {
			found = &info
		}
	}
	if found == nil || found.PPID != os.Getpid() || found.Comm != "sleep" || found.State == "Z" {
		t.Errorf("the child in /proc: %+v", found)
	}
	if args := Cmdline(p.Pid()); len(args) != 2 || args[1] != "7.123" {
		t.Errorf("cmdline %q", args)
	}
	if ns := NetNS(os.Getpid()); !strings.HasPrefix(ns, "net:[") {
		t.Errorf("netns %q", ns)
	}
}

// TestStartTreeTakesEveryDescendantAlong: when the child of StartTree dies
// (here by SIGKILL to it alone, as the parent-death signal would), its
// detached descendants die too.
func TestStartTreeTakesEveryDescendantAlong(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a PID namespace needs root")
	}
	p, err := StartTree(exec.Command("sh", "-c", "setsid sleep 31.4159 & sleep 31.4159"))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(Using("31.4159")) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(Using("31.4159")); n < 2 {
		t.Fatalf("%d sleeps started, want 2", n)
	}
	syscall.Kill(p.Pid(), syscall.SIGKILL) // the child only, not its group
	p.Wait()
	for len(Using("31.4159")) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if left := Using("31.4159"); len(left) > 0 {
		t.Errorf("descendants outlived the child: %v", left)
	}
}

// TestScanReadsCPUTime: the CPU time List reads for this process agrees
// with getrusage's, after this test has burned 300 ms of it.
func TestScanReadsCPUTime(t *testing.T) {
	used := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	for start, x := used(), 1; used()-start < 300*time.Millisecond; x = x*31 + 7 {
		_ = x
	}
	before := used()
	var ticks int64 = -1
	for _, info := range List() {
		if info.PID == os.Getpid() {
			ticks = info.CPUTicks
		}
	}
	after := used()
	got := time.Duration(ticks) * time.Second / TicksPerSecond
	// Ticks are 10 ms; the kernel's tick-based split may lag a tick or two.
	if got < before-50*time.Millisecond || got > after+50*time.Millisecond {
		t.Errorf("List says this process used %v, getrusage %v to %v", got, before, after)
	}
}

// TestTreesFollowParentsDown: the roots in the list and everything below
// them, once each; another tree, a root that is gone, and a cycle outside
// the roots stay out, and a cycle inside ends.
func TestTreesFollowParentsDown(t *testing.T) {
	list := []Info{
		{PID: 1, PPID: 0},
		{PID: 10, PPID: 1}, // root
		{PID: 11, PPID: 10},
		{PID: 12, PPID: 11},
		{PID: 13, PPID: 10},
		{PID: 20, PPID: 1}, // another tree
		{PID: 30, PPID: 31},
		{PID: 31, PPID: 30}, // a cycle
	}
	pids := func(in []Info) []int {
		var out []int
		for _, p := range in {
			out = append(out, p.PID)
		}
		slices.Sort(out)
		return out
	}
	for _, c := range []struct {
		roots, want []int
	}{
		{[]int{10}, []int{10, 11, 12, 13}},
		{[]int{10, 11}, []int{10, 11, 12, 13}},
		{[]int{99}, nil},
		{[]int{30}, []int{30, 31}},
		{nil, nil},
	} {
		if got := pids(Trees(list, c.roots)); !slices.Equal(got, c.want) {
			t.Errorf("Trees(%v) = %v, want %v", c.roots, got, c.want)
		}
	}
}
