package report

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/stats"
)

// whyWords says how c's difference in PLT came about, part by part
// (analysis.Why): the parts whose difference is measurable, with their
// intervals, and the rest; with too few loads for intervals, every
// part's estimate, none called measurable. "" without a breakdown.
func whyWords(c analysis.Comparison) string {
	w := c.Why
	if w == nil || !w.Total.Known {
		return ""
	}
	how := fmt.Sprintf("differences of medians over %d and %d loads", len(c.Compare.Values), len(c.Baseline.Values))
	if w.Paired {
		how = fmt.Sprintf("medians of the paired differences over %d pairs", w.Loads)
	}
	if !w.Total.Interval {
		return fmt.Sprintf("Why, %s against %s (%s, too few for %s intervals, so no part is called measurable): of %s ms, %s.",
			c.Compare.Protocol, c.Baseline.Protocol, how, explainLevelText(), signed(w.Total.Diff, 1), strings.Join(estimates(w), ", "))
	}
	// The PLTs' difference in ms stands without its interval: the verdict
	// reads their ratio, whose interval, on another scale (and under an
	// until rule at another level), is the one that decides. The parts
	// explain a verdict already made, at analysis.ExplainLevel.
	head := fmt.Sprintf("Why, %s against %s (%s, the parts' %s sign-test intervals): of %s ms%s", c.Compare.Protocol, c.Baseline.Protocol, how, explainLevelText(), signed(w.Total.Diff, 1), rttsText(w, w.Total.Diff))
	var shown []string
	rest := w.Total.Diff
	names := results.PartNames()
	for i, d := range w.Parts {
		if !d.Measurable {
			continue
		}
		words := fmt.Sprintf("%s %s ms%s %s", names[i], signed(d.Diff, 1), rttsText(w, d.Diff), interval(d))
		if i == results.PartLoss && w.Held.Measurable {
			words += fmt.Sprintf(" (head-of-line blocking: bytes held behind a missing TCP segment %s ms %s)", signed(w.Held.Diff, 1), interval(w.Held))
		}
		shown = append(shown, words)
		rest -= d.Diff
	}
	if len(shown) == 0 {
		return head + ", no part of the loads' time (" + strings.Join(names, ", ") + ") differed measurably."
	}
	return fmt.Sprintf("%s, %s; the rest, %s ms, is the parts that did not differ measurably.", head, strings.Join(shown, ", "), signed(rest, 1))
}

// estimates are the known parts' estimates in words, "handshakes −100.0
// ms".
func estimates(w *analysis.Why) []string {
	var out []string
	for i, d := range w.Parts {
		if d.Known {
			out = append(out, fmt.Sprintf("%s %s ms", results.PartNames()[i], signed(d.Diff, 1)))
		}
	}
	return out
}

// rttsText is ms in the link's round trips: " (−1.0 RTT)"; "" on a link
// without a round trip.
func rttsText(w *analysis.Why, ms float64) string {
	if n, ok := w.RoundTrips(ms); ok {
		return " (" + signed(n, 1) + " RTT)"
	}
	return ""
}

// interval is d's interval in brackets, in ms.
func interval(d analysis.PartDiff) string {
	return "[" + signed(d.Lo, 1) + ", " + signed(d.Hi, 1) + "]"
}

// partRow is one protocol's loads in one setting, for the parts' table
// and figure.
type partRow struct {
	setting analysis.Setting
	sample  analysis.Sample
}

// partRows are the samples of a's comparisons and pairs whose loads
// recorded parts, one per setting and protocol, in the order of their
// settings, then protocols.
func partRows(a *analysis.Analysis) []partRow {
	var rows []partRow
	seen := map[string]bool{}
	for _, c := range slices.Concat(a.Comparisons, a.Pairs) {
		for _, s := range []analysis.Sample{c.Baseline, c.Compare} {
			key := analysis.LegacyText(c.Setting) + "|" + string(s.Protocol)
			if seen[key] || !hasAnyParts(s) {
				continue
			}
			seen[key] = true
			rows = append(rows, partRow{c.Setting, s})
		}
	}
	slices.SortStableFunc(rows, func(x, y partRow) int {
		return cmp.Or(strings.Compare(analysis.LegacyText(x.setting), analysis.LegacyText(y.setting)), strings.Compare(string(x.sample.Protocol), string(y.sample.Protocol)))
	})
	return rows
}

// WriteParts sets the protocols' loads taken apart side by side, per
// setting: the medians of each part (results.PartNames) and of the PLT
// over the verified loads, with "-" for a part a protocol's loads did not
// record; nothing when no load recorded its parts.
func WriteParts(w io.Writer, a *analysis.Analysis) {
	rows := partRows(a)
	if len(rows) == 0 {
		return
	}
	v := analysis.VariedIn(a.Comparisons)
	fmt.Fprintln(w, "\nEach load's time taken apart: the link (a packet at the bottleneck), loss recovery, handshakes, round trips (in flight, none at the bottleneck), the servers (working on a request, nothing in flight) and the client (nothing in flight, no server working). Medians in ms over the verified loads; a load's parts add up to its PLT, their medians need not; \"-\" where a protocol's loads record none. The lower bound is what the page needs at least: its dependency chain's round trips (handshakes included, their count in brackets) and its bytes at the bottleneck rate:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%sprotocol\tPLT\tlower bound\t%s\n", variedHeader(v), strings.Join(results.PartNames(), "\t"))
	for _, r := range rows {
		cells := []string{string(r.sample.Protocol), num(stats.Median(r.sample.Values), 1), boundCell(r.sample)}
		for i := range results.PartNames() {
			cells = append(cells, partMedian(r.sample, i))
		}
		fmt.Fprintf(tw, "%s%s\n", variedRow(v, r.setting), strings.Join(cells, "\t"))
	}
	tw.Flush()
}

// boundCell is s's median lower bound with its chain's round trips,
// "300.0 (3.0)"; "-" for loads without bounds.
func boundCell(s analysis.Sample) string {
	if len(s.Bounds) == 0 {
		return "-"
	}
	return num(stats.Median(s.Bounds), 1) + " (" + num(s.ChainRTTs, 1) + ")"
}

// maxPartBars is the most bars the parts' figure draws: a protocol in a
// setting each.
const maxPartBars = 24

// partsBars draws each protocol's loads in each setting as a bar of the
// medians of their parts stacked in the order a load's time is taken
// apart; none without parts or with more than maxPartBars bars.
func partsBars(a *analysis.Analysis) (Figure, error) {
	rows := partRows(a)
	if len(rows) == 0 || len(rows) > maxPartBars {
		return Figure{}, nil
	}
	v := analysis.VariedIn(a.Comparisons)
	p := newPlot("Each load's time taken apart: medians of its parts per protocol", "", "ms from navigation start (medians of the parts)")
	marks := &tips{}
	var below *plotter.BarChart
	base := make([]float64, len(rows))
	for i, name := range results.PartNames() {
		values := make(plotter.Values, len(rows))
		for k, r := range rows {
			values[k] = partValue(r.sample, i)
			label := strings.Join(append(append([]string{r.setting.Network(), r.setting.Page()}, v.Values(r.setting)...), string(r.sample.Protocol)), ", ")
			marks.add(float64(k)-0.3, base[k], float64(k)+0.3, base[k]+values[k], fmt.Sprintf("%s: %s, median %s ms", label, name, num(values[k], 1)), "")
			base[k] += values[k]
		}
		bars, err := plotter.NewBarChart(values, vg.Points(22))
		if err != nil {
			return Figure{}, err
		}
		bars.Color, bars.LineStyle.Width = plotutil.Color(i), 0
		if below != nil {
			bars.StackOn(below)
		}
		p.Add(bars)
		p.Legend.Add(name, bars)
		below = bars
	}
	names := make([]string, len(rows))
	for k, r := range rows {
		names[k] = string(r.sample.Protocol)
		if len(a.Comparisons) > 1 {
			names[k] = r.setting.Network() + " " + names[k]
		}
	}
	width := vg.Length(max(6, 0.7*float64(len(rows)))) * vg.Inch
	labels, key := axisLabels(names, width)
	p.NominalX(labels...)
	p.Legend.Top = true
	p.Y.Min = 0
	p.Y.Max = 1.45 * slices.Max(base) // room for the legend above the bars
	return render("parts", p.Title.Text, "Each bar is one protocol's verified loads in one setting: the medians of the parts of their time, stacked from the bottom in the order a load's time is taken apart (the link, loss recovery, handshakes, round trips, the servers, the client); a missing part is drawn as 0. The table \"Each load's time taken apart\" gives the numbers, and the answer the differences that are measurable."+key, p, width, 5*vg.Inch, marks)
}

// partValue is the median of part i over s's loads that recorded it, 0
// for none.
func partValue(s analysis.Sample, i int) float64 {
	xs := recorded(s, i)
	if len(xs) == 0 {
		return 0
	}
	return stats.Median(xs)
}

// recorded are part i of s's loads that recorded it.
func recorded(s analysis.Sample, i int) []float64 {
	var xs []float64
	for _, row := range s.Parts {
		if row != nil && !math.IsNaN(row[i]) {
			xs = append(xs, row[i])
		}
	}
	return xs
}

// hasAnyParts reports whether some load of s recorded its parts.
func hasAnyParts(s analysis.Sample) bool {
	return slices.ContainsFunc(s.Parts, func(row []float64) bool { return row != nil })
}

// partMedian is the median of part i over s's loads that recorded it,
// "-" for none.
func partMedian(s analysis.Sample, i int) string { return medianOrDash(recorded(s, i)) }
