package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/stats"
)

// writeStopping shows how each setting's repetitions ended.
func writeStopping(w io.Writer, a *analysis.Analysis, v analysis.Varied) {
	u := a.Options.Until
	if u == nil {
		return
	}
	fmt.Fprintf(w, "\nRepetitions until the answer is known (from %d to %d; stop at a sequential verdict, O'Brien–Fleming α-spending at α = %g, or when the ratio's 95%% CI is within ±%g%%; paired loads judged as pairs: signed-rank test, Hodges–Lehmann interval):\n",
		u.Seq.Min, u.Seq.Max, stats.Alpha, 100*u.CIRatio)
	used, all := 0, 0
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%strials\tof\tstopped after\twhy\t|z|\tboundary\tratio's 95%% CI then\n", variedHeader(v))
	for _, c := range a.Comparisons {
		st := c.Stopping
		if st == nil {
			continue
		}
		after, why := "-", "not yet (the run is incomplete)"
		if st.Rep > 0 {
			after, why = fmt.Sprintf("repetition %d", st.Rep), map[string]string{
				stats.StopVerdict: "verdict: " + string(st.Look.Verdict), stats.StopPrecision: "precision reached: " + string(st.Look.Verdict), stats.StopMax: "most repetitions"}[st.Look.Reason]
		}
		z, bound, ci := "-", "-", "-"
		if st.Rep > 0 {
			z, bound, ci = num(st.Look.Z, 2), num(st.Bound, 2), fmt.Sprintf("[%s, %s]", num(st.Look.RatioLo, 3), num(st.Look.RatioHi, 3))
		}
		fmt.Fprintf(tw, "%s%d\t%d\t%s\t%s\t%s\t%s\t%s\n", variedRow(v, c.Setting),
			st.Trials, st.All, after, why, z, bound, ci)
		used, all = used+st.Trials, all+st.All
	}
	tw.Flush()
	if used < all {
		fmt.Fprintf(w, "The rule takes %d of the run's %d trials (%.0f %% fewer).\n", used, all, 100*(1-float64(used)/float64(all)))
	}
}
