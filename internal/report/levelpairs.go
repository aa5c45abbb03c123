package report

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/stats"
)

// LevelPairsTitle says what the table of level pairs holds.
func LevelPairsTitle(o analysis.Options) string {
	return fmt.Sprintf("Pairs of the TCP stacks, QUIC stacks, servers and clients that vary, per protocol in otherwise equal settings, the later level against the earlier in alphabetical order: ratio = median(later)/median(earlier) of %s, verdict by Mann–Whitney U at α = %g", analysis.MetricLabel(o.Metric), stats.Alpha)
}

// writeLevelPairs writes a.LevelPairs as a table.
func writeLevelPairs(w io.Writer, a *analysis.Analysis, v analysis.Varied) {
	if len(a.LevelPairs) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s:\n", LevelPairsTitle(a.Options))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%sprotocol\tfactor\tpair\tn\tmedian earlier\tmedian later [%s CI]\tratio of medians\tratio (HL) [%s CI]\tp (test)\tverdict\n", variedHeader(v), levelText(), levelText())
	for _, p := range a.LevelPairs {
		c := p.Comparison
		fmt.Fprintf(tw, "%s%s\t%s\t%s/%s\t%s\n", variedRow(v, c.Setting),
			c.Baseline.Protocol, p.FactorName(), p.Later, p.Earlier, pairText(c))
	}
	tw.Flush()
}

// levelPairsTable is a.LevelPairs as CSV rows, with a header.
func levelPairsTable(a *analysis.Analysis, f func(float64) string) [][]string {
	rows := [][]string{append(settingHeader(), "protocol", "factor", "later", "earlier", "n_earlier", "n_later", "median_earlier", "median_later",
		"median_ci99_lo_later", "median_ci99_hi_later", "ratio", "verdict_ratio", "verdict_ci99_lo", "verdict_ci99_hi", "p_verdict", "p_mann_whitney", "p_welch", "verdict")}
	for _, p := range a.LevelPairs {
		c := p.Comparison
		rows = append(rows, append(settingCells(c.Setting), string(c.Baseline.Protocol), p.FactorName(), p.Later, p.Earlier,
			strconv.Itoa(len(c.Baseline.Values)), strconv.Itoa(len(c.Compare.Values)), f(c.Baseline.Summary.Median), f(c.Compare.Summary.Median),
			f(c.Compare.MedianCILo), f(c.Compare.MedianCIHi), f(c.Ratio), f(c.Estimate), f(c.RatioLo), f(c.RatioHi), f(c.Test.P), f(c.MannWhitney.P), f(c.Welch.P), string(c.Verdict)))
	}
	return rows
}
