package results

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func trial(id string, seq int, ok bool) Trial {
	t := Trial{ID: id, Seq: int64(seq), Rep: 1,
		Levels: Levels{Network: "n", Page: "synthetic:1x1KB", Origins: 2, Stack: "tcp", Server: "go", QUIC: "quic-go", Protocol: "h3", Discovery: "forced", DNS: "pinned", Visit: "first", Client: "chromium", Browser: "fresh"},
		NetworkValues: NetworkValues{RTTMs: 100, UDP: "pass", DirectionValues: DirectionValues{LossModelUp: "bernoulli", LossUpPct: 1,
			LossModelDown: "gilbert-elliott", LossDownPct: 3.2, GEPDownPct: F(1), GERDownPct: F(30), GELossBadDownPct: F(100), GELossGoodDownPct: F(0),
			RateDownBps: 10_000_000, QueueDownBytes: 250_000}, Paths: Paths{{Origin: 2, RTTMs: 40, LossPct: 0.5}}},
		PageValues:  PageValues{PageKind: "synthetic", PageObjects: 1, PageObjectBytes: 1000, PageBytes: 1300},
		Seeds:       Seeds{Seed: 1, UpSeed: 1 << 62, DownSeed: 5, PageSeed: 6},
		Outcome:     Outcome{Status: StatusOK, Attempts: 1, Connections: 1, Handshakes: "full:1", UnmatchedRequests: 2},
		ProtocolUse: ProtocolUse{H3Requests: 31, H3Bytes: 52000, FirstH3: F(0.5)},
		ReplayValues: ReplayValues{ReplayExact: 30, ReplayFuzzy: 1, ServedBytes: 51200,
			UnmatchedURLs: Strings{"GET https://a/favicon.ico", "GET https://b/beacon?t=1"}},
		Link:      Link{DownPackets: 40, DownLost: 1, DownPeakQueueBytes: 3000},
		StartedAt: time.Unix(1_800_000_000, 0), FinishedAt: time.Unix(1_800_000_001, 5)}
	if ok {
		t.PLT, t.DCL, t.TTFB, t.OnLoad = F(812.5), F(300), F(210), F(811)
	} else {
		t.Status, t.Attempts, t.Error = StatusFailed, 3, "timed out"
		t.Paths, t.UnmatchedURLs = nil, nil
	}
	return t
}

func TestTrialsRoundTripAndResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Create(path, map[string]string{"spec_sha256": "abc"})
	if err != nil {
		t.Fatal(err)
	}
	res := []Resource{{URL: "https://a/1.png", Protocol: "h3", StartMs: 1, ResponseEndMs: 2, TransferBytes: 1100, Status: 200}}
	conns := []Connection{{Conn: 1, Transport: "quic", ALPN: "h3", Handshake: "full", Requests: 2, OpenedAt: time.Unix(1_800_000_000, 7), BytesSent: 2000, SRTTMs: 100.5}}
	samples := []Sample{{AtMs: 100, ClientCPUMs: F(80), ServerCPUMs: F(5), QuicbenchCPUMs: 3, UpBytes: 900, DownBytes: 12000},
		{AtMs: 50, ClientCPUMs: F(40), QuicbenchCPUMs: 1.5, UpBytes: 600, DownBytes: 3000}}
	if err := s.AddTrial(trial("c1-r1", 1, true), res, conns, samples...); err != nil {
		t.Fatal(err)
	}
	if err := s.AddTrial(trial("c2-r1", 2, false), nil, nil, Sample{AtMs: 50, QuicbenchCPUMs: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddTrial(trial("c1-r1", 3, true), nil, nil); err == nil {
		t.Error("a trial was recorded twice")
	}
	if err := s.AddAttempt(Attempt{TrialID: "c2-r1", Attempt: 1, Error: "timed out", StartedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	if _, err := Create(path, nil); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Errorf("Create over an existing database: %v", err)
	}
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, _ := s.Meta("spec_sha256"); v != "abc" {
		t.Errorf("meta %q", v)
	}
	done, err := s.Done()
	if err != nil || len(done) != 2 || !done["c1-r1"] || !done["c2-r1"] {
		t.Errorf("done %v, %v", done, err)
	}
	if total, failed, err := s.Counts(); total != 2 || failed != 1 || err != nil {
		t.Errorf("counts %d, %d, %v", total, failed, err)
	}
	var got []Trial
	s.EachTrial(func(t Trial) error { got = append(got, t); return nil })
	want := []Trial{trial("c1-r1", 1, true), trial("c2-r1", 2, false)}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("trials read back differ (-written +read):\n%s", diff)
	}
	gotConns, err := s.ConnectionsOf("c1-r1")
	conns[0].TrialID = "c1-r1"
	if diff := cmp.Diff(conns, gotConns, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); err != nil || diff != "" {
		t.Errorf("connections read back differ (%v):\n%s", err, diff)
	}
	var resources []Resource
	s.EachResource(func(r Resource) error { resources = append(resources, r); return nil })
	if len(resources) != 1 || resources[0].TrialID != "c1-r1" || resources[0].TransferBytes != 1100 {
		t.Errorf("resources %+v", resources)
	}
	gotSamples, err := s.SamplesOf("c1-r1")
	wantSamples := []Sample{samples[1], samples[0]} // in time order
	for i := range wantSamples {
		wantSamples[i].TrialID = "c1-r1"
	}
	if diff := cmp.Diff(wantSamples, gotSamples); err != nil || diff != "" {
		t.Errorf("samples read back differ (%v):\n%s", err, diff)
	}
	forgot, err := s.ForgetFailed()
	if err != nil || forgot["c2-r1"] != 1 {
		t.Fatalf("forget failed: %v, %v", forgot, err)
	}
	if left, err := s.SamplesOf("c2-r1"); err != nil || len(left) != 0 {
		t.Errorf("the forgotten trial's samples are left: %v, %v", left, err)
	}
}

func TestLockedAndBadFiles(t *testing.T) {
	busyTimeoutMs = 100
	defer func() { busyTimeoutMs = 5000 }()
	path := filepath.Join(t.TempDir(), FileName)
	a, err := Create(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tx, err := a.db.Begin() // holds the write lock
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`INSERT INTO meta (key, value) VALUES ('x', 'y')`); err != nil {
		t.Fatal(err)
	}
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.AddTrial(trial("c1-r1", 1, true), nil, nil); err == nil || !strings.Contains(err.Error(), "locked by another process") {
		t.Errorf("write while another process writes: %v", err)
	}

	junk := filepath.Join(t.TempDir(), "junk.db")
	os.WriteFile(junk, []byte(strings.Repeat("not sqlite ", 100)), 0o644)
	if s, err := Open(junk); err == nil || !strings.Contains(err.Error(), "is not a results database") {
		if s != nil {
			s.Close()
		}
		t.Errorf("open junk: %v", err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "none.db")); err == nil || !strings.Contains(err.Error(), "no results database") {
		t.Errorf("open missing: %v", err)
	}
}

// TestFullDisk fills a small tmpfs: the write that does not fit fails with
// a one-line error that says what to do, and every trial committed before
// it is still there.
func TestFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("needs root to mount a tmpfs")
		}
		t.Skip("needs root to mount a tmpfs")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
	}
	defer exec.Command("umount", dir).Run()
	path := filepath.Join(dir, FileName)
	s, err := Create(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resources := make([]Resource, 50)
	for i := range resources {
		resources[i] = Resource{URL: strings.Repeat("x", 200), Protocol: "h3"}
	}
	var failure error
	committed := 0
	for i := 1; i <= 10_000 && failure == nil; i++ {
		if failure = s.AddTrial(trial(fmt.Sprintf("c%d-r1", i), i, true), resources, nil); failure == nil {
			committed++
		}
	}
	s.Close()
	t.Logf("after %d trials: %v", committed, failure)
	if !errors.Is(failure, ErrDiskFull) || strings.Contains(failure.Error(), "--resume") || strings.Contains(failure.Error(), "\n") {
		t.Fatalf("after %d trials: %v; want a one-line disk-full error", committed, failure)
	}
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if total, _, err := s.Counts(); err != nil || total != committed || committed == 0 {
		t.Errorf("%d trials readable after the disk filled (%v), want the %d committed", total, err, committed)
	}
}

// TestMergeKeepsEveryRow: two shards' trials, resources and netchecks go
// into one store; a network checked in both keeps the first check and is
// named; a trial in both is refused.
func TestMergeKeepsEveryRow(t *testing.T) {
	dir := t.TempDir()
	shard := func(name string, ids ...string) string {
		path := filepath.Join(dir, name+".db")
		s, err := Create(path, map[string]string{"spec_sha256": "x"})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for _, id := range ids {
			if err := s.AddTrial(Trial{ID: id, Outcome: Outcome{Status: StatusOK}}, []Resource{{TrialID: id, URL: "https://a.test/" + id}}, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.SaveNetwork("n", []byte(`{}`), []byte(`{"from":"`+name+`"}`), time.Now()); err != nil {
			t.Fatal(err)
		}
		return path
	}
	a, b := shard("a", "t1", "t2"), shard("b", "t3")
	withSample(t, a, "t2")
	dropSamples(t, b) // a shard made before samples were kept
	merged, err := Create(filepath.Join(dir, "m.db"), map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	defer merged.Close()
	n1, dup1, err1 := merged.Merge(context.Background(), a)
	n2, dup2, err2 := merged.Merge(context.Background(), b)
	if err1 != nil || err2 != nil || n1 != 2 || n2 != 1 || len(dup1) != 0 || len(dup2) != 1 || dup2[0] != "n" {
		t.Fatalf("merges: %d %v %v; %d %v %v", n1, dup1, err1, n2, dup2, err2)
	}
	if _, r, _ := merged.NetworkReport("n"); r != `{"from":"a"}` {
		t.Errorf("netcheck kept %s, want the first shard's", r)
	}
	if res, _ := merged.ResourcesOf("t3"); len(res) != 1 {
		t.Errorf("t3's resources: %v", res)
	}
	if got, err := merged.SamplesOf("t2"); err != nil || len(got) != 1 || got[0].DownBytes != 7 {
		t.Errorf("t2's samples: %v, %v", got, err)
	}
	if _, _, err := merged.Merge(context.Background(), b); err == nil || !strings.Contains(err.Error(), "trial t3") {
		t.Errorf("merging a shard twice: %v", err)
	}
}

// withSample adds a sample to trial id of the database at path.
func withSample(t *testing.T, path, id string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO samples (trial_id, at_ms, quicbench_cpu_ms, up_bytes, down_bytes) VALUES (?, 50, 1, 3, 7)`, id); err != nil {
		t.Fatal(err)
	}
}

// dropSamples makes the database at path one an earlier quicbench made:
// without the samples table.
func dropSamples(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`DROP TABLE samples`); err != nil {
		t.Fatal(err)
	}
}
