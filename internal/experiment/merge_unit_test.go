package experiment

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/spec"
)

// fakeShards writes the shard run directories of shardSpec's plan in two
// shards, each trial recorded as a verified load with resources, without
// loading anything: what merge reads. alter changes a shard's database
// after it is filled.
func fakeShards(t *testing.T, resources int, alter func(i int, db *sql.DB)) []string {
	t.Helper()
	s, err := spec.Parse([]byte(shardSpec))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for i := 1; i <= 2; i++ {
		id := plan.ShardID{I: i, N: 2}
		p := plan.Build(s).Shard(s, id)
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("shard%d", i))
		os.MkdirAll(dir, 0o755)
		store, err := results.Create(filepath.Join(dir, results.FileName), map[string]string{"spec": string(s.Source),
			"spec_sha256": s.SHA256, "shard": id.String(), "quicbench_version": "test", "plan_trials": fmt.Sprint(len(p.Trials))})
		if err != nil {
			t.Fatal(err)
		}
		res := make([]results.Resource, resources)
		for k := range res {
			res[k] = results.Resource{URL: fmt.Sprintf("https://a.test/%d", k), Protocol: "h2", Status: 200}
		}
		for _, tr := range p.Trials {
			rec, err := newRecord(s, tr, nil)
			if err != nil {
				t.Fatal(err)
			}
			rec.Status, rec.Attempts, rec.PLT = results.StatusOK, 1, results.F(100)
			if err := store.AddTrial(rec, res, nil); err != nil {
				t.Fatal(err)
			}
		}
		store.Close()
		if alter != nil {
			db, err := sql.Open("sqlite", filepath.Join(dir, results.FileName))
			if err != nil {
				t.Fatal(err)
			}
			alter(i, db)
			db.Close()
		}
		dirs = append(dirs, dir)
	}
	return dirs
}

// execSQL runs SQL on a shard's database (it alters a shard as a hostile
// or broken tool would).
func execSQL(t *testing.T, db *sql.DB, query string) {
	t.Helper()
	if _, err := db.Exec(query); err != nil {
		t.Fatal(err)
	}
}

// TestMergeRefusesShardsOfAnotherSpec: shards whose spec differs are not
// merged, with status 2's input error naming both.
func TestMergeRefusesShardsOfAnotherSpec(t *testing.T) {
	dirs := fakeShards(t, 1, func(i int, db *sql.DB) {
		if i == 2 {
			execSQL(t, db, `UPDATE meta SET value = 'ffffffffffff0000' WHERE key = 'spec_sha256'`)
		}
	})
	var in *InputError
	if _, err := Merge(context.Background(), filepath.Join(t.TempDir(), "mixed"), dirs); !errors.As(err, &in) || !strings.Contains(err.Error(), "ran another spec than") {
		t.Errorf("shards of two specs: %v", err)
	}
}

// TestMergeChecksShardsRows: a trial of a repetition the spec does not
// have, a trial whose ID is not its levels', and text in a number's column
// are refused with status 2's input error, naming the shard; nothing is
// left in the new directory, and a merge into it then succeeds.
func TestMergeChecksShardsRows(t *testing.T) {
	for name, c := range map[string]struct {
		alter func(db *sql.DB)
		want  string
	}{
		"repetition": {func(db *sql.DB) {
			execSQL(t, db, `UPDATE trials SET rep = 3, trial_id = substr(trial_id, 1, 13) || '-r3' WHERE seq = (SELECT min(seq) FROM trials)`)
		}, "is repetition 3, but the spec has 2"},
		"id":   {func(db *sql.DB) { execSQL(t, db, `UPDATE trials SET protocol = 'h3' WHERE protocol = 'h2'`) }, "is not the trial its levels"},
		"type": {func(db *sql.DB) { execSQL(t, db, `UPDATE trials SET plt_ms = 'fast' WHERE seq = 1`) }, "another type than column plt_ms"},
	} {
		t.Run(name, func(t *testing.T) {
			dirs := fakeShards(t, 1, func(i int, db *sql.DB) {
				if i == 2 {
					c.alter(db)
				}
			})
			out := filepath.Join(t.TempDir(), "merged")
			_, err := Merge(context.Background(), out, dirs)
			var in *InputError
			if !errors.As(err, &in) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), dirs[1]) {
				t.Fatalf("error %v, want an input error containing %q and the shard", err, c.want)
			}
			if _, err := os.Lstat(out); !os.IsNotExist(err) {
				t.Errorf("a refused merge left %s", out)
			}
		})
	}
}

// TestMergeLeavesNothingHalfDone: a merge into a directory of its own is
// interrupted mid-copy (ctx canceled): out is as it was (empty), holds no
// results.db, and a merge into it afterwards succeeds; a trial in two
// shards is an input error.
func TestMergeLeavesNothingHalfDone(t *testing.T) {
	dirs := fakeShards(t, 20_000, nil)
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := Merge(ctx, out, dirs)
	if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
		t.Fatalf("after %v: %v, want it canceled", time.Since(start), err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("the interrupted merge left %v", entries)
	}
	res, err := Merge(context.Background(), out, dirs)
	if err != nil || res.Trials != 16 {
		t.Fatalf("merging again: %+v, %v", res, err)
	}
	_, err = Merge(context.Background(), filepath.Join(t.TempDir(), "m"), []string{dirs[0], dirs[1], dirs[0]})
	var in *InputError
	if !errors.As(err, &in) {
		t.Errorf("a shard given twice: %v, want an input error", err)
	}
}

// TestMergeCarriesArtifacts: each shard's artifacts (a HAR file and a
// frames directory) are in the merged run where its trials' artifacts
// column says; a link among them is neither followed nor copied, and
// counted.
func TestMergeCarriesArtifacts(t *testing.T) {
	dirs := fakeShards(t, 1, nil)
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("root's"), 0o600)
	for i, dir := range dirs {
		os.MkdirAll(filepath.Join(dir, "artifacts", fmt.Sprintf("t%d-a1-frames", i)), 0o755)
		os.WriteFile(filepath.Join(dir, "artifacts", fmt.Sprintf("t%d-a1.har", i)), []byte(fmt.Sprintf(`{"shard":%d}`, i)), 0o644)
		os.WriteFile(filepath.Join(dir, "artifacts", fmt.Sprintf("t%d-a1-frames", i), "ms_000100.jpg"), []byte("jpeg"), 0o644)
	}
	os.Symlink(secret, filepath.Join(dirs[1], "artifacts", "link.har"))
	out := filepath.Join(t.TempDir(), "merged")
	res, err := Merge(context.Background(), out, dirs)
	if err != nil {
		t.Fatal(err)
	}
	if res.Artifacts != 4 || res.ArtifactsSkipped != 1 {
		t.Errorf("carried %d files and left out %d, want 4 and 1", res.Artifacts, res.ArtifactsSkipped)
	}
	for i := range dirs {
		if data, err := os.ReadFile(filepath.Join(out, "artifacts", fmt.Sprintf("t%d-a1.har", i))); err != nil || string(data) != fmt.Sprintf(`{"shard":%d}`, i) {
			t.Errorf("shard %d's HAR in the merged run: %q, %v", i, data, err)
		}
		if _, err := os.Stat(filepath.Join(out, "artifacts", fmt.Sprintf("t%d-a1-frames", i), "ms_000100.jpg")); err != nil {
			t.Errorf("shard %d's frame: %v", i, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(out, "artifacts", "link.har")); !os.IsNotExist(err) {
		t.Errorf("the link was carried: %v", err)
	}
}
