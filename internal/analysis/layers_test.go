package analysis

import (
	"testing"

	"github.com/quicbench/quicbench/internal/testenv"
)

// TestAnalysisIsNumbersOnly: the analysis computes from results; it renders
// nothing (no report, no plotting, no HTML) and runs nothing (an
// allow-list of quicbench's packages, and no drawing library).
func TestAnalysisIsNumbersOnly(t *testing.T) {
	testenv.DependsOnlyOn(t, ".", []string{"units", "factor", "trust", "safefs", "results", "stats", "analysis"},
		[]string{"gonum.org/v1/plot", "html/template"})
}
