package experiment

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/safefs"
)

// MergeResult is what Merge made of its shards.
type MergeResult struct {
	Shards, Trials int
	// Missing are the shards of the plan not given ("3/20"), whose
	// trials the merged run lacks.
	Missing []string
	// Artifacts counts the files of the shards' artifacts directories
	// (HARs, captures, qlogs, frames) carried into the merged run;
	// ArtifactsSkipped what was not a file or directory there (a link).
	Artifacts, ArtifactsSkipped int
	Elapsed                     time.Duration
}

// shardRun is one shard directory's facts.
type shardRun struct {
	dir   string
	id    plan.ShardID
	facts map[string]string
	spec  string
}

// artifactsDir is where a run keeps its loads' files (HARs, captures,
// qlogs, net logs, frames), named in the trials' artifacts column.
const artifactsDir = "artifacts"

// mergingName is the merged database while it is being made: it becomes
// results.db only once every shard is in, so that a merge interrupted or
// killed half-way never leaves a run that reads as a whole one.
const mergingName = results.FileName + ".merging"

// Merge merges the run directories of shards of one plan (quicbench run
// --shard) into the new run directory out, which report and export then
// read as one run. It refuses shards of different specs or quicbench
// versions, a shard given twice, a trial in two shards, a trial whose ID
// is not its levels' or whose repetition the spec does not have, and a
// value of another type than its column's. The merged run keeps the first
// shard's facts and, under "shard I/N: KEY", every shard's fact that
// differs from them and every netcheck of a network an earlier shard had
// checked too, and the shards' artifacts (safefs.CopyTree: no link
// followed or copied). Canceling ctx stops it; an interrupted or failed merge
// leaves out as it found it.
func Merge(ctx context.Context, out string, dirs []string) (_ MergeResult, err error) {
	start := time.Now()
	shards, err := readShards(ctx, dirs)
	if err != nil {
		return MergeResult{}, err
	}
	res := MergeResult{Shards: len(shards), Missing: missingShards(shards)}
	unlock, undo, err := newMergeDir(out)
	if err != nil {
		return res, err
	}
	defer func() {
		unlock()
		if err != nil {
			undo()
		}
	}()
	if err := mergeInto(ctx, out, shards, &res); err != nil {
		return res, err
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// mergeInto merges the shards into out's partial database and, once all
// are in, makes it the run's.
func mergeInto(ctx context.Context, out string, shards []shardRun, res *MergeResult) error {
	partial := filepath.Join(out, mergingName)
	store, err := results.Create(partial, mergedMeta(shards))
	if err != nil {
		return err
	}
	for _, sh := range shards {
		if err := ctx.Err(); err != nil {
			store.Close()
			return err
		}
		n, dupNets, err := store.Merge(ctx, filepath.Join(sh.dir, results.FileName))
		if err == nil {
			err = keepNetchecks(store, sh, dupNets)
		}
		if err != nil {
			store.Close()
			return err
		}
		res.Trials += n
	}
	if err := store.Close(); err != nil {
		return err
	}
	for _, sh := range shards {
		files, skipped, err := safefs.CopyTree(ctx, sh.dir, out, artifactsDir)
		res.Artifacts, res.ArtifactsSkipped = res.Artifacts+files, res.ArtifactsSkipped+skipped
		if err != nil {
			return fmt.Errorf("merged run: artifacts of %s: %w", sh.dir, err)
		}
	}
	if err := safefs.WriteFile(out, "spec.yaml", []byte(shards[0].spec), 0o644); err != nil {
		return fmt.Errorf("merged run: %w", err)
	}
	if err := os.Rename(partial, filepath.Join(out, results.FileName)); err != nil {
		return fmt.Errorf("merged run: %w", err)
	}
	return nil
}

// readShards reads and checks the shards' facts and trials.
func readShards(ctx context.Context, dirs []string) ([]shardRun, error) {
	if len(dirs) == 0 {
		return nil, inputErrorf("give the shards' run directories to merge")
	}
	var shards []shardRun
	seen := map[plan.ShardID]string{}
	for _, dir := range dirs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sh, err := readShard(dir)
		if err != nil {
			return nil, err
		}
		first := sh
		if len(shards) > 0 {
			first = shards[0]
		}
		switch {
		case sh.facts["spec_sha256"] != first.facts["spec_sha256"]:
			return nil, inputErrorf("%s ran another spec than %s (SHA-256 %.12s…, not %.12s…): merge shards of one spec", dir, first.dir, sh.facts["spec_sha256"], first.facts["spec_sha256"])
		case sh.facts["quicbench_version"] != first.facts["quicbench_version"]:
			return nil, inputErrorf("%s ran quicbench %s, %s ran %s: merge shards of one version", dir, sh.facts["quicbench_version"], first.dir, first.facts["quicbench_version"])
		case sh.id.N != first.id.N:
			return nil, inputErrorf("%s is shard %s, %s shard %s: merge the shards of one split", dir, sh.id, first.dir, first.id)
		case seen[sh.id] != "":
			return nil, inputErrorf("%s and %s are both shard %s: give each shard once", seen[sh.id], dir, sh.id)
		}
		seen[sh.id] = dir
		shards = append(shards, sh)
	}
	slices.SortFunc(shards, func(a, b shardRun) int { return a.id.I - b.id.I })
	return shards, nil
}

// readShard reads one shard directory's facts.
func readShard(dir string) (shardRun, error) {
	store, err := results.OpenReadOnly(filepath.Join(dir, results.FileName))
	if err != nil {
		return shardRun{}, &InputError{Err: err}
	}
	defer store.Close()
	facts, err := store.Facts()
	if err != nil {
		return shardRun{}, err
	}
	text, err := store.Meta("spec")
	if err != nil {
		return shardRun{}, err
	}
	id, err := plan.ParseShard(facts["shard"])
	if err != nil {
		return shardRun{}, inputErrorf("%s is not a shard's run (run with --shard I/N)", dir)
	}
	if err := store.CheckTypes(context.Background()); err != nil {
		return shardRun{}, &InputError{Err: err}
	}
	if err := checkShardTrials(store, dir, text); err != nil {
		return shardRun{}, err
	}
	return shardRun{dir: dir, id: id, facts: facts, spec: text}, nil
}

// checkShardTrials checks each of a shard's trials against its spec: its
// ID is the one its levels and repetition make, and its repetition is one
// the spec has.
func checkShardTrials(store *results.Store, dir, specText string) error {
	most, err := results.MaxRepetitions([]byte(specText))
	if err != nil {
		return &InputError{Err: fmt.Errorf("%s: %w", dir, err)}
	}
	sole := soleClient(specText)
	return store.EachTrialKey(func(t results.TrialKey) error {
		want := fmt.Sprintf("%s-r%d", plan.Cell{Levels: t.Levels.Factors(), SoleClient: sole}.ID(), t.Rep)
		switch {
		case t.Rep < 1 || int(t.Rep) > most:
			return inputErrorf("%s: trial %.40s is repetition %d, but the spec has %d: the shard was altered, or is of another spec", dir, t.ID, t.Rep, most)
		case t.ID != want:
			return inputErrorf("%s: trial %.40s is not the trial its levels and repetition make (%s): the shard was altered", dir, t.ID, want)
		}
		return nil
	})
}

// soleClient says whether a stored spec lists at most one client
// (factors.clients), as plan.Build tells its cells (plan.Cell.SoleClient).
func soleClient(specText string) bool {
	var f struct {
		Factors struct {
			Clients yaml.Node `yaml:"clients"`
		} `yaml:"factors"`
	}
	if yaml.Unmarshal([]byte(specText), &f) != nil {
		return true
	}
	return f.Factors.Clients.Kind != yaml.SequenceNode || len(f.Factors.Clients.Content) <= 1
}

// missingShards lists the shards of the split not among shards.
func missingShards(shards []shardRun) []string {
	have := map[int]bool{}
	for _, sh := range shards {
		have[sh.id.I] = true
	}
	var missing []string
	for i := 1; i <= shards[0].id.N; i++ {
		if !have[i] {
			missing = append(missing, plan.ShardID{I: i, N: shards[0].id.N}.String())
		}
	}
	return missing
}

// mergedMeta is the merged run's facts: the first shard's, the spec, the
// shards merged and the plan's size, and what differs per shard.
func mergedMeta(shards []shardRun) map[string]string {
	meta := maps.Clone(shards[0].facts)
	delete(meta, "shard")
	meta["spec"] = shards[0].spec
	total := 0
	var ids []string
	for _, sh := range shards {
		n, _ := strconv.Atoi(sh.facts["plan_trials"])
		total += n
		ids = append(ids, sh.id.String())
		for k, v := range sh.facts {
			if k != "shard" && k != "plan_trials" && k != "created_at" && shards[0].facts[k] != v {
				meta[fmt.Sprintf("shard %s: %s", sh.id, k)] = v
			}
		}
	}
	meta["plan_trials"] = strconv.Itoa(total)
	meta["merged_shards"] = strings.Join(ids, " ")
	meta["created_at"] = time.Now().UTC().Format(time.RFC3339)
	return meta
}

// keepNetchecks stores the shard's netchecks of networks the merged run
// already had one of, as facts.
func keepNetchecks(store *results.Store, sh shardRun, names []string) error {
	if len(names) == 0 {
		return nil
	}
	src, err := results.OpenReadOnly(filepath.Join(sh.dir, results.FileName))
	if err != nil {
		return err
	}
	defer src.Close()
	for _, name := range names {
		_, report, err := src.NetworkReport(name)
		if err != nil {
			return err
		}
		if err := store.SetMeta(fmt.Sprintf("shard %s: netcheck %s", sh.id, name), report); err != nil {
			return err
		}
	}
	return nil
}

// newMergeDir makes out a new merged run's directory and takes its lock:
// out is new, empty, or holds only what a failed merge left (its lock,
// partial database and artifacts), which is removed. undo takes out back to what it was.
func newMergeDir(out string) (unlock, undo func(), err error) {
	_, statErr := os.Lstat(out)
	made := errors.Is(statErr, os.ErrNotExist)
	entries, err := os.ReadDir(out)
	if err != nil && !made {
		return nil, nil, inputErrorf("merged run %s: %v", out, err)
	}
	for _, e := range entries {
		if e.Name() != safefs.LockFile && e.Name() != artifactsDir && !strings.HasPrefix(e.Name(), mergingName) {
			return nil, nil, inputErrorf("%s is not empty: merge into a new directory", out)
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, nil, fmt.Errorf("merged run: %w", err)
	}
	if unlock, err = safefs.Lock(out); err != nil {
		var held *safefs.HeldError
		if errors.As(err, &held) {
			return nil, nil, &InputError{Err: err}
		}
		return nil, nil, err
	}
	removePartial(out)
	undo = func() {
		removePartial(out)
		os.Remove(filepath.Join(out, "spec.yaml"))
		os.Remove(filepath.Join(out, safefs.LockFile))
		if made {
			os.Remove(out)
		}
	}
	return unlock, undo, nil
}

// removePartial removes a merge's partial database, its journals and the
// artifacts it carried.
func removePartial(out string) {
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		os.Remove(filepath.Join(out, mergingName+suffix))
	}
	os.RemoveAll(filepath.Join(out, artifactsDir))
}
