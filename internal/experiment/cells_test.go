package experiment

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/spec"
	"github.com/quicbench/quicbench/internal/testenv"
)

// TestARunOfChosenCellsLoadsThemAlone: a run given cells and loads (as a
// reproduction's decide round gives them) loads those cells as many times
// as given and no other, and resumes only with the same choice.
func TestARunOfChosenCellsLoadsThemAlone(t *testing.T) {
	testenv.RequireRoot(t)
	s, err := spec.Parse([]byte(shardSpec))
	if err != nil {
		t.Fatal(err)
	}
	chosen, fewer := map[string]int{}, map[string]int{}
	for _, tr := range plan.Build(s).Trials {
		if tr.Cell.Levels.Network() == "b" && tr.Rep == 1 {
			chosen[tr.Cell.ID()], fewer[tr.Cell.ID()] = 1, 1
			if tr.Cell.Levels.Page() == "synthetic:2x5KB" {
				chosen[tr.Cell.ID()] = 2
			}
		}
	}
	dir := t.TempDir() + "/chosen"
	res, err := Run(context.Background(), RunConfig{Spec: s, Dir: dir, Cells: chosen})
	if err != nil {
		t.Fatal(err)
	}
	levels, err := results.RunLevels(dir)
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 6 || res.Done != 6 || len(levels) != 6 {
		t.Fatalf("%d of %d trials recorded (%d read), want network b's 4 cells, the 2-object page's twice, the other's once: 6", res.Done, res.Total, len(levels))
	}
	for id, lv := range levels {
		if lv.Network != "b" || (lv.Page != "synthetic:2x5KB" && strings.HasSuffix(id, "-r2")) {
			t.Errorf("trial %s of network %s, page %s: not a chosen load", id, lv.Network, lv.Page)
		}
	}
	if _, err := Run(context.Background(), RunConfig{Spec: s, Dir: dir, Resume: true, Cells: fewer}); err == nil || !strings.Contains(err.Error(), "chosen cells") {
		t.Errorf("resumed with other cells: %v, want refused", err)
	}
	if again, err := Run(context.Background(), RunConfig{Spec: s, Dir: dir, Resume: true, Cells: chosen}); err != nil || again.Ran != 0 {
		t.Errorf("resumed as it started: ran %v, %v; want nothing more to run", again, err)
	}
}

// TestARunOfChosenCellsGrowsWhereAllowed: a run of chosen cells resumed
// with Grow (a sequential reproduction whose design changed between
// versions) goes on to the new cells and repetitions, keeping what it
// loaded and the earlier choice in its meta; a spec changed in more than
// its repetitions is refused all the same.
func TestARunOfChosenCellsGrowsWhereAllowed(t *testing.T) {
	testenv.RequireRoot(t)
	oneRep := strings.Replace(shardSpec, "repetitions: 2", "repetitions: 1", 1)
	s, err := spec.Parse([]byte(oneRep))
	if err != nil {
		t.Fatal(err)
	}
	twoReps, err := spec.Parse([]byte(shardSpec))
	if err != nil {
		t.Fatal(err)
	}
	first, grown := map[string]int{}, map[string]int{}
	for _, tr := range plan.Build(s).Trials {
		if tr.Cell.Levels.Page() == "synthetic:2x5KB" && tr.Cell.Levels.Network() == "a" {
			first[tr.Cell.ID()], grown[tr.Cell.ID()] = 1, 2
		}
	}
	dir := t.TempDir() + "/grows"
	if _, err := Run(context.Background(), RunConfig{Spec: s, Dir: dir, Cells: first}); err != nil {
		t.Fatal(err)
	}
	otherSpec, err := spec.Parse([]byte(strings.Replace(shardSpec, "seed: 5", "seed: 6", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), RunConfig{Spec: otherSpec, Dir: dir, Resume: true, Grow: true, Cells: grown}); err == nil || !strings.Contains(err.Error(), "more than its repetitions") {
		t.Errorf("grown with another seed: %v, want refused", err)
	}
	res, err := Run(context.Background(), RunConfig{Spec: twoReps, Dir: dir, Resume: true, Grow: true, Cells: grown})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ran != 2 || res.Done != 4 || res.Total != 4 {
		t.Errorf("grown from 2 loads to 4: ran %d, %d of %d recorded; want 2 more, 4 of 4", res.Ran, res.Done, res.Total)
	}
	store, err := results.Open(dir + "/" + results.FileName)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	sha, _ := store.Meta("spec_sha256")
	from, _ := store.Meta("grown_from")
	if sha != twoReps.SHA256 || !regexp.MustCompile(`, repetitions 1, cells c[0-9a-f]+:1 c[0-9a-f]+:1$`).MatchString(from) {
		t.Errorf("meta after growing: spec %.12s (want %.12s), grown_from %q (want the earlier 1 repetition and 2 cells of 1 load)", sha, twoReps.SHA256, from)
	}
	if again, err := Run(context.Background(), RunConfig{Spec: twoReps, Dir: dir, Resume: true, Cells: grown}); err != nil || again.Ran != 0 {
		t.Errorf("resumed as it now is, without Grow: ran %v, %v; want nothing more to run", again, err)
	}
}
