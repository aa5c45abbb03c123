package experiment

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/har"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/spec"
	"github.com/quicbench/quicbench/internal/testenv"
)

func runSpec(t *testing.T, text string) (*RunResult, *results.Store, string) {
	t.Helper()
	s, err := spec.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	res, err := Run(context.Background(), RunConfig{Spec: s, Dir: dir, Facts: map[string]string{"quicbench_version": "test"}})
	if err != nil {
		t.Fatal(err)
	}
	store, err := results.Open(filepath.Join(dir, results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return res, store, dir
}

// TestRunWithTheLoader runs a small spec with the built-in loader: every
// trial is recorded with its HAR and the run's facts, repeat visits over
// h3 use 0-RTT.
func TestRunWithTheLoader(t *testing.T) {
	testenv.RequireRoot(t)
	res, store, dir := runSpec(t, `name: loader-run
seed: 2
repetitions: 2
client: loader
netcheck: false
artifacts: {har: true}
factors:
  networks: [{name: near, rtt: 10ms}]
  pages: [synthetic:4x20KB]
  protocols: [h2, h3]
  visits: [first, repeat]
`)
	if res.Total != 8 || res.Done != 8 || res.Ran != 8 || res.Failed != 0 {
		t.Fatalf("result %+v", res)
	}
	store.EachTrial(func(tr results.Trial) error {
		if tr.Status != results.StatusOK {
			t.Errorf("%s %s: %s", tr.Protocol, tr.Visit, tr.Error)
			return nil
		}
		if tr.Protocol == "h3" && tr.Visit == "repeat" && tr.Handshakes != "0rtt:1" {
			t.Errorf("h3 repeat visit handshakes %q, want 0rtt:1", tr.Handshakes)
		}
		h, err := har.ReadFile(filepath.Join(dir, tr.Artifacts))
		if err != nil || len(h.Log.Entries) != 5 {
			t.Errorf("trial %s: HAR %s: %v", tr.ID, tr.Artifacts, err)
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(dir, "spec.yaml")); err != nil {
		t.Error(err)
	}
	if v, _ := store.Meta("quicbench_version"); v != "test" {
		t.Errorf("facts not stored: %q", v)
	}
}

// TestFailedTrialsAreRetriedAndKept: on a link too slow for the timeout,
// each attempt fails, and the trial is recorded as failed with its
// attempts, never dropped.
func TestFailedTrialsAreRetriedAndKept(t *testing.T) {
	testenv.RequireRoot(t)
	res, store, _ := runSpec(t, `repetitions: 1
retries: 2
client: loader
timeout: 500ms
netcheck: false
factors:
  networks: [{name: slow, rtt: 10ms, down: 20kbit, up: 20kbit}]
  pages: [synthetic:4x20KB]
  protocols: [h3]
`)
	if res.Done != 1 || res.Failed != 1 {
		t.Fatalf("result %+v", res)
	}
	store.EachTrial(func(tr results.Trial) error {
		// 80 KB at 20 kbit/s takes 32 s: every attempt times out.
		if tr.Status != results.StatusFailed || tr.Attempts != 3 || !strings.Contains(tr.Error, "timed out") || tr.PLT.Valid {
			t.Errorf("status %s after %d attempts: %q", tr.Status, tr.Attempts, tr.Error)
		}
		return nil
	})
}
