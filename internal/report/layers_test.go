package report

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestReportOnlyRenders: the report renders what it is given; of
// quicbench's packages it depends only on the results it reads, the
// analysis, the statistics, the visual metrics and what those stand on
// (an allow-list: not papers, which reproduce evaluates, nor anything
// that runs loads).
func TestReportOnlyRenders(t *testing.T) {
	allowed := []string{"units", "factor", "trust", "safefs", "har", "results", "stats", "visual", "analysis", "report"}
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	for _, dep := range deps {
		if name, ours := strings.CutPrefix(dep, "github.com/quicbench/quicbench/internal/"); ours && !slices.Contains(allowed, name) {
			t.Errorf("report depends on %s, which is not among %v", name, allowed)
		}
	}
	if !slices.Contains(deps, "github.com/quicbench/quicbench/internal/results") {
		t.Errorf("the guard reads no dependencies: %v", deps)
	}
}
