package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/testenv"
)

// TestCompareIsARun runs `quicbench compare` with the built-in loader, then
// `report` and `export` on its run directory, then `run` of the spec it
// wrote: both runs hold the same trials in the same order with the same
// seeds, and their typed columns say what the flags said.
func TestCompareIsARun(t *testing.T) {
	testenv.RequireRoot(t)
	bin := quicbenchBinary(t)
	dir := t.TempDir()
	cmpDir := filepath.Join(dir, "compare")
	out := quicbench(t, bin, "compare", "--details", "--client", "loader", "--runs", "2", "--rtt", "20ms", "--loss", "1", "--down", "20mbit",
		"--up", "5mbit", "--queue", "100ms", "--page", "synthetic:6x5KB", "--origins", "2", "--path", "2=10ms,0.5", "--netcheck=false",
		"--seed", "9", "--out", cmpDir)
	for _, want := range []string{"protocol  ok  failed", "6 loads in", filepath.Join(cmpDir, results.FileName)} {
		if !strings.Contains(out, want) {
			t.Errorf("compare printed no %q:\n%s", want, out)
		}
	}
	rep := quicbench(t, bin, "report", cmpDir)
	if !strings.Contains(rep, "h3 against h2") || !strings.Contains(rep, "synthetic:6x5KB") {
		t.Errorf("report of a compare run:\n%s", rep)
	}
	if _, err := os.Stat(filepath.Join(cmpDir, "report", "index.html")); err != nil {
		t.Error(err)
	}
	exp := quicbench(t, bin, "export", cmpDir, "--format", "jsonl")
	if !strings.Contains(exp, "connections.jsonl") {
		t.Errorf("export printed %q", exp)
	}
	checkExportedColumns(t, filepath.Join(cmpDir, "export", "trials.jsonl"))

	runDir := filepath.Join(dir, "run")
	quicbench(t, bin, "run", filepath.Join(cmpDir, "spec.yaml"), "--out", runDir)
	a, b := trialsIn(t, cmpDir), trialsIn(t, runDir)
	if len(a) != 6 || len(a) != len(b) {
		t.Fatalf("compare recorded %d trials, run %d; want 6 each", len(a), len(b))
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Seq != b[i].Seq || a[i].Seeds != b[i].Seeds || a[i].PageBytes != b[i].PageBytes {
			t.Errorf("trial %d: compare %s seq %d seeds %+v %d B; run %s seq %d seeds %+v %d B", i,
				a[i].ID, a[i].Seq, a[i].Seeds, a[i].PageBytes, b[i].ID, b[i].Seq, b[i].Seeds, b[i].PageBytes)
		}
	}
}

// quicbench runs the binary and returns its output; it must succeed.
func quicbench(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("quicbench %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func trialsIn(t *testing.T, dir string) []results.Trial {
	t.Helper()
	store, err := results.Open(filepath.Join(dir, results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var out []results.Trial
	if err := store.EachTrial(func(tr results.Trial) error { out = append(out, tr); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkExportedColumns reads the first exported trial and checks the typed
// network, page and path columns against compare's flags.
func checkExportedColumns(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var row map[string]any
	if err := json.Unmarshal([]byte(strings.SplitN(string(data), "\n", 2)[0]), &row); err != nil {
		t.Fatal(err)
	}
	for col, want := range map[string]any{"rtt_ms": 20.0, "loss_up_pct": 1.0, "loss_model_down": "bernoulli", "rate_down_bps": 20e6,
		"rate_up_bps": 5e6, "queue_down_bytes": 250_000.0, "queue_up_bytes": 62_500.0, "origins": 2.0, "page_objects": 6.0,
		"page_object_bytes": 5000.0, "client": "loader", "seed": 9.0} {
		if row[col] != want {
			t.Errorf("exported %s = %v (%T), want %v", col, row[col], row[col], want)
		}
	}
	paths, _ := row["paths"].([]any)
	if len(paths) != 1 || paths[0].(map[string]any)["rtt_ms"] != 10.0 || paths[0].(map[string]any)["loss_pct"] != 0.5 {
		t.Errorf("exported paths %v", row["paths"])
	}
}

// TestCompareJSON: --json prints the spec, the summary, the testbed and
// every load with its resources and connections, from the run's database.
func TestCompareJSON(t *testing.T) {
	testenv.RequireRoot(t)
	bin := quicbenchBinary(t)
	dir := filepath.Join(t.TempDir(), "c")
	out, err := exec.Command(bin, "compare", "--client", "loader", "--runs", "1", "--protocols", "h2,h3", "--rtt", "10ms",
		"--page", "synthetic:3x2KB", "--netcheck=false", "--json", "--out", dir).Output()
	if err != nil {
		t.Fatalf("compare --json: %v", err)
	}
	var got struct {
		Spec    string `json:"spec"`
		Summary struct {
			Summaries []struct {
				Protocol string `json:"protocol"`
				OK       int    `json:"ok"`
			} `json:"summaries"`
		} `json:"summary"`
		Testbeds []results.Testbed `json:"testbeds"`
		Trials   []struct {
			Trial       map[string]any   `json:"trial"`
			Resources   []map[string]any `json:"resources"`
			Connections []map[string]any `json:"connections"`
		} `json:"trials"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(got.Spec, "synthetic:3x2KB") || len(got.Summary.Summaries) != 2 || got.Summary.Summaries[0].OK != 1 || len(got.Testbeds) != 1 {
		t.Errorf("spec %q, summaries %+v, testbeds %d", got.Spec, got.Summary.Summaries, len(got.Testbeds))
	}
	if len(got.Trials) != 2 {
		t.Fatalf("%d trials", len(got.Trials))
	}
	for _, tr := range got.Trials {
		if tr.Trial["status"] != "ok" || tr.Trial["rtt_ms"] != 10.0 || len(tr.Resources) != 3 || len(tr.Connections) != 1 {
			t.Errorf("trial %v with %d resources and %d connections", tr.Trial["trial_id"], len(tr.Resources), len(tr.Connections))
		}
	}
}
