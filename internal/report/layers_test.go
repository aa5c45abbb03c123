package report

import (
	"testing"

	"github.com/quicbench/quicbench/internal/testenv"
)

// TestReportOnlyRenders: the report renders what it is given; of
// quicbench's packages it depends only on the results it reads, the
// analysis, the statistics, the visual metrics and what those stand on
// (an allow-list: not papers, which reproduce evaluates, nor anything
// that runs loads).
func TestReportOnlyRenders(t *testing.T) {
	testenv.DependsOnlyOn(t, ".", []string{"units", "factor", "trust", "safefs", "har", "results", "stats", "visual", "analysis", "report"}, nil)
}
