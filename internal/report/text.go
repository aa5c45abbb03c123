package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/stats"
)

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// WriteText writes the terminal summary of a, the analysis of the run of
// pg (its name and claims).
func WriteText(w io.Writer, pg Page, a *analysis.Analysis) {
	o := a.Options
	fmt.Fprintf(w, "%s: %d trials (%d failed); metric %s in ms; %s against %s\n", pg.Name, a.Trials, a.Failed, analysis.MetricLabel(o.Metric), o.Compare, o.Baseline)
	fmt.Fprintf(w, "Verdict: Wilcoxon signed-rank over paired loads, else Mann–Whitney U, two-sided, α = %g, with its ratio (Hodges–Lehmann) and the %s interval that inverts it, so the interval excludes 1 exactly when the verdict says faster or slower; every interval is at %s; ratio of medians = median(%s)/median(%s); diff = mean(%s) − mean(%s); gain = diff/mean(%s).\n\n",
		stats.Alpha, levelText(), levelText(), o.Compare, o.Baseline, o.Compare, o.Baseline, o.Baseline)
	if u := o.Until; u != nil {
		fmt.Fprintf(w, "Under the run's until rule, %s against %s is judged at the look that stopped each setting: its verdict is the side of 1 that look's repeated interval lies on (Wilcoxon or Mann–Whitney inverted at the look's level, above %s, so that the looks' intervals hold %s together), and that interval is the one given.\n\n",
			u.Compare, u.Baseline, levelText(), levelText())
	}
	if answer := Answer(a); len(answer) > 0 {
		fmt.Fprintln(w, "Answer:")
		for _, line := range answer {
			fmt.Fprintln(w, "  "+line)
		}
		fmt.Fprintln(w)
	}
	writeClaims(w, pg.Claims)
	v := analysis.VariedIn(a.Comparisons)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%sn %s\tn %s\tfailed\tmedian %s\tmedian %s [%s CI]\tratio of medians\tratio (HL) [%s CI]\tdiff\tgain\tp (test)\tp (MWU)\tp (Welch)\tverdict\n",
		variedHeader(v), o.Baseline, o.Compare, o.Baseline, o.Compare, levelText(), levelText())
	for _, c := range a.Comparisons {
		fmt.Fprintf(tw, "%s%d\t%d\t%d\t%s\t%s [%s, %s]\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", variedRow(v, c.Setting),
			len(c.Baseline.Values), len(c.Compare.Values), c.Baseline.Failed+c.Compare.Failed,
			num(c.Baseline.Summary.Median, 1), num(c.Compare.Summary.Median, 1), num(c.Compare.MedianCILo, 1), num(c.Compare.MedianCIHi, 1),
			num(c.Ratio, 3), ratioInterval(c), signed(c.Diff, 1), percent(c.Gain), testP(c), pval(c.MannWhitney), pval(c.Welch), VerdictText(c))
	}
	tw.Flush()
	writePairs(w, a, v)
	writeLevelPairs(w, a, v)
	for _, e := range a.Experimental {
		fmt.Fprintf(w, "Experimental QUIC stack %s\n", e)
	}
	writePaired(w, a, v)
	writeStopping(w, a, v)
	writeBounds(w, a, v)
	writeStalls(w, a, v)
	WriteParts(w, a)
	writeCalibration(w, a.Calibration)
	writeEmulatorLatency(w, a.EmulatorLatency)
	writeStacks(w, a.Stacks, a.Testbeds)
	writeUses(w, a)
	writeShares(w, a, v)
	writeWork(w, a.Work, v)
	writeUnmatched(w, a.Unmatched)
	writeCPU(w, a.CPU, o, v)
	writeANOVAs(w, a.ANOVAs, v.Without(factor.IDStack), "TCP stacks (Wolsing et al. 2019)", "stacks")
	writeANOVAs(w, a.QUICANOVAs, v.Without(factor.IDQUIC), "QUIC stacks (Wolsing et al. 2019)", "stacks")
	writeANOVAs(w, a.ClientANOVAs, v.Without(factor.IDClient), "clients", "clients")
}

// PairsTitle says what the table of the other protocol pairs holds.
func PairsTitle(o analysis.Options) string {
	return fmt.Sprintf("Every other pair of the run's protocols, the later against the earlier (h3 against h2 and h1, h2 against h1): ratio = median(later)/median(earlier) of %s; the verdict at α = %g and its %s interval (Hodges–Lehmann, the test inverted) by Wilcoxon signed-rank over paired loads, else Mann–Whitney U", analysis.MetricLabel(o.Metric), stats.Alpha, levelText())
}

// writePairs writes a.Pairs: per setting, each pair's loads, medians,
// ratio with its interval, test and verdict.
func writePairs(w io.Writer, a *analysis.Analysis, v analysis.Varied) {
	if len(a.Pairs) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s:\n", PairsTitle(a.Options))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%spair\tn\tmedian earlier\tmedian later [%s CI]\tratio of medians\tratio (HL) [%s CI]\tp (test)\tverdict\n", variedHeader(v), levelText(), levelText())
	for _, c := range a.Pairs {
		fmt.Fprintf(tw, "%s%s/%s\t%s\n", variedRow(v, c.Setting),
			c.Compare.Protocol, c.Baseline.Protocol, pairText(c))
	}
	tw.Flush()
}

// pairText is a pair's cells after its name, tab-separated: both sides'
// loads, medians (the later's with its interval), the ratio of medians,
// the verdict's ratio with its interval, its test's p and the verdict.
func pairText(c analysis.Comparison) string {
	return fmt.Sprintf("%d, %d\t%s\t%s [%s, %s]\t%s\t%s\t%s\t%s", len(c.Baseline.Values), len(c.Compare.Values),
		num(c.Baseline.Summary.Median, 1), num(c.Compare.Summary.Median, 1), num(c.Compare.MedianCILo, 1), num(c.Compare.MedianCIHi, 1),
		num(c.Ratio, 3), ratioInterval(c), testP(c), VerdictText(c))
}

// levelText is the level of every interval beside a verdict, "99 %":
// 1 − stats.Alpha.
func levelText() string { return strconv.FormatFloat(100*(1-stats.Alpha), 'g', -1, 64) + " %" }

// ratioInterval is the verdict's ratio with its interval, "0.790 [0.640,
// 0.941]", or with "too few loads" where there is none.
func ratioInterval(c analysis.Comparison) string {
	if !c.IntervalOK {
		return num(c.Estimate, 3) + " [too few loads]"
	}
	return fmt.Sprintf("%s [%s, %s]", num(c.Estimate, 3), num(c.RatioLo, 3), num(c.RatioHi, 3))
}

// testP is the p of the verdict's test with its name, "0.016 (MWU)" or
// "0.0625 (Wilcoxon)"; under an until rule, the look the verdict is
// from, "sequential, look 12 (Wilcoxon)": a fixed test's p after many
// looks would not hold α.
func testP(c analysis.Comparison) string {
	name := "MWU"
	if c.Paired != nil {
		name = "Wilcoxon"
	}
	if st := c.Stopping; st != nil {
		if st.Looked == 0 {
			return fmt.Sprintf("sequential, no look yet (%s)", name)
		}
		return fmt.Sprintf("sequential, look %d (%s)", st.Looked, name)
	}
	return pval(c.Test) + " (" + name + ")"
}

// header is a table's first cells: network, page and the factors that
// vary, each followed by a tab.
func variedHeader(v analysis.Varied) string {
	return cells(append([]string{"network", "page"}, v.Names()...))
}

// row is a setting's first cells under header.
func variedRow(v analysis.Varied, s analysis.Setting) string {
	return cells(append([]string{s.Network(), s.Page()}, v.Values(s)...))
}

// cells joins table cells, each followed by a tab.
func cells(c []string) string {
	if len(c) == 0 {
		return ""
	}
	return strings.Join(c, "\t") + "\t"
}

// ShareTitle says what the share table counts.
func ShareTitle(o analysis.Options) string {
	return fmt.Sprintf("Pages where %s's mean %s is below %s's, per setting of the other factors (as Nepomuceno et al. 2018, Table III)", o.Compare, analysis.MetricLabel(o.Metric), o.Baseline)
}

func writeShares(w io.Writer, a *analysis.Analysis, v analysis.Varied) {
	if len(a.Shares) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s:\n", ShareTitle(a.Options))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%spages\tfaster\tshare\tsignificantly faster\n", cells(append([]string{"network"}, v.Names()...)))
	for _, s := range a.Shares {
		fmt.Fprintf(tw, "%s%d\t%d\t%s\t%d\n", cells(append([]string{s.Setting.Network()}, v.Values(s.Setting)...)),
			s.Pages, s.Faster, percent(float64(s.Faster)/float64(s.Pages)), s.Significant)
	}
	tw.Flush()
}

// writeANOVAs writes the ANOVAs across the levels called what, each a
// unit ("stacks", "clients").
func writeANOVAs(w io.Writer, anovas []analysis.StackANOVA, v analysis.Varied, what, unit string) {
	if len(anovas) == 0 {
		return
	}
	fmt.Fprintf(w, "\nOne-way ANOVA across %s; the %s differ where p < 0.01:\n", what, unit)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%sprotocol\t%s\tF\tp\t%s differ\n", variedHeader(v), unit, unit)
	for _, an := range anovas {
		differ := "no"
		switch {
		case !an.Test.OK:
			differ = "too few loads: " + an.Test.Reason
		case an.Test.P < stats.Alpha:
			differ = "yes"
		}
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%s\n", variedRow(v, an.Setting),
			an.Protocol, strings.Join(an.Stacks, ","), num(an.Test.Statistic, 2), pval(an.Test), differ)
	}
	tw.Flush()
}

// VerdictText is the comparison's verdict, saying why when the loads were
// too few for the test, and how many it would need.
func VerdictText(c analysis.Comparison) string {
	t := c.Test
	switch {
	case c.Verdict != stats.TooFewSamples:
		return string(c.Verdict)
	case c.Stopping != nil && c.Stopping.Looked == 0:
		return fmt.Sprintf("%s (the until rule looks first after %d repetitions)", c.Verdict, c.Stopping.Min)
	case c.Stopping != nil:
		return fmt.Sprintf("%s (the look after %d repetitions needs %d for its %s)", c.Verdict, c.Stopping.Looked, c.NeedLoads, lookLevelText(c.Stopping.Look.Level))
	case !t.OK:
		return fmt.Sprintf("%s (%s)", c.Verdict, t.Reason)
	case c.Paired != nil && c.NeedLoads > 0:
		return fmt.Sprintf("%s (%d pairs: p ≥ %.2g; the paired test needs %d)", c.Verdict, c.Paired.Pairs, t.MinP, c.NeedLoads)
	case c.NeedLoads > 0:
		return fmt.Sprintf("%s (with %d and %d loads p ≥ %.2g; Mann–Whitney needs %d each)", c.Verdict, len(c.Baseline.Values), len(c.Compare.Values), t.MinP, c.NeedLoads)
	}
	return fmt.Sprintf("%s (with %d and %d loads p ≥ %.2g)", c.Verdict, len(c.Baseline.Values), len(c.Compare.Values), t.MinP)
}

func num(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

func signed(v float64, prec int) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

func percent(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return strconv.FormatFloat(100*v, 'f', 1, 64) + "%"
}

// pval formats a p-value with 2 significant digits, "<1e-6" below that.
func pval(t stats.Test) string {
	switch {
	case !t.OK || math.IsNaN(t.P):
		return "-"
	case t.P < 1e-6:
		return "<1e-6"
	}
	return strconv.FormatFloat(t.P, 'g', 2, 64)
}

// writePaired shows the paired analysis of the settings whose loads were
// paired.
func writePaired(w io.Writer, a *analysis.Analysis, v analysis.Varied) {
	var paired []analysis.Comparison
	for _, c := range a.Comparisons {
		if c.Paired != nil {
			paired = append(paired, c)
		}
	}
	if len(paired) == 0 {
		return
	}
	o := a.Options
	fmt.Fprintf(w, "\nPaired loads (each repetition's loads started from the same link state): ratio = median of %s/%s over pairs (Hodges–Lehmann), Wilcoxon signed-rank test, the verdict's; beside it the width of the unpaired interval (Mann–Whitney inverted):\n", o.Compare, o.Baseline)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%spairs\tratio [%s CI]\tCI width paired\tCI width unpaired\tp (Wilcoxon)\n", variedHeader(v), levelText())
	for _, c := range paired {
		p := c.Paired
		ci := fmt.Sprintf("%s [%s, %s]", num(p.Ratio, 3), num(p.Lo, 3), num(p.Hi, 3))
		width := num(p.Hi-p.Lo, 3)
		if !p.CIOK {
			ci, width = num(p.Ratio, 3)+" [too few pairs]", "-"
		}
		fmt.Fprintf(tw, "%s%d\t%s\t%s\t%s\t%s\n", variedRow(v, c.Setting),
			p.Pairs, ci, width, num(c.UnpairedHi-c.UnpairedLo, 3), pval(p.Test))
	}
	tw.Flush()
}

// writeBounds sets each protocol's PLT beside its loads' physical lower
// bound: how much of the difference the handshakes and the page's round
// trips explain, and how much the transports' behaviour adds.
func writeBounds(w io.Writer, a *analysis.Analysis, v analysis.Varied) {
	var rows []analysis.Comparison
	for _, c := range a.Comparisons {
		if len(c.Baseline.Bounds) > 0 && len(c.Compare.Bounds) > 0 {
			rows = append(rows, c)
		}
	}
	if len(rows) == 0 {
		return
	}
	o := a.Options
	fmt.Fprintln(w, "\nPLT against the physical lower bound (handshake and dependency-chain round trips, bytes at the bottleneck rate); excess = PLT − bound; medians in ms:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%schain RTTs %s\tchain RTTs %s\tbound %s\tbound %s\texcess %s\texcess %s\tΔ PLT\tΔ bound\tΔ excess\n",
		variedHeader(v), o.Baseline, o.Compare, o.Baseline, o.Compare, o.Baseline, o.Compare)
	for _, c := range rows {
		b, q := c.Baseline, c.Compare
		bb, qb := stats.Median(b.Bounds), stats.Median(q.Bounds)
		be, qe := b.Summary.Median-bb, q.Summary.Median-qb
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", variedRow(v, c.Setting),
			num(b.ChainRTTs, 1), num(q.ChainRTTs, 1), num(bb, 1), num(qb, 1), num(be, 1), num(qe, 1),
			signed(q.Summary.Median-b.Summary.Median, 1), signed(qb-bb, 1), signed(qe-be, 1))
	}
	tw.Flush()
}

// writeStalls sets the protocols' waits for lost data side by side, and
// the time the baseline's and the compared protocol's bytes waited behind
// a missing TCP segment, in the settings where both recorded waits.
func writeStalls(w io.Writer, a *analysis.Analysis, v analysis.Varied) {
	var rows []analysis.Comparison
	for _, c := range a.Comparisons {
		if len(c.Baseline.LossWaits) > 0 && len(c.Compare.LossWaits) > 0 {
			rows = append(rows, c)
		}
	}
	if len(rows) == 0 {
		return
	}
	o := a.Options
	fmt.Fprintln(w, "\nWaits for lost data (from when a lost packet was due, or first sent over QUIC, to when its data arrived again, overlaps counted once) and the time bytes waited behind a missing TCP segment (head-of-line blocking over h2); medians in ms, \"-\" where a protocol records none:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%sloss wait %s\tloss wait %s\tΔ loss wait\theld %s\theld %s\n", variedHeader(v), o.Baseline, o.Compare, o.Baseline, o.Compare)
	for _, c := range rows {
		b, q := stats.Median(c.Baseline.LossWaits), stats.Median(c.Compare.LossWaits)
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%s\n", variedRow(v, c.Setting), num(b, 1), num(q, 1), signed(q-b, 1), medianOrDash(c.Baseline.Held), medianOrDash(c.Compare.Held))
	}
	tw.Flush()
}

// medianOrDash is the median of xs, "-" for none.
func medianOrDash(xs []float64) string {
	if len(xs) == 0 {
		return "-"
	}
	return num(stats.Median(xs), 1)
}

// writeClaims prints the paper's claims beside the reproduction's loads.
func writeClaims(w io.Writer, cl *Claims) {
	if cl == nil {
		return
	}
	fmt.Fprintf(w, "Claims of %s: %s.\n", cl.Cite, ClaimsReadFrom(cl))
	fmt.Fprint(w, cl.Table)
	fmt.Fprintln(w)
}
