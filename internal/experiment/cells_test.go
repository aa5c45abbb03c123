package experiment

import (
	"context"
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
