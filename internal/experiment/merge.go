package experiment

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

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
	Elapsed time.Duration
}

// shardRun is one shard directory's facts.
type shardRun struct {
	dir   string
	id    plan.ShardID
	facts map[string]string
	spec  string
}

// Merge merges the run directories of shards of one plan (quicbench run
// --shard) into the new run directory out, which report and export then
// read as one run. It refuses shards of different specs or quicbench
// versions, a shard given twice and a trial in two shards. The merged
// run keeps the first shard's facts and, under "shard I/N: KEY", every
// shard's fact that differs from them and every netcheck of a network
// an earlier shard had checked too.
func Merge(out string, dirs []string) (_ MergeResult, err error) {
	start := time.Now()
	shards, err := readShards(dirs)
	if err != nil {
		return MergeResult{}, err
	}
	res := MergeResult{Shards: len(shards), Missing: missingShards(shards)}
	unlock, err := newRunDir(out)
	if err != nil {
		return res, err
	}
	defer unlock()
	dbPath := filepath.Join(out, results.FileName)
	store, err := results.Create(dbPath, mergedMeta(shards))
	if err != nil {
		return res, err
	}
	defer func() {
		store.Close()
		if err != nil { // no half-merged run that reads as a whole one
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(dbPath + suffix)
			}
		}
	}()
	for _, sh := range shards {
		n, dupNets, err := store.Merge(filepath.Join(sh.dir, results.FileName))
		if err != nil {
			return res, err
		}
		res.Trials += n
		if err := keepNetchecks(store, sh, dupNets); err != nil {
			return res, err
		}
	}
	if err := safefs.WriteFile(out, "spec.yaml", []byte(shards[0].spec), 0o644); err != nil {
		return res, fmt.Errorf("merged run: %w", err)
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// readShards reads and checks the shards' facts.
func readShards(dirs []string) ([]shardRun, error) {
	if len(dirs) == 0 {
		return nil, inputErrorf("give the shards' run directories to merge")
	}
	var shards []shardRun
	seen := map[plan.ShardID]string{}
	for _, dir := range dirs {
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
		return shardRun{}, &InputError{err}
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
	return shardRun{dir: dir, id: id, facts: facts, spec: text}, nil
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

// newRunDir makes dir a new, empty run directory and takes its lock.
func newRunDir(dir string) (func(), error) {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return nil, inputErrorf("%s is not empty: merge into a new directory", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("merged run: %w", err)
	}
	return safefs.Lock(dir)
}
