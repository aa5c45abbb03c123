package analysis

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestAnalysisIsNumbersOnly: the analysis computes from results; it renders
// nothing (no report, no plotting, no HTML) and runs nothing (an
// allow-list of quicbench's packages, and no drawing library).
func TestAnalysisIsNumbersOnly(t *testing.T) {
	allowed := []string{"units", "factor", "trust", "safefs", "results", "stats", "analysis"}
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	for _, dep := range deps {
		if name, ours := strings.CutPrefix(dep, "github.com/quicbench/quicbench/internal/"); ours && !slices.Contains(allowed, name) {
			t.Errorf("analysis depends on %s, which is not among %v", name, allowed)
		}
		if strings.HasPrefix(dep, "gonum.org/v1/plot") || dep == "html/template" {
			t.Errorf("analysis depends on %s: rendering is the report's", dep)
		}
	}
	if !slices.Contains(deps, "github.com/quicbench/quicbench/internal/results") {
		t.Errorf("the guard reads no dependencies: %v", deps)
	}
}
