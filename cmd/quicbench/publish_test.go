package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/spec"
	"github.com/quicbench/quicbench/internal/testenv"
)

const publishSpec = `name: publish-test
seed: 2
repetitions: 4
retries: 0
netcheck: false
client: loader
factors:
  networks: [{rtt: 10ms}]
  pages: [synthetic:4x2KB]
  protocols: [h2, h3]
`

// TestAPublishedRunGoesOnElsewhere packs a run with
// scripts/publish-run.sh while it runs, interrupts it, unpacks the pack
// into another directory and resumes it there: the plan completes, the
// packed trials are kept as they were (not loaded again), and the pack
// held the databases and specs alone: no testbed key, no lock, no
// SQLite side file, no link planted among them.
func TestAPublishedRunGoesOnElsewhere(t *testing.T) {
	testenv.RequireRoot(t)
	bin := quicbenchBinary(t)
	script, err := filepath.Abs("../../scripts/publish-run.sh")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	specPath := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(specPath, []byte(publishSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	first := filepath.Join(dir, "first")
	cmd := startRunUntil(t, bin, specPath, first, 2)
	defer cmd.Process.Kill()
	if err := os.MkdirAll(filepath.Join(first, "planted"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(first, "planted", "spec.yaml")); err != nil {
		t.Fatal(err)
	}
	pack := filepath.Join(dir, "run.tar.xz")
	if out, err := exec.Command(script, first, pack).CombinedOutput(); err != nil {
		t.Fatalf("publish-run.sh while the run goes on: %v\n%s", err, out)
	}
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()

	list, err := exec.Command("tar", "-tJf", pack).Output()
	if err != nil {
		t.Fatal(err)
	}
	files := strings.Fields(string(list))
	for _, f := range files {
		if !strings.HasSuffix(f, "/") && f != "./results.db" && f != "./spec.yaml" {
			t.Errorf("the pack holds %s: want the run's results.db and spec.yaml alone (all: %v)", f, files)
		}
	}
	second := filepath.Join(dir, "second")
	if err := os.Mkdir(second, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("tar", "-xJf", pack, "-C", second).CombinedOutput(); err != nil {
		t.Fatalf("unpacking: %v\n%s", err, out)
	}
	if fi, err := os.Stat(second); err != nil {
		t.Fatal(err)
	} else if fi.Mode().Perm() != 0o755 {
		t.Errorf("unpacking made the directory's mode %v, want 0755 as it was made", fi.Mode().Perm())
	}
	packed := trialsIn(t, second)
	if len(packed) < 2 {
		t.Fatalf("the pack holds %d trials, want the 2 or more recorded before it was made", len(packed))
	}
	quicbench(t, bin, "run", specPath, "--out", second, "--resume")
	checkWentOn(t, trialsIn(t, second), packed)
}

// checkWentOn fails unless trials are the publish spec's plan, each once,
// and every trial of packed among them as it was packed.
func checkWentOn(t *testing.T, trials, packed []results.Trial) {
	t.Helper()
	s, err := spec.Parse([]byte(publishSpec))
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, tr := range plan.Build(s).Trials {
		want = append(want, tr.ID)
	}
	byID := map[string]results.Trial{}
	for _, tr := range trials {
		got = append(got, tr.ID)
		byID[tr.ID] = tr
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("the resumed run holds %v, want the plan's %v", got, want)
	}
	for _, p := range packed {
		if tr := byID[p.ID]; !tr.StartedAt.Equal(p.StartedAt) || valueOf(tr.PLT) != valueOf(p.PLT) {
			t.Errorf("trial %s was loaded again after the unpacking (started %v, PLT %v ms; packed %v, %v ms)", p.ID, tr.StartedAt, valueOf(tr.PLT), p.StartedAt, valueOf(p.PLT))
		}
	}
}

// valueOf is a metric's value, -1 where it has none.
func valueOf(v *float64) float64 {
	if v == nil {
		return -1
	}
	return *v
}
