package analysis

import (
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/stats"
)

// UntilRule is a run's rule for stopping repetitions (spec until), as the
// report replays it.
type UntilRule struct {
	Seq               *stats.Sequential
	Seed              uint64 // the spec's: seeds each look's interval
	Baseline, Compare factor.Protocol
	CIRatio           float64
}

// Replay is a stopping rule to replay on a run that had none: the
// repetitions before the first look, and the half-width of the ratio's
// interval that suffices (spec.Until checks them).
type Replay struct {
	Min     int
	CIRatio float64
}

// Stopping is how a setting's repetitions ended under the rule: the
// repetition after which it stopped (0: not yet, the run is incomplete),
// the look that stopped it and its boundary, and the trials it took.
type Stopping struct {
	Rep    int
	Look   stats.Look
	Bound  float64
	Trials int // those of repetitions up to Rep (all, when not stopped)
	All    int // every trial of the setting in the run
}

// stopping replays the rule over a comparison's loads, if the rule
// compares its protocols on PLT. The sequential verdict replaces the fixed
// test's: testing the final sample at α after looking many times would
// not hold α.
func stopping(c *Comparison, o Options) {
	u := o.Until
	if u == nil || o.Metric != "plt" || u.Baseline != c.Baseline.Protocol || u.Compare != c.Compare.Protocol {
		return
	}
	q, t := byRep(c.Compare), byRep(c.Baseline)
	last := 0
	for _, r := range append(append([]int64{}, c.Compare.Reps...), c.Baseline.Reps...) {
		last = max(last, int(r))
	}
	st := &Stopping{All: len(c.Baseline.Values) + len(c.Compare.Values) + c.Baseline.Failed + c.Compare.Failed}
	st.Trials = st.All
	seq := *u.Seq
	seq.Paired = c.Baseline.Paired && c.Compare.Paired // as the run judged them
	if rep, look, ok := seq.Replay(q, t, last, u.Seed); ok {
		st.Rep, st.Look, st.Bound = rep, look, seq.Bound(rep)
		st.Trials = c.Baseline.Failed + c.Compare.Failed + len(upToRep(c.Baseline.Reps, rep)) + len(upToRep(c.Compare.Reps, rep))
	}
	c.Stopping = st
	c.Verdict = stats.NoDifference
	if st.Rep > 0 {
		c.Verdict = st.Look.Verdict // the sequential test's, or the interval's at a precision stop
	}
}

// byRep is a sample's values by repetition.
func byRep(s Sample) map[int]float64 {
	m := make(map[int]float64, len(s.Values))
	for i, r := range s.Reps {
		m[int(r)] = s.Values[i]
	}
	return m
}

// upToRep is the repetitions of reps up to rep.
func upToRep(reps []int64, rep int) []int64 {
	var out []int64
	for _, r := range reps {
		if int(r) <= rep {
			out = append(out, r)
		}
	}
	return out
}
