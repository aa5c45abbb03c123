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

// TestARunOfChosenCellsLoadsThemAlone: a run given cells (as a
// reproduction's decide round gives them) loads those cells' trials and
// no other, and resumes only with the same cells.
func TestARunOfChosenCellsLoadsThemAlone(t *testing.T) {
	testenv.RequireRoot(t)
	s, err := spec.Parse([]byte(shardSpec))
	if err != nil {
		t.Fatal(err)
	}
	var chosen []string
	for _, tr := range plan.Build(s).Trials {
		if tr.Cell.Levels.Network() == "b" && tr.Rep == 1 {
			chosen = append(chosen, tr.Cell.ID())
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
	if res.Total != 8 || res.Done != 8 || len(levels) != 8 {
		t.Fatalf("%d of %d trials recorded (%d read), want network b's 4 cells × 2 repetitions", res.Done, res.Total, len(levels))
	}
	for id, lv := range levels {
		if lv.Network != "b" {
			t.Errorf("trial %s of network %s: not a chosen cell", id, lv.Network)
		}
	}
	if _, err := Run(context.Background(), RunConfig{Spec: s, Dir: dir, Resume: true, Cells: chosen[:1]}); err == nil || !strings.Contains(err.Error(), "chosen cells") {
		t.Errorf("resumed with other cells: %v, want refused", err)
	}
	if again, err := Run(context.Background(), RunConfig{Spec: s, Dir: dir, Resume: true, Cells: chosen}); err != nil || again.Ran != 0 {
		t.Errorf("resumed as it started: ran %v, %v; want nothing more to run", again, err)
	}
}
