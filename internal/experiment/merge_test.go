package experiment

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/report"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/spec"
	"github.com/quicbench/quicbench/internal/testenv"
)

const shardSpec = `name: sharded
seed: 5
repetitions: 2
client: loader
netcheck: false
factors:
  networks: [{name: a, rtt: 10ms}, {name: b, rtt: 20ms, loss: 1}]
  pages: [synthetic:2x5KB, synthetic:3x5KB]
  protocols: [h2, h3]
`

// TestShardsMergeToTheWholeRun runs a spec in 3 shards and in one piece:
// the merged shards hold the same trials with the same levels, and report
// reads them; merging refuses a shard given twice (shards of another
// spec: TestMergeRefusesShardsOfAnotherSpec), and a shard resumes only as
// itself.
func TestShardsMergeToTheWholeRun(t *testing.T) {
	testenv.RequireRoot(t)
	// One repetition (8 trials over 3 shards) keeps the test's loads few.
	oneRep := strings.Replace(shardSpec, "repetitions: 2", "repetitions: 1", 1)
	s, err := spec.Parse([]byte(oneRep))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	whole := filepath.Join(root, "whole")
	if _, err := Run(context.Background(), RunConfig{Spec: s, Dir: whole}); err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for i := 1; i <= 3; i++ {
		dir := filepath.Join(root, "shard", string(rune('0'+i)))
		if _, err := Run(context.Background(), RunConfig{Spec: s, Dir: dir, Shard: plan.ShardID{I: i, N: 3}}); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	merged := filepath.Join(root, "merged")
	res, err := Merge(context.Background(), merged, dirs)
	if err != nil {
		t.Fatal(err)
	}
	want, err := results.RunLevels(whole)
	if err != nil {
		t.Fatal(err)
	}
	got, err := results.RunLevels(merged)
	if err != nil {
		t.Fatal(err)
	}
	if res.Trials != 8 || len(got) != len(want) || len(res.Missing) != 0 {
		t.Fatalf("merged %d trials (%d read), the whole run has %d; missing %v", res.Trials, len(got), len(want), res.Missing)
	}
	for id, lv := range want {
		if got[id] != lv {
			t.Errorf("trial %s: merged levels %+v, whole run's %+v", id, got[id], lv)
		}
	}
	store, err := results.OpenReadOnly(filepath.Join(merged, results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := report.Build(context.Background(), store, "", analysis.Options{}, nil); err != nil {
		t.Errorf("report of the merged run: %v", err)
	}
	if _, err := Merge(context.Background(), filepath.Join(root, "twice"), []string{dirs[0], dirs[0]}); err == nil || !strings.Contains(err.Error(), "both shard 1/3") {
		t.Errorf("a shard given twice: %v", err)
	}
	var in *InputError
	if _, err := Run(context.Background(), RunConfig{Spec: s, Dir: dirs[0], Resume: true, Shard: plan.ShardID{I: 2, N: 3}}); !errors.As(err, &in) {
		t.Errorf("resuming shard 1/3 as 2/3: %v", err)
	}
}

// TestOneMeasurementPerMachine: while another holds the machine's lock, a
// run waits and records nothing; canceled, it returns.
func TestOneMeasurementPerMachine(t *testing.T) {
	testenv.RequireRoot(t)
	f, err := os.Open(MachineLockDir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	s, _ := spec.Parse([]byte(tinySpec))
	ctx, cancel := context.WithTimeout(context.Background(), 2*machineLockPoll+500*time.Millisecond)
	defer cancel()
	dir := t.TempDir()
	res, err := Run(ctx, RunConfig{Spec: s, Dir: dir})
	if !errors.Is(err, context.DeadlineExceeded) || res != nil {
		t.Fatalf("a run while the machine is busy: %+v, %v; want it to wait, then stop with nothing run", res, err)
	}
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	// It waited before writing anything: its directory is as it was, so
	// the same --out starts the run later (issue 44).
	names, _ := os.ReadDir(filepath.Join(dir))
	if slices.ContainsFunc(names, func(e os.DirEntry) bool { return e.Name() == results.FileName }) {
		t.Error("a run that never got the machine made a results database")
	}
	if res, err := Run(context.Background(), RunConfig{Spec: s, Dir: dir}); err != nil || res.Ran == 0 {
		t.Fatalf("the same directory once the machine is free: %+v, %v", res, err)
	}
}
