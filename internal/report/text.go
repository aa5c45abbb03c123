package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/quicbench/quicbench/internal/stats"
)

// varied lists which setting fields take more than one value, so tables
// show only the columns that tell settings apart.
type varied struct{ stack, server, visit, cache, origins bool }

func variedOf(cmps []Comparison) varied {
	var v varied
	if len(cmps) == 0 {
		return v
	}
	f := cmps[0].Setting
	for _, c := range cmps[1:] {
		s := c.Setting
		v.stack = v.stack || s.Stack != f.Stack
		v.server = v.server || s.Server != f.Server
		v.visit = v.visit || s.Visit != f.Visit
		v.cache = v.cache || s.Cache != f.Cache
		v.origins = v.origins || s.Origins != f.Origins
	}
	return v
}

func (v varied) header() string {
	var cols []string
	if v.stack {
		cols = append(cols, "stack")
	}
	if v.server {
		cols = append(cols, "server")
	}
	if v.visit {
		cols = append(cols, "visit")
	}
	if v.cache {
		cols = append(cols, "cache")
	}
	if v.origins {
		cols = append(cols, "origins")
	}
	if len(cols) == 0 {
		return ""
	}
	return strings.Join(cols, "\t") + "\t"
}

func (v varied) row(s Setting) string {
	var cols []string
	if v.stack {
		cols = append(cols, s.Stack)
	}
	if v.server {
		cols = append(cols, s.Server)
	}
	if v.visit {
		cols = append(cols, s.Visit)
	}
	if v.cache {
		cols = append(cols, onOff(s.Cache))
	}
	if v.origins {
		cols = append(cols, strconv.Itoa(s.Origins))
	}
	if len(cols) == 0 {
		return ""
	}
	return strings.Join(cols, "\t") + "\t"
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// WriteText writes the terminal summary of a.
func WriteText(w io.Writer, name string, a *Analysis) {
	o := a.Options
	fmt.Fprintf(w, "%s: %d trials (%d failed); metric %s in ms; %s against %s\n", name, a.Trials, a.Failed, MetricLabel(o.Metric), o.Compare, o.Baseline)
	fmt.Fprintf(w, "Verdict: Mann–Whitney U, two-sided, α = %g; ratio = median(%s)/median(%s); diff = mean(%s) − mean(%s); gain = diff/mean(%s).\n\n",
		stats.Alpha, o.Compare, o.Baseline, o.Compare, o.Baseline, o.Baseline)
	v := variedOf(a.Comparisons)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "network\tpage\t%sn %s\tn %s\tfailed\tmedian %s\tmedian %s [95%% CI]\tratio\tdiff\tgain\tp (MWU)\tp (Welch)\tverdict\n",
		v.header(), o.Baseline, o.Compare, o.Baseline, o.Compare)
	for _, c := range a.Comparisons {
		fmt.Fprintf(tw, "%s\t%s\t%s%d\t%d\t%d\t%s\t%s [%s, %s]\t%s\t%s\t%s\t%s\t%s\t%s%s\n", c.Setting.Network, c.Setting.Page, v.row(c.Setting),
			len(c.Baseline.Values), len(c.Compare.Values), c.Baseline.Failed+c.Compare.Failed,
			num(c.Baseline.Summary.Median, 1), num(c.Compare.Summary.Median, 1), num(c.Compare.MedianCILo, 1), num(c.Compare.MedianCIHi, 1),
			num(c.Ratio, 3), signed(c.Diff, 1), percent(c.Gain), pval(c.MannWhitney), pval(c.Welch), VerdictText(c), "")
	}
	tw.Flush()
	if len(a.Shares) > 0 {
		fmt.Fprintf(w, "\nPages where %s's mean is below %s's (seed 000, Table III):\n", o.Compare, o.Baseline)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "network\tvisit\tcache\tpages\tfaster\tshare\tsignificantly faster")
		for _, s := range a.Shares {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%d\n", s.Network, s.Visit, onOff(s.Cache), s.Pages, s.Faster, percent(float64(s.Faster)/float64(s.Pages)), s.Significant)
		}
		tw.Flush()
	}
	if len(a.ANOVAs) > 0 {
		fmt.Fprintln(w, "\nOne-way ANOVA across TCP stacks (seed 003); the stacks differ where p < 0.01:")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "network\tpage\tprotocol\tstacks\tF\tp\tstacks differ")
		for _, an := range a.ANOVAs {
			differ := "no"
			switch {
			case !an.Test.OK:
				differ = "too few loads: " + an.Test.Reason
			case an.Test.P < stats.Alpha:
				differ = "yes"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", an.Setting.Network, an.Setting.Page, an.Protocol, strings.Join(an.Stacks, ","),
				num(an.Test.Statistic, 2), pval(an.Test), differ)
		}
		tw.Flush()
	}
}

// VerdictText is the comparison's verdict, saying why when the loads were
// too few for the test.
func VerdictText(c Comparison) string {
	t := c.MannWhitney
	switch {
	case c.Verdict != stats.TooFewSamples:
		return string(c.Verdict)
	case !t.OK:
		return fmt.Sprintf("%s (%s)", c.Verdict, t.Reason)
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
