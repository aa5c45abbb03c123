package analysis

import (
	"cmp"
	"math"
	"slices"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/stats"
)

// partsOf are trial t's parts (results.Parts.Values), with its time held
// behind a missing TCP segment last (0 over h3: QUIC holds no stream's
// bytes for another's loss); nil for a trial without parts.
func partsOf(t results.Trial) []float64 {
	values := t.Parts.Values()
	if values == nil {
		return nil
	}
	held := math.NaN()
	switch {
	case t.Protocol == factor.H3:
		held = 0
	case t.HeldMs != nil:
		held = *t.HeldMs
	}
	return append(values, held)
}

// ExplainLevel is the confidence of the parts' intervals (95 %): they
// explain a verdict already made at its own level, so they are judged as
// explanations, not as further verdicts at 99 % or a sequential look's
// level, where one outlying pair keeps a part's interval across 0.
const ExplainLevel = 0.95

// PartDiff is how one part of the loads' time differed, compare −
// baseline, in ms: over pairs, the median of the paired differences with
// its sign-test interval at ExplainLevel (robust to an outlying pair);
// else the difference of the medians with a bootstrap interval at that
// level. Interval is false when the loads are too few for one (fewer than
// 6 pairs, or than minWhyLoads loads a protocol): Lo and Hi are then the
// whole range. Measurable: there is an interval and it excludes 0. Known
// is false where some load did not record the part.
type PartDiff struct {
	Diff, Lo, Hi                float64
	Interval, Measurable, Known bool
}

// Why is a comparison's difference taken apart: the difference of the
// loads' PLTs and of each part of them (results.PartNames' order), and of the
// time bytes waited behind a missing TCP segment (head-of-line blocking;
// part of loss recovery). Loads counts the pairs, or the smaller
// sample's loads. RTTMs is the link's round trip (ms; 0 unshaped), which
// the parts' differences are also counted in.
type Why struct {
	Paired bool
	Loads  int
	RTTMs  float64
	Total  PartDiff
	Parts  []PartDiff
	Held   PartDiff
}

// whyOf takes the difference of c's loads apart, when the metric is the
// PLT and every verified load of both samples recorded its parts; nil
// otherwise.
func whyOf(c Comparison, reps int, seed uint64) *Why {
	b, q := c.Baseline, c.Compare
	if !hasParts(b) || !hasParts(q) {
		return nil
	}
	w := &Why{Paired: c.Paired != nil, RTTMs: q.RTTMs}
	column := func(s Sample, i int) []float64 {
		out := make([]float64, len(s.Parts))
		for k, row := range s.Parts {
			out[k] = row[i]
		}
		return out
	}
	width := len(results.PartNames()) + 1
	for i := -1; i < width; i++ {
		var bv, qv []float64
		if i < 0 {
			bv, qv = b.Values, q.Values
		} else {
			bv, qv = column(b, i), column(q, i)
		}
		d := partDiff(c, bv, qv, reps, seed+uint64(i+1))
		switch {
		case i < 0:
			w.Total = d
		case i < width-1:
			w.Parts = append(w.Parts, d)
		default:
			w.Held = d
		}
	}
	w.Loads = min(len(b.Values), len(q.Values))
	if c.Paired != nil {
		w.Loads = c.Paired.Pairs
	}
	return w
}

// hasParts reports whether every verified load of s recorded its parts.
func hasParts(s Sample) bool {
	if len(s.Values) == 0 || len(s.Parts) != len(s.Values) {
		return false
	}
	for _, row := range s.Parts {
		if row == nil {
			return false
		}
	}
	return true
}

// partDiff is one part's difference between the baseline's values bv and
// the compared protocol's qv (aligned with the samples' loads).
func partDiff(c Comparison, bv, qv []float64, reps int, seed uint64) PartDiff {
	for _, v := range append(append([]float64{}, bv...), qv...) {
		if math.IsNaN(v) {
			return PartDiff{}
		}
	}
	d := PartDiff{Known: true}
	if c.Paired != nil {
		q, t := pairsByRep(Sample{Values: qv, Reps: c.Compare.Reps}, Sample{Values: bv, Reps: c.Baseline.Reps})
		diffs := make([]float64, len(q))
		for i := range q {
			diffs[i] = q[i] - t[i]
		}
		d.Diff, d.Lo, d.Hi, d.Interval = stats.MedianSignCI(diffs, ExplainLevel)
		d.Measurable = d.Interval && (d.Lo > 0 || d.Hi < 0)
		return d
	}
	d.Diff = stats.Median(qv) - stats.Median(bv)
	d.Lo, d.Hi = stats.BootstrapDiffCI(qv, bv, ExplainLevel, reps, seed)
	d.Interval = len(qv) >= minWhyLoads && len(bv) >= minWhyLoads
	d.Measurable = d.Interval && (d.Lo > 0 || d.Hi < 0)
	return d
}

// minWhyLoads is the fewest loads per protocol whose medians' bootstrap
// interval the answer trusts to call a part's difference measurable: as
// many as Mann–Whitney needs to reach α at 0.01 and more.
const minWhyLoads = 8

// Carrying are the indexes (results.PartNames' order) of the parts that
// carry the difference: measurable, and the same way as the PLTs'
// difference; the largest first.
func (w *Why) Carrying() []int {
	var out []int
	for i, d := range w.Parts {
		if d.Measurable && d.Diff*w.Total.Diff > 0 {
			out = append(out, i)
		}
	}
	slices.SortStableFunc(out, func(a, b int) int {
		return cmp.Compare(math.Abs(w.Parts[b].Diff), math.Abs(w.Parts[a].Diff))
	})
	return out
}

// RoundTrips is ms in the link's round trips; ok is false on a link
// without one.
func (w *Why) RoundTrips(ms float64) (rtts float64, ok bool) {
	if w.RTTMs <= 0 {
		return 0, false
	}
	return ms / w.RTTMs, true
}
