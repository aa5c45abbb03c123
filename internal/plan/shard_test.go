package plan

import (
	"slices"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/spec"
)

// TestShardsPartitionThePlan: the shards of Nepomuceno et al. 2018's example together
// are the plan, each trial once, each testbed in one shard, and in 20
// shards the largest estimate is within 10 % of the mean.
func TestShardsPartitionThePlan(t *testing.T) {
	s, err := spec.Load("../../examples/nepomuceno2018.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := Build(s)
	const n = 20
	seen := map[string]int{}
	setupShard := map[*Setup]int{}
	for i := 1; i <= n; i++ {
		sh := p.Shard(s, ShardID{i, n})
		for _, tr := range sh.Trials {
			seen[tr.ID]++
			if k, ok := setupShard[tr.Cell.Setup]; ok && k != i {
				t.Fatalf("setup %s in shards %d and %d", tr.Cell.Setup.Key(), k, i)
			}
			setupShard[tr.Cell.Setup] = i
		}
		if !slices.IsSortedFunc(sh.Trials, func(a, b Trial) int { return a.Seq - b.Seq }) {
			t.Errorf("shard %d is not in plan order", i)
		}
	}
	if len(seen) != len(p.Trials) {
		t.Fatalf("the shards hold %d trials, the plan %d", len(seen), len(p.Trials))
	}
	for id, k := range seen {
		if k != 1 {
			t.Fatalf("trial %s in %d shards", id, k)
		}
	}
	est := p.ShardEstimates(s, n)
	var sum, most time.Duration
	for _, e := range est {
		sum += e
		most = max(most, e)
	}
	mean := sum / n
	t.Logf("Nepomuceno et al. 2018 in %d shards: largest %v, mean %v (+%.1f %%)", n, most.Round(time.Second), mean.Round(time.Second), 100*(float64(most)/float64(mean)-1))
	if float64(most) > 1.10*float64(mean) {
		t.Errorf("largest shard %v is more than 10 %% above the mean %v", most, mean)
	}
}

func TestParseShard(t *testing.T) {
	if id, err := ParseShard("3/20"); err != nil || id != (ShardID{3, 20}) || id.String() != "3/20" {
		t.Errorf("3/20: %v %v", id, err)
	}
	for _, bad := range []string{"0/3", "4/3", "3", "a/b", "1/0", "1/20000"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
