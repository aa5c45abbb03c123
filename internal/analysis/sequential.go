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
// the look that stopped it (or, not stopped, the last look made: Rep 0,
// Looked its repetition; its level is Look.Level), and the trials it took.
type Stopping struct {
	Rep    int
	Looked int // the repetition of Look: Rep, or the last look of a run not stopped (0: none yet)
	Look   stats.Look
	Trials int // those of repetitions up to Rep (all, when not stopped)
	All    int // every trial of the setting in the run
	Min    int // the rule's first look
}

// stopping replays the rule over a comparison's loads, if the rule
// compares its protocols on PLT. The sequential verdict and its repeated
// interval replace the fixed test's and interval: testing the final
// sample at α after looking many times would not hold α.
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
	st := &Stopping{All: len(c.Baseline.Values) + len(c.Compare.Values) + c.Baseline.Failed + c.Compare.Failed, Min: u.Seq.Min}
	st.Trials = st.All
	seq := *u.Seq
	seq.Paired = c.Baseline.Paired && c.Compare.Paired // as the run judged them
	if rep, look, ok := seq.Replay(q, t, last, u.Seed); ok {
		st.Rep, st.Looked, st.Look = rep, rep, look
		st.Trials = c.Baseline.Failed + c.Compare.Failed + len(upToRep(c.Baseline.Reps, rep)) + len(upToRep(c.Compare.Reps, rep))
	} else if n := min(last, seq.Max); n >= seq.Min {
		st.Looked, st.Look = n, seq.LookAt(n, q, t, u.Seed)
	}
	c.Stopping = st
	sequentialVerdict(c, st)
}

// sequentialVerdict sets c's verdict and its interval from the rule's
// look: the look's repeated interval, whose side of 1 the verdict is;
// too few loads before the first look.
func sequentialVerdict(c *Comparison, st *Stopping) {
	c.NeedLoads = 0
	if st.Looked == 0 {
		c.Verdict, c.NeedLoads, c.RoundsNeeded = stats.TooFewSamples, st.Min, 0
		c.IntervalOK = false
		return
	}
	l := st.Look
	c.Verdict = l.Verdict
	c.Estimate, c.RatioLo, c.RatioHi, c.IntervalOK = l.Estimate, l.Lo, l.Hi, l.IntervalOK
	if !l.IntervalOK { // the look's test cannot reach its level with these loads
		c.Verdict, c.NeedLoads = stats.TooFewSamples, stats.LoadsToReach(1-l.Level)
		if c.Paired != nil {
			c.NeedLoads = stats.PairsToReach(1 - l.Level)
		}
	}
	roundsNeeded(c)
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
