package experiment

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/proc"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/spec"
	"github.com/quicbench/quicbench/internal/testenv"
)

// TestAKilledHTTP3ServerIsRecordedAndRestarted: quicbench-h3 is killed
// with SIGKILL after the first trial. Either the next h3 load meets the
// dead server and fails at once (not after the timeout) with an attempt
// that names the server and the signal, or the runner finds the exit
// before that load (it checks before every attempt) and says so in its
// log; both ways the server is started again and every trial of the run
// is recorded, verified, h2 and h3 alike.
func TestAKilledHTTP3ServerIsRecordedAndRestarted(t *testing.T) {
	testenv.RequireRoot(t)
	s, err := spec.Parse([]byte(`name: killed
repetitions: 3
retries: 1
client: loader
netcheck: false
timeout: 30s
factors:
  networks: [{rtt: 10ms}]
  pages: [synthetic:4x2KB]
  protocols: [h2, h3]
  quic: quinn+cubic
`))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	killed := 0
	start := time.Now()
	var logged proc.Output // written by the run's goroutines
	log := slog.New(slog.NewTextHandler(&logged, nil))
	res, err := Run(context.Background(), RunConfig{Spec: s, Dir: dir, Log: log, OnTrial: func(p Progress) {
		if p.Done != 1 {
			return
		}
		for _, pid := range proc.Using("--manifest") {
			if strings.HasSuffix(strings.Join(proc.Cmdline(pid)[:1], ""), "quicbench-h3") {
				syscall.Kill(pid, syscall.SIGKILL)
				killed++
			}
		}
	}})
	if err != nil {
		t.Fatalf("the run stopped: %v", err)
	}
	if killed != 1 {
		t.Fatalf("killed %d quicbench-h3 processes, want 1", killed)
	}
	if took := time.Since(start); took > 25*time.Second {
		t.Errorf("the run took %v: a load waited for its timeout", took)
	}
	if res.Done != 6 || res.Failed != 0 {
		t.Errorf("recorded %d trials, %d failed; want 6, none failed", res.Done, res.Failed)
	}
	store, err := results.OpenReadOnly(filepath.Join(dir, results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	attempts, err := store.Attempts()
	if err != nil {
		t.Fatal(err)
	}
	metDead := len(attempts) == 1 && strings.Contains(attempts[0].Error, "the HTTP/3 server quicbench-h3 exited: signal: killed")
	foundBefore := len(attempts) == 0 && strings.Contains(logged.String(), `msg="a server exited; started again" servers=[quinn]`) // the stack quicbench-h3 runs
	if !metDead && !foundBefore {
		t.Errorf("attempts %+v, log:\n%s\nwant one attempt that met the dead server, naming it, or none and the restart logged", attempts, logged.String())
	}
}

// TestAServerKilledMidLoadStopsTheLoadAtOnce: quicbench-h3 is killed a
// second into an h3 load of several seconds; the load stops within a
// second or two of the kill (not at its 60 s timeout), is recorded as an
// attempt naming the server, and the retry, on a server started again,
// is verified.
func TestAServerKilledMidLoadStopsTheLoadAtOnce(t *testing.T) {
	testenv.RequireRoot(t)
	s, err := spec.Parse([]byte(`name: killed-mid-load
repetitions: 2
retries: 1
client: loader
netcheck: false
factors:
  networks: [{rtt: 40ms, down: 4mbit, up: 4mbit}]
  pages: [synthetic:20x100KB]
  protocols: [h3]
  quic: quinn+cubic
`))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var killedAt time.Time
	res, err := Run(context.Background(), RunConfig{Spec: s, Dir: dir, OnTrial: func(p Progress) {
		if p.Done != 1 {
			return
		}
		time.AfterFunc(time.Second, func() { // the second trial's load is under way
			for _, pid := range proc.Using("--manifest") {
				if strings.HasSuffix(proc.Cmdline(pid)[0], "quicbench-h3") {
					syscall.Kill(pid, syscall.SIGKILL)
					killedAt = time.Now()
				}
			}
		})
	}})
	if err != nil || res.Done != 2 || res.Failed != 0 {
		t.Fatalf("run: %+v, %v; want both trials verified", res, err)
	}
	store, err := results.OpenReadOnly(filepath.Join(dir, results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	attempts, err := store.Attempts()
	if err != nil || len(attempts) != 1 || killedAt.IsZero() {
		t.Fatalf("attempts %+v, %v (killed at %v)", attempts, err, killedAt)
	}
	var second results.Trial
	store.EachTrial(func(tr results.Trial) error {
		if tr.Seq == 2 {
			second = tr
		}
		return nil
	})
	// The retry started once the killed attempt had ended.
	if gap := second.FinishedAt.Sub(killedAt); gap > 12*time.Second || !strings.Contains(attempts[0].Error, "signal: killed") {
		t.Errorf("the trial ended %v after the kill; its attempt: %q", gap, attempts[0].Error)
	}
}
