package netns

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/testenv"
)

func TestPidOf(t *testing.T) {
	tests := map[string]int{"qb-123-ab12-client": 123, "qb-7-x-servers": 7, "other": 0, "qb-abc-x": 0, "qb-0-x": 0, "qb-55": 0}
	for name, want := range tests {
		got, ok := pidOf(name)
		if want == 0 && ok || want != 0 && (!ok || got != want) {
			t.Errorf("pidOf(%q) = %d, %v; want %d (0: not a run's name)", name, got, ok, want)
		}
	}
	if RunName(42, "ab") != "qb-42-ab" {
		t.Errorf("RunName(42, ab) = %q", RunName(42, "ab"))
	}
}

// TestStaleFindsOnlyDeadRuns creates a namespace named after a pid that does
// not exist and one named after this process: only the first is stale.
func TestStaleFindsOnlyDeadRuns(t *testing.T) {
	testenv.RequireRoot(t)
	dead := 4_000_000 // search upwards for a pid that no process has
	for ; dead < 4_194_304; dead++ {
		if _, err := os.Stat("/proc/" + strconv.Itoa(dead)); os.IsNotExist(err) {
			break
		}
	}
	deadNS, err := Create(RunName(dead, "stale"))
	if err != nil {
		t.Fatal(err)
	}
	defer deadNS.Delete()
	liveNS, err := Create(RunName(os.Getpid(), "live"))
	if err != nil {
		t.Fatal(err)
	}
	defer liveNS.Delete()
	// A process left inside the dead run's namespace, as nginx's workers
	// would be if their run was killed.
	leftover := deadNS.Command(context.Background(), "sleep", "60")
	if err := leftover.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- leftover.Wait() }()
	// ip netns exec enters the namespace after it starts, then becomes
	// sleep: wait for that, or RemoveStale may look before it is inside.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", leftover.Process.Pid))
		if strings.TrimSpace(string(comm)) == "sleep" {
			break
		}
	}

	removed, err := RemoveStale()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(removed, deadNS.Name) || slices.Contains(removed, liveNS.Name) {
		t.Errorf("removed %v, want %s and not %s", removed, deadNS.Name, liveNS.Name)
	}
	if _, err := os.Stat("/run/netns/" + liveNS.Name); err != nil {
		t.Errorf("the live run's namespace was removed: %v", err)
	}
	select {
	case err := <-exited:
		if err == nil {
			t.Error("the leftover process exited by itself, not killed")
		}
	case <-time.After(5 * time.Second):
		leftover.Process.Kill()
		t.Error("the process inside the stale namespace was not killed")
	}
}

func TestCreateRefusesExistingName(t *testing.T) {
	testenv.RequireRoot(t)
	ns, err := Create(RunName(os.Getpid(), "dup"))
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Delete()
	if _, err := Create(ns.Name); err == nil {
		t.Error("Create accepted a name that exists")
	}
}

func TestTopologyRemovedOnClose(t *testing.T) {
	testenv.RequireRoot(t)
	stem := RunName(os.Getpid(), "close")
	topo, err := Build(stem, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(topo.ServerAddrs) != 3 || topo.ServerAddrs[2].String() != "198.19.0.12" {
		t.Errorf("server addresses %v", topo.ServerAddrs)
	}
	for _, ns := range []string{stem + "-client", stem + "-servers"} {
		if _, err := os.Stat("/run/netns/" + ns); err != nil {
			t.Errorf("namespace %s missing after Build: %v", ns, err)
		}
	}
	if err := topo.Close(); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{stem + "-client", stem + "-servers"} {
		if _, err := os.Stat("/run/netns/" + ns); !os.IsNotExist(err) {
			t.Errorf("namespace %s still present after Close (stat: %v)", ns, err)
		}
	}
}

func TestBuildRejectsServerCount(t *testing.T) {
	for _, n := range []int{0, factor.MaxServers + 1} {
		if _, err := Build("qb-unused", n); err == nil {
			t.Errorf("Build with %d servers succeeded", n)
		}
	}
}

// TestCommandTakesNoProgramFromTheWorkingDirectory: with an empty entry in
// root's PATH, "ip netns exec NS sh" would run the sh of the working
// directory, another user's; Command hands ip the trusted sh by its path.
func TestCommandTakesNoProgramFromTheWorkingDirectory(t *testing.T) {
	testenv.RequireRoot(t)
	theirs := t.TempDir()
	if err := os.Chmod(theirs, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	evil := filepath.Join(theirs, "sh")
	if err := os.WriteFile(evil, []byte("#!/bin/dash\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(evil, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	ns, err := Create(RunName(os.Getpid(), "path"))
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Delete()
	t.Chdir(theirs)
	t.Setenv("PATH", ":/usr/sbin:/usr/bin:/sbin:/bin")
	cmd := ns.Command(t.Context(), "sh", "-c", "echo inside")
	if !filepath.IsAbs(cmd.Args[4]) || filepath.Dir(cmd.Args[4]) == theirs {
		t.Fatalf("the program handed to ip: %q, want the trusted sh's absolute path", cmd.Args[4])
	}
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "inside" {
		t.Fatalf("sh in the namespace: %v, %q", err, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the stranger's sh in the working directory ran as root")
	}
	if cmd := ns.Command(t.Context(), "no-such-program-here"); cmd.Err == nil {
		t.Error("a program not on a trusted PATH: the command would start")
	}
}

// deadPID is a pid no process has.
func deadPID(t *testing.T) int {
	t.Helper()
	for pid := 4_000_000; pid < 4_194_304; pid++ {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); os.IsNotExist(err) {
			return pid
		}
	}
	t.Fatal("no free pid")
	return 0
}

// TestStalePlainFileIsRemoved: a plain file that a failed create left in
// /run/netns (doctor in a user namespace) made cleanup fail forever
// ("delete: invalid argument"); it is removed like a stale namespace.
func TestStalePlainFileIsRemoved(t *testing.T) {
	testenv.RequireRoot(t)
	if err := os.MkdirAll("/run/netns", 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("/run/netns", RunName(deadPID(t), "plain"))
	if err := os.WriteFile(path, nil, 0o444); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(path)
	removed, err := RemoveStale()
	if err != nil {
		t.Fatalf("cleanup of a plain file: %v", err)
	}
	if !slices.Contains(removed, filepath.Base(path)) {
		t.Errorf("removed %v, want %s among them", removed, filepath.Base(path))
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("%s is still there: %v", path, err)
	}
}

// helperNSEnv names the namespace the helper tries to create.
const helperNSEnv = "QUICBENCH_NETNS_HELPER_NAME"

// TestHelperCreateInUserNamespace is not a test of its own: run by
// TestDeniedCreateLeavesNoFile inside a user namespace.
func TestHelperCreateInUserNamespace(t *testing.T) {
	name := os.Getenv(helperNSEnv)
	if name == "" {
		t.Skip("a helper run inside a user namespace by TestDeniedCreateLeavesNoFile")
	}
	if ns, err := Create(name); err == nil {
		ns.Delete()
		os.Stdout.WriteString("CREATED\n")
	}
}

// TestDeniedCreateLeavesNoFile: in a user namespace, where mounting the
// namespace is denied, Create leaves no file behind in /run/netns.
func TestDeniedCreateLeavesNoFile(t *testing.T) {
	testenv.RequireRoot(t)
	if err := os.MkdirAll("/run/netns", 0o755); err != nil {
		t.Fatal(err)
	}
	name := RunName(os.Getpid(), "denied")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperCreateInUserNamespace$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperNSEnv+"="+name)
	one := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}}
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER, UidMappings: one, GidMappings: one}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "CREATED") {
		t.Skip("this kernel lets a user namespace mount on /run/netns: nothing to deny")
	}
	if _, err := os.Lstat(filepath.Join("/run/netns", name)); !os.IsNotExist(err) {
		os.Remove(filepath.Join("/run/netns", name))
		t.Errorf("the denied create left /run/netns/%s: %v", name, err)
	}
}
