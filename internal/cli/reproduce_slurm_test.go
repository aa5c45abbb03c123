package cli

import (
	"testing"
	"time"
)

// TestShardsAndWallTime: a spec gets a shard a node, more where a shard
// would pass maxTaskHours, fewer where it would be under minTaskTime (Cook
// et al.'s 4-minute Alt-Svc spec is one shard), never more than its
// trials; the wall time is the longest node's share of the shards,
// longest first.
func TestShardsAndWallTime(t *testing.T) {
	for _, c := range []struct {
		est           time.Duration
		trials, nodes int
		want          int
	}{
		{time.Hour, 100, 16, 4},
		{4 * time.Minute, 400, 16, 1},
		{19 * time.Hour, 4320, 1, 5},
		{19 * time.Hour, 4320, 16, 16},
		{200 * time.Hour, 4320, 16, 50},
		{16 * time.Hour, 3, 16, 3},
	} {
		if got := shardsFor(c.est, c.trials, c.nodes); got != c.want {
			t.Errorf("shardsFor(%v, %d trials, %d nodes) = %d, want %d", c.est, c.trials, c.nodes, got, c.want)
		}
	}
	job := func(est time.Duration, shards int) reproSlurmJob {
		return reproSlurmJob{estimate: est, job: &slurmJob{shards: shards}}
	}
	for _, c := range []struct {
		jobs  []reproSlurmJob
		nodes int
		want  time.Duration
	}{
		{[]reproSlurmJob{job(16*time.Hour, 16)}, 16, time.Hour},
		{[]reproSlurmJob{job(16*time.Hour, 16)}, 1, 16 * time.Hour},
		{[]reproSlurmJob{job(16*time.Hour, 16)}, 5, 4 * time.Hour},                    // 16 shards of 1 h on 5 nodes: 4 rounds
		{[]reproSlurmJob{job(8*time.Hour, 2), job(3*time.Hour, 3)}, 2, 6 * time.Hour}, // 4, 4, 1, 1, 1 h: 4+1+1 and 4+1
	} {
		if got := slurmWallTime(c.jobs, c.nodes); got != c.want {
			t.Errorf("slurmWallTime(%d nodes) = %v, want %v", c.nodes, got, c.want)
		}
	}
}
