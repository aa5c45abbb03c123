package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/chromium"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/proc"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/testenv"
)

// TestInterruptLeavesNothingBehind starts a real comparison, stops it while
// a browser is loading (Ctrl-C's SIGINT, a closed terminal's SIGHUP, or
// the pipe its output goes to closed, as by 'compare … 2>&1 | head -1'),
// and checks that the run exits with the signal's status (130, 129, 141),
// keeps every completed load, and leaves no namespace, TUN device or
// browser process behind.
func TestInterruptLeavesNothingBehind(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "apt-get install chromium")
	for _, tc := range []struct {
		name string
		want int
		stop func(cmd *exec.Cmd, stderr io.Closer) error
	}{
		{"SIGINT", 130, func(cmd *exec.Cmd, _ io.Closer) error { return cmd.Process.Signal(os.Interrupt) }},
		{"SIGHUP", 129, func(cmd *exec.Cmd, _ io.Closer) error { return cmd.Process.Signal(syscall.SIGHUP) }},
		{"closed pipe", 141, func(_ *exec.Cmd, stderr io.Closer) error { return stderr.Close() }},
	} {
		t.Run(tc.name, func(t *testing.T) { interruptCompare(t, tc.want, tc.stop) })
	}
}

// interruptCompare runs a comparison, stops it with stop after two loads
// and checks what it left and its exit status want.
func interruptCompare(t *testing.T, want int, stop func(cmd *exec.Cmd, stderr io.Closer) error) {
	bin := quicbenchBinary(t)
	runDir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(bin, "compare", "--runs", "100", "--rtt", "20ms", "--page", "synthetic:8x2KB", "--netcheck=false", "--out", runDir)
	lines, stderr := startWithStderrPipe(t, cmd)
	stem := netns.RunName(cmd.Process.Pid, "")

	// Wait for two completed loads, then stop it during the third.
	var seen []string
	for lines.Scan() {
		seen = append(seen, lines.Text())
		if strings.HasPrefix(lines.Text(), "load   2/") {
			break
		}
	}
	if len(seen) == 0 || !strings.HasPrefix(seen[len(seen)-1], "load   2/") {
		t.Fatalf("the run did not complete two loads; it printed:\n%s", strings.Join(seen, "\n"))
	}
	if names := namespacesWithPrefix(t, stem); len(names) != 2 {
		t.Errorf("during the run, namespaces %v, want a client and a servers namespace", names)
	}
	time.Sleep(300 * time.Millisecond) // the third browser is starting or loading
	if err := stop(cmd, stderr); err != nil {
		t.Fatal(err)
	}
	drained := make(chan struct{})
	go func() { // drain the rest of stderr so the process never blocks on it
		defer close(drained)
		for lines.Scan() {
			seen = append(seen, lines.Text())
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var err error
	select {
	case err = <-exited:
	case <-time.After(30 * time.Second):
		t.Fatal("the run did not exit within 30 s of being stopped")
	}
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != want {
		t.Errorf("exit: %v, want status %d", err, want)
	}

	if names := namespacesWithPrefix(t, stem); len(names) > 0 {
		t.Errorf("namespaces left behind: %v", names)
	}
	if procs := processesMentioning(runDir); len(procs) > 0 {
		t.Errorf("processes left behind: %v", procs)
	}
	checkKeptLoads(t, runDir, 2)
	<-drained
	if all := strings.Join(seen, "\n"); want != 141 && (!strings.Contains(all, "interrupted after") || !strings.Contains(all, "--resume")) {
		t.Errorf("stderr does not say how to continue:\n%s", all)
	}
}

// checkKeptLoads checks that the run in runDir kept at least n loads, each
// a whole record.
func checkKeptLoads(t *testing.T, runDir string, n int) {
	t.Helper()
	store, err := results.Open(filepath.Join(runDir, results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	kept := 0
	store.EachTrial(func(tr results.Trial) error {
		kept++
		if tr.Protocol == "" || (tr.Status == results.StatusOK) != (tr.PLT != nil) || tr.FinishedAt.IsZero() {
			t.Errorf("kept trial %s is not a complete record: %+v", tr.ID, tr)
		}
		return nil
	})
	if kept < n {
		t.Errorf("kept %d loads, want at least the %d completed ones", kept, n)
	}
}

var (
	buildOnce sync.Once
	binDir    string
	binErr    error
)

// quicbenchBinary builds the quicbench binary once for the package's tests.
func quicbenchBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "quicbench-bin-"); binErr != nil {
			return
		}
		if out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, "quicbench"), ".").CombinedOutput(); err != nil {
			binErr = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return filepath.Join(binDir, "quicbench")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

func namespacesWithPrefix(t *testing.T, prefix string) []string {
	t.Helper()
	entries, err := os.ReadDir("/run/netns")
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			names = append(names, e.Name())
		}
	}
	return names
}

// processesMentioning lists live processes whose command line contains s.
func processesMentioning(s string) []string {
	var out []string
	for _, pid := range proc.Using(s) {
		out = append(out, fmt.Sprintf("%d: %s", pid, strings.Join(proc.Cmdline(pid), " ")))
	}
	return out
}

// startWithStderr starts cmd and returns a scanner of its standard error;
// the test's cleanup kills it if it still runs.
func startWithStderr(t *testing.T, cmd *exec.Cmd) *bufio.Scanner {
	t.Helper()
	lines, _ := startWithStderrPipe(t, cmd)
	return lines
}

// startWithStderrPipe is startWithStderr that also returns the pipe, for
// a test to close its end.
func startWithStderrPipe(t *testing.T, cmd *exec.Cmd) (*bufio.Scanner, io.Closer) {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return bufio.NewScanner(stderr), stderr
}
