package main

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/chromium"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/spec"
	"github.com/quicbench/quicbench/internal/testenv"
)

const resumeSpec = `name: resume-test
seed: 5
repetitions: 4
retries: 0
netcheck: false
factors:
  networks: [{rtt: 10ms}]
  pages: [synthetic:4x2KB]
  protocols: [h2, h3]
`

// TestKillAndResume kills a run with SIGKILL at a random moment after its
// second trial, resumes it, and checks that the plan completes with every
// trial recorded once and nothing of the killed run left behind; a changed
// spec is refused.
func TestKillAndResume(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "apt-get install chromium")
	bin := quicbenchBinary(t)
	dir := t.TempDir()
	specPath := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(specPath, []byte(resumeSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(dir, "run")
	db := filepath.Join(runDir, results.FileName)

	cmd := startRunUntil(t, bin, specPath, runDir, 2)
	defer cmd.Process.Kill()
	stem := netns.RunName(cmd.Process.Pid, "")
	time.Sleep(time.Duration(rand.IntN(800)) * time.Millisecond) // a random moment of a later trial
	killedPID := cmd.Process.Pid
	cmd.Process.Signal(os.Kill)
	cmd.Wait()
	killedAt := recorded(db)
	t.Logf("killed after %d trials", killedAt)

	// A changed spec is refused, and changes nothing.
	changed := filepath.Join(dir, "changed.yaml")
	os.WriteFile(changed, []byte(strings.Replace(resumeSpec, "repetitions: 4", "repetitions: 5", 1)), 0o644)
	out, err := exec.Command(bin, "run", changed, "--out", runDir, "--resume").CombinedOutput()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 2 || !strings.Contains(string(out), "the spec changed") {
		t.Errorf("resume with a changed spec: %v\n%s", err, out)
	}

	out, err = exec.Command(bin, "run", specPath, "--out", runDir, "--resume").CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	if names := namespacesWithPrefix(t, stem); len(names) > 0 {
		t.Errorf("the killed run's namespaces are still there: %v", names)
	}
	if dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), fmt.Sprintf("quicbench-chromium-%d-*", killedPID))); len(dirs) > 0 {
		t.Errorf("the killed run's browser directories are still there: %v", dirs)
	}
	time.Sleep(200 * time.Millisecond)
	if procs := processesMentioning(runDir); len(procs) > 0 {
		t.Errorf("processes left behind: %v", procs)
	}

	s, err := spec.Parse([]byte(resumeSpec))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, tr := range plan.Build(s).Trials {
		want = append(want, tr.ID)
	}
	store, err := results.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var got []string
	store.EachTrial(func(tr results.Trial) error {
		got = append(got, tr.ID)
		if tr.Status != results.StatusOK {
			t.Errorf("trial %s: %s", tr.ID, tr.Error)
		}
		return nil
	})
	if !slices.Equal(got, want) {
		t.Errorf("recorded trials %v, want the plan's %v", got, want)
	}
}

// startRunUntil starts quicbench run of specPath into runDir and returns
// once n trials are recorded; it fails the test if that takes over 60 s.
func startRunUntil(t *testing.T, bin, specPath, runDir string, n int) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, "run", specPath, "--out", runDir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(runDir, results.FileName)
	for deadline := time.Now().Add(60 * time.Second); recorded(db) < n; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no %d trials within 60 s; stderr:\n%s", n, stderr.String())
		}
	}
	return cmd
}

// recorded counts the trials in the database at path (0 if it is not
// there yet).
func recorded(path string) int {
	if _, err := os.Stat(path); err != nil {
		return 0
	}
	s, err := results.Open(path)
	if err != nil {
		return 0
	}
	defer s.Close()
	n, _, _ := s.Counts()
	return n
}
