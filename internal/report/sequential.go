package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/stats"
)

// WriteStopping shows how each setting's repetitions ended under the
// run's until rule; nothing without one.
func WriteStopping(w io.Writer, a *analysis.Analysis) {
	writeStopping(w, a, analysis.VariedIn(a.Comparisons))
}

// writeStopping shows how each setting's repetitions ended.
func writeStopping(w io.Writer, a *analysis.Analysis, v analysis.Varied) {
	u := a.Options.Until
	if u == nil {
		return
	}
	fmt.Fprintf(w, "\nRepetitions until the answer is known (from %d to %d; a verdict once the look's repeated interval of the ratio excludes 1, its level from O'Brien–Fleming α-spending at α = %g so the looks' intervals hold %s together; or a stop when the ratio's 95%% CI is within ±%g%%; paired loads judged as pairs: signed-rank test, Hodges–Lehmann interval):\n",
		u.Seq.Min, u.Seq.Max, stats.Alpha, levelText(), 100*u.CIRatio)
	used, all := 0, 0
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%strials\tof\tstopped after\twhy\t|z|\tlook's level\trepeated CI\tratio's 95%% CI then\n", variedHeader(v))
	for _, c := range a.Comparisons {
		st := c.Stopping
		if st == nil {
			continue
		}
		after, why := "-", "not yet (the run is incomplete)"
		if st.Rep > 0 {
			after, why = fmt.Sprintf("repetition %d", st.Rep), map[string]string{
				stats.StopVerdict: "verdict: " + string(st.Look.Verdict), stats.StopPrecision: "precision reached", stats.StopMax: "most repetitions"}[st.Look.Reason]
		}
		z, level, rci, ci := "-", "-", "-", "-"
		if st.Looked > 0 {
			z, level, ci = num(st.Look.Z, 2), lookLevelText(st.Look.Level), fmt.Sprintf("[%s, %s]", num(st.Look.RatioLo, 3), num(st.Look.RatioHi, 3))
			rci = fmt.Sprintf("%s [%s, %s]", num(st.Look.Estimate, 3), num(st.Look.Lo, 3), num(st.Look.Hi, 3))
			if !st.Look.IntervalOK {
				rci = num(st.Look.Estimate, 3) + " [too few loads]"
			}
		}
		fmt.Fprintf(tw, "%s%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", variedRow(v, c.Setting),
			st.Trials, st.All, after, why, z, level, rci, ci)
		used, all = used+st.Trials, all+st.All
	}
	tw.Flush()
	if used < all {
		fmt.Fprintf(w, "The rule takes %d of the run's %d trials (%.0f %% fewer).\n", used, all, 100*(1-float64(used)/float64(all)))
	}
}
