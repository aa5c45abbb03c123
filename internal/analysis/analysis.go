package analysis

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/stats"
)

// visualMetric reports whether m is measured from frames (visual trials
// only).
func visualMetric(m string) bool { return results.VisualMetric(m) }

// MetricOf returns the trial field of a metric of MetricNames.
func MetricOf(name string) func(results.Trial) *float64 {
	if m, ok := results.MetricNamed(name); ok {
		return m.Value
	}
	return nil
}

// MetricNames lists the metrics in the order help texts show them.
func MetricNames() []string {
	var names []string
	for _, m := range results.MetricList() {
		names = append(names, m.Name)
	}
	return names
}

// MetricLabel names a metric for tables and figures.
func MetricLabel(name string) string {
	if m, ok := results.MetricNamed(name); ok {
		return m.Label
	}
	return name
}

// Options choose what a report compares.
type Options struct {
	// Baseline is the protocol compared against; "": h2 if the run has
	// it, else h1.
	Baseline factor.Protocol
	// Compare is the protocol compared; "": h3.
	Compare factor.Protocol
	Metric  string // one of MetricNames
	// BootstrapReps resamples the median's confidence interval (0: 1000).
	BootstrapReps int
	Seed          uint64
	// WaterfallTrial is the trial whose waterfall is drawn; empty: the
	// compared protocol's load nearest the first comparison's median.
	WaterfallTrial string
	// Until is the run's stopping rule, replayed per setting; nil for a
	// run that repeated every cell equally (Build reads it from the run).
	Until *UntilRule
	// ReplayUntil, for a run without a rule, replays this one on its
	// loads: what an adaptive run would have taken (Build).
	ReplayUntil *Replay
}

// Validate checks the options and fills the defaults that do not depend
// on the run (see withRunDefaults for the protocols').
func (o *Options) Validate() error {
	if o.Metric == "" {
		o.Metric = "plt"
	}
	if o.BootstrapReps == 0 {
		o.BootstrapReps = 1000
	}
	for _, p := range []factor.Protocol{o.Baseline, o.Compare} {
		if p != "" && !factor.Protocols().Has(p) {
			return fmt.Errorf("protocol %q is unknown: use %s", p, factor.Protocols().Names())
		}
	}
	if o.Baseline != "" && o.Baseline == o.Compare {
		return fmt.Errorf("--baseline and --compare are both %s: compare two protocols", o.Baseline)
	}
	if MetricOf(o.Metric) == nil {
		names := MetricNames()
		return fmt.Errorf("metric %q is unknown: use %s or %s", o.Metric, strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
	}
	return nil
}

// withRunDefaults fills the protocols the options leave open from those
// the run holds: the baseline is h2 when the run has it, else h1; the
// compared protocol is h3. It fails if either is not in the run.
func (o *Options) withRunDefaults(have []factor.Protocol) error {
	if o.Baseline == "" {
		o.Baseline = factor.H1
		if slices.Contains(have, factor.H2) {
			o.Baseline = factor.H2
		}
	}
	if o.Compare == "" {
		o.Compare = factor.H3
	}
	if o.Baseline == o.Compare {
		return fmt.Errorf("--baseline and --compare are both %s: compare two protocols", o.Baseline)
	}
	for _, p := range []factor.Protocol{o.Baseline, o.Compare} {
		if !slices.Contains(have, p) {
			return fmt.Errorf("the run has no %s trials (it has %v): choose --baseline and --compare among them", p, have)
		}
	}
	return nil
}

// Sample is one protocol's loads in one setting.
type Sample struct {
	Protocol factor.Protocol
	Values   []float64 // the metric of the verified loads, ms
	// Reps are the repetitions of Values' loads; Paired says every load
	// of the sample started from its repetition's link seeds.
	Reps   []int64
	Paired bool
	// IDs are the trial IDs of Values' loads.
	IDs []string
	// Bounds are the physical lower bounds of the verified loads that
	// have one (ms), and ChainRTTs the round trips of their chain.
	Bounds    []float64
	ChainRTTs float64
	// LossWaits are the verified loads' waits for lost data (ms,
	// results.Stalls), and Held the time bytes waited behind a missing
	// TCP segment (ms): of the loads that recorded them.
	LossWaits, Held []float64
	// Parts are the verified loads' parts of their time (partsOf), a row
	// each in Values' order; a row is nil for a load without them. Only
	// where the metric is the PLT, which they take apart.
	Parts [][]float64
	// RTTMs is the round trip the link adds (ms), that of the sample's
	// last verified load.
	RTTMs   float64
	Failed  int
	Summary stats.Summary
	// MedianCI is the bootstrap interval of the median at 1 − stats.Alpha
	// (99 %), ms.
	MedianCILo, MedianCIHi float64
}

// Comparison is the compared protocol against the baseline in one setting.
type Comparison struct {
	Setting  Setting
	Baseline Sample
	Compare  Sample
	// Diff is mean(compare) − mean(baseline) in ms (Nepomuceno et al. 2018), Ratio
	// median(compare)/median(baseline) (Biswal and Gnawali 2016), Gain
	// (mean(compare) − mean(baseline))/mean(baseline) (Wolsing et al. 2019).
	Diff, Ratio, Gain float64
	// Level is the confidence of every interval the comparison gives, 1 −
	// stats.Alpha (0.99): that of its verdict.
	Level float64
	// Estimate is the typical ratio compare/baseline the verdict reads,
	// with its interval RatioLo–RatioHi at Level (IntervalOK false when
	// the loads are too few for one: the whole range): over pairs, the
	// Hodges–Lehmann estimate of the paired ratios with the Wilcoxon
	// signed-rank test inverted; else the Hodges–Lehmann ratio of the two
	// samples with the Mann–Whitney test inverted. The interval excludes 1
	// exactly when the verdict's test rejects (without ties).
	Estimate, RatioLo, RatioHi float64
	IntervalOK                 bool
	// Unpaired is the two samples' Hodges–Lehmann ratio with its interval
	// at Level whether or not the loads were paired: Estimate's where they
	// were not.
	UnpairedRatio, UnpairedLo, UnpairedHi float64
	// Test is the test the verdict reads: Wilcoxon signed-rank over pairs,
	// else Mann–Whitney; Welch and MannWhitney are given besides.
	Test               stats.Test
	Welch, MannWhitney stats.Test
	// NeedLoads is, for a verdict of too few loads, the loads a protocol
	// (pairs, over pairs) with which the test could reach α; 0 otherwise.
	NeedLoads int
	// RoundsNeeded is, for a verdict of no measurable difference, the
	// rounds (pairs; loads each, unpaired) with which a fixed test at α
	// would find the estimated ratio with probability RoundsPower, at
	// the spread these loads show (stats.PairsFor, stats.RepetitionsFor);
	// above MaxRoundsNeeded it is MaxRoundsNeeded+1; 0 otherwise.
	RoundsNeeded int
	// Stopping is how the setting's repetitions ended under the run's
	// until rule; nil without one.
	Stopping *Stopping
	// Paired is the analysis of the pairs of loads of equal repetition,
	// when every load started from its repetition's link seeds (spec
	// pairing), at Level; nil otherwise.
	Paired *stats.PairedRatio
	// Verdict is Test's at α = stats.Alpha (0.01), faster or slower as
	// Estimate is below or above 1 (rank tests: PLTs are rarely normal).
	Verdict stats.Verdict
	// Why takes the difference apart into the parts of the loads' time;
	// nil unless the metric is the PLT and every load recorded its parts.
	Why *Why
}

// StackANOVA is the one-way ANOVA across the TCP stacks, or the QUIC
// stacks, of one protocol in one setting (Wolsing et al. 2019).
type StackANOVA struct {
	Setting  Setting // Stack (or QUIC) is empty
	Protocol factor.Protocol
	Stacks   []string
	Test     stats.Test
}

// Share is, for one setting of every factor but the page and the
// protocol, the number of pages on which the compared protocol's mean is
// below the baseline's (as Nepomuceno et al. 2018's Table III), and on how many it is
// significantly faster.
type Share struct {
	Setting     Setting // Page is empty
	Pages       int
	Faster      int // mean below the baseline's
	Significant int // Mann–Whitney verdict "faster"
}

// Analysis is a run's analysis.
type Analysis struct {
	Options     Options
	Trials      int // all trials read
	Failed      int
	Comparisons []Comparison
	// Pairs are every other pair of the run's protocols per setting, the
	// later protocol (h3 after h2 after h1) compared against the earlier:
	// h3/h1 and h2/h1 beside the h3/h2 of Comparisons.
	Pairs []Comparison
	// LevelPairs are every pair of the levels of the stacks, servers and
	// clients that vary, per protocol in otherwise equal settings.
	LevelPairs []LevelPair
	ANOVAs     []StackANOVA
	// QUICANOVAs are across the QUIC stacks of h3 (the setting's QUIC
	// stack empty).
	QUICANOVAs []StackANOVA
	// ClientANOVAs are across the clients (browsers) of each protocol
	// (the setting's client empty; Stacks lists the clients).
	ClientANOVAs []StackANOVA
	Shares       []Share
	// Work is, for recorded pages, what each protocol's loads did per
	// setting (the replay's completeness).
	Work []SettingWork
	// Unmatched is, per recorded page, what its verified loads asked for
	// that the recording lacked, each request with its cause.
	Unmatched []SiteUnmatched
	// CPU is each protocol's CPU per load and party, per setting whose
	// loads measured it.
	CPU []SettingCPU
	// Experimental lists the experimental QUIC stacks the trials used, each
	// as "STACK: why" (factor.QUIC.Experimental).
	Experimental []string
	// Protocols seen in the run.
	Protocols []factor.Protocol
	// Uses are the settings whose browser discovered h3: how their h3
	// loads' requests divided between h3 and TCP.
	Uses []SettingUse
	// Calibration is each network's netcheck (Build reads it from the run).
	Calibration []Calibration
	// EmulatorLatency is the emulator's own latency per round trip as each
	// testbed measured it when it started, and what was taken off the
	// delays for it, in ms (Build reads them from the run).
	EmulatorLatency []EmulatorLatency
	// Stacks are the testbeds whose stacks did not do on the wire what was
	// applied, of Testbeds whose stacks were measured (Build reads them
	// from the run).
	Stacks   []StackWarning
	Testbeds int
}

// Analyze compares o.Compare with o.Baseline in every setting of trials.
func Analyze(trials []results.Trial, o Options) (*Analysis, error) {
	return AnalyzeContext(context.Background(), trials, o)
}

// AnalyzeContext is Analyze, stopping when ctx is done (between samples and
// between comparisons: the bootstrap is what takes time).
func AnalyzeContext(ctx context.Context, trials []results.Trial, o Options) (*Analysis, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	a := &Analysis{Options: o, Trials: len(trials)}
	samples, settings, measured := a.collect(trials)
	if !measured && len(trials) > 0 {
		return nil, noMeasureError(o.Metric)
	}
	slices.Sort(a.Protocols)
	if err := a.Options.withRunDefaults(a.Protocols); err != nil {
		return nil, err
	}
	o = a.Options
	SortSettings(settings)
	if err := summarize(ctx, samples, o); err != nil {
		return nil, err
	}
	for _, s := range settings {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, c := samples[sampleKey{s, o.Baseline}], samples[sampleKey{s, o.Compare}]
		if b != nil && c != nil {
			h := fnv.New64a()
			h.Write([]byte(sampleKey{s, "ratio"}.seedText()))
			cmp := compareSamples(s, *b, *c, o.BootstrapReps, o.Seed^h.Sum64())
			stopping(&cmp, o)
			a.Comparisons = append(a.Comparisons, cmp)
		}
	}
	pairs, err := otherPairs(ctx, settings, samples, a.Protocols, o)
	if err != nil {
		return nil, err
	}
	a.Pairs = pairs
	if a.LevelPairs, err = levelPairs(ctx, samples, o); err != nil {
		return nil, err
	}
	a.ANOVAs = stackANOVAs(samples, factor.IDStack, nil)
	a.QUICANOVAs = stackANOVAs(samples, factor.IDQUIC, func(p factor.Protocol) bool { return p == factor.H3 })
	a.ClientANOVAs = stackANOVAs(samples, factor.IDClient, nil)
	a.Shares = Shares(a.Comparisons)
	a.Work = works(trials)
	a.Uses = Uses(trials)
	a.Unmatched = Unmatched(trials)
	a.CPU = cpus(trials, o.Compare, o.Baseline)
	a.Experimental = experimental(trials)
	return a, nil
}

// collect sorts trials into samples per setting and protocol, notes the
// run's protocols and failed trials in a, and says whether any trial has
// the metric.
func (a *Analysis) collect(trials []results.Trial) (map[sampleKey]*Sample, []Setting, bool) {
	o := a.Options
	metric := MetricOf(o.Metric)
	samples := map[sampleKey]*Sample{}
	var settings []Setting
	seenSetting := map[Setting]bool{}
	measured := false
	for _, t := range trials {
		if !slices.Contains(a.Protocols, t.Protocol) {
			a.Protocols = append(a.Protocols, t.Protocol)
		}
		if visualMetric(o.Metric) && !t.Visual {
			continue // not measured in a trial without frames
		}
		s := SettingOf(t)
		if !seenSetting[s] {
			seenSetting[s] = true
			settings = append(settings, s)
		}
		k := sampleKey{s, t.Protocol}
		sm := samples[k]
		if sm == nil {
			sm = &Sample{Protocol: t.Protocol, Paired: true}
			samples[k] = sm
		}
		sm.Paired = sm.Paired && t.Paired
		v := metric(t)
		if t.Status != results.StatusOK || v == nil {
			sm.Failed++
			a.Failed++
			continue
		}
		sm.Values, sm.Reps, sm.IDs, measured = append(sm.Values, *v), append(sm.Reps, t.Rep), append(sm.IDs, t.ID), true
		sm.RTTMs = t.RTTMs
		if t.BoundMs != nil && t.BoundChainRTTs != nil && o.Metric == "plt" {
			sm.Bounds, sm.ChainRTTs = append(sm.Bounds, *t.BoundMs), *t.BoundChainRTTs
		}
		if t.LossWaitMs != nil {
			sm.LossWaits = append(sm.LossWaits, *t.LossWaitMs)
		}
		if t.HeldMs != nil {
			sm.Held = append(sm.Held, *t.HeldMs)
		}
		if o.Metric == "plt" {
			sm.Parts = append(sm.Parts, partsOf(t))
		}
	}
	return samples, settings, measured
}

// summarize fills each sample's summary and the bootstrap interval of its
// median.
func summarize(ctx context.Context, samples map[sampleKey]*Sample, o Options) error {
	for k, sm := range samples {
		if err := ctx.Err(); err != nil {
			return err
		}
		// Each sample's resampling seed comes from its key, so the
		// intervals do not depend on the order of the work.
		h := fnv.New64a()
		h.Write([]byte(k.seedText()))
		sm.Summary = stats.Summarize(sm.Values)
		sm.MedianCILo, sm.MedianCIHi = stats.BootstrapMedianCI(sm.Values, 1-stats.Alpha, o.BootstrapReps, o.Seed^h.Sum64())
	}
	return nil
}

// otherPairs compares, in each setting, every pair of protocols but o's
// (in either order), the later against the earlier (protocols is sorted:
// h1, h2, h3).
func otherPairs(ctx context.Context, settings []Setting, samples map[sampleKey]*Sample, protocols []factor.Protocol, o Options) ([]Comparison, error) {
	var out []Comparison
	for _, s := range settings {
		for i, earlier := range protocols {
			for _, later := range protocols[i+1:] {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				if (earlier == o.Baseline && later == o.Compare) || (earlier == o.Compare && later == o.Baseline) {
					continue // the main comparison
				}
				b, c := samples[sampleKey{s, earlier}], samples[sampleKey{s, later}]
				if b == nil || c == nil || len(b.Values) == 0 || len(c.Values) == 0 {
					continue
				}
				h := fnv.New64a()
				h.Write([]byte(sampleKey{s, factor.Protocol("ratio " + string(later) + "/" + string(earlier))}.seedText()))
				out = append(out, compareSamples(s, *b, *c, o.BootstrapReps, o.Seed^h.Sum64()))
			}
		}
	}
	return out, nil
}

// noMeasureError says why no trial has a value of metric m.
func noMeasureError(m string) error {
	if visualMetric(m) {
		return fmt.Errorf("no verified visual trial in the run: --metric %s needs visual trials (visual: on in the spec, or compare --visual)", m)
	}
	return fmt.Errorf("no verified trial in the run has %s (the built-in loader measures neither FCP nor LCP)", MetricLabel(m))
}

// compareSamples compares sample c with baseline b in setting s.
func compareSamples(s Setting, b, c Sample, reps int, seed uint64) Comparison {
	cmp := Comparison{Setting: s, Baseline: b, Compare: c, Level: 1 - stats.Alpha,
		Diff: stats.DiffOfMeans(c.Values, b.Values), Ratio: stats.RatioOfMedians(c.Values, b.Values), Gain: stats.Gain(c.Values, b.Values),
		Welch: stats.Welch(c.Values, b.Values), MannWhitney: stats.MannWhitney(c.Values, b.Values)}
	if len(b.Values) == 0 || len(c.Values) == 0 {
		cmp.Diff, cmp.Ratio, cmp.Gain = math.NaN(), math.NaN(), math.NaN()
	}
	cmp.Test = cmp.MannWhitney
	cmp.Estimate, cmp.RatioLo, cmp.RatioHi, cmp.IntervalOK = stats.HodgesLehmannRatio(c.Values, b.Values, cmp.Level)
	cmp.UnpairedRatio, cmp.UnpairedLo, cmp.UnpairedHi = cmp.Estimate, cmp.RatioLo, cmp.RatioHi
	need := stats.LoadsToReach(stats.Alpha)
	if b.Paired && c.Paired {
		if q, t := pairsByRep(c, b); len(q) > 0 {
			p := stats.PairRatios(q, t, cmp.Level)
			cmp.Paired, cmp.Test, need = &p, p.Test, stats.PairsToReach(stats.Alpha)
			cmp.Estimate, cmp.RatioLo, cmp.RatioHi, cmp.IntervalOK = p.Ratio, p.Lo, p.Hi, p.CIOK
		}
	}
	cmp.Verdict = decide(cmp.Test, cmp.Estimate)
	if cmp.Verdict == stats.TooFewSamples && cmp.Test.OK {
		cmp.NeedLoads = need
	}
	roundsNeeded(&cmp)
	cmp.Why = whyOf(cmp, reps, seed)
	return cmp
}

// RoundsPower is the probability of a verdict RoundsNeeded plans for.
const RoundsPower = 0.8

// MaxRoundsNeeded caps RoundsNeeded: a ratio that close to 1 at that
// spread is no difference a run can show.
const MaxRoundsNeeded = 1000

// roundsNeeded sets c.RoundsNeeded for a verdict of no difference: from
// the pairs' spread of log ratios where c is paired, else from the two
// samples' pooled spread of logs.
func roundsNeeded(c *Comparison) {
	c.RoundsNeeded = 0
	if c.Verdict != stats.NoDifference {
		return
	}
	var n int
	if c.Paired != nil {
		q, t := pairsByRep(c.Compare, c.Baseline)
		n = stats.PairsFor(stats.LogRatioSD(q, t), c.Estimate, stats.Alpha, RoundsPower)
	} else {
		n = stats.RepetitionsFor(stats.PooledLogSD(c.Compare.Values, c.Baseline.Values), c.Estimate, stats.Alpha, RoundsPower)
	}
	c.RoundsNeeded = min(n, MaxRoundsNeeded+1)
}

// decide is test's verdict at stats.Alpha, faster or slower as the
// estimated ratio is below or above 1; too few samples when the test did
// not run or cannot reach α with its loads.
func decide(test stats.Test, ratio float64) stats.Verdict {
	switch {
	case !test.OK || test.MinP >= stats.Alpha:
		return stats.TooFewSamples
	case test.P >= stats.Alpha:
		return stats.NoDifference
	case ratio < 1:
		return stats.Faster
	}
	return stats.Slower
}

// pairsByRep are the values of the repetitions both samples have, in
// repetition order: q from c, t from b.
func pairsByRep(c, b Sample) (q, t []float64) {
	byRep := map[int64]float64{}
	for i, r := range b.Reps {
		byRep[r] = b.Values[i]
	}
	order := slices.Clone(c.Reps)
	slices.Sort(order)
	at := map[int64]float64{}
	for i, r := range c.Reps {
		at[r] = c.Values[i]
	}
	for _, r := range order {
		if v, ok := byRep[r]; ok {
			q, t = append(q, at[r]), append(t, v)
		}
	}
	return q, t
}

// sampleKey identifies a sample: a setting and a protocol.
type sampleKey struct {
	s     Setting
	proto factor.Protocol
}

// seedText is the text a sample's resampling seed is hashed from: the
// key as it was printed before the factor table (legacyText), so that
// reports keep their intervals.
func (k sampleKey) seedText() string {
	return "{s:" + LegacyText(k.s) + " proto:" + string(k.proto) + "}"
}

// stackANOVAs runs an ANOVA across the levels of factor across (a stack)
// wherever a protocol (of those keep accepts; nil: all) was loaded with
// more than one of them in otherwise equal settings.
func stackANOVAs(samples map[sampleKey]*Sample, across factor.ID, keep func(factor.Protocol) bool) []StackANOVA {
	type group struct {
		s      Setting
		proto  factor.Protocol
		stacks []string
		values [][]float64
	}
	groups := map[string]*group{}
	var order []string
	for k, sm := range samples {
		if keep != nil && !keep(sm.Protocol) {
			continue
		}
		base := k.s
		stack := base.Of(across)
		base.Set(across, "")
		id := LegacyText(base) + "|" + string(sm.Protocol)
		g := groups[id]
		if g == nil {
			g = &group{s: base, proto: sm.Protocol}
			groups[id] = g
			order = append(order, id)
		}
		g.stacks = append(g.stacks, stack)
		g.values = append(g.values, sm.Values)
	}
	slices.Sort(order)
	var out []StackANOVA
	for _, id := range order {
		g := groups[id]
		if len(g.stacks) < 2 {
			continue
		}
		idx := make([]int, len(g.stacks))
		for i := range idx {
			idx[i] = i
		}
		sort.Slice(idx, func(i, j int) bool { return g.stacks[idx[i]] < g.stacks[idx[j]] })
		var stacksSorted []string
		var values [][]float64
		for _, i := range idx {
			stacksSorted = append(stacksSorted, g.stacks[i])
			values = append(values, g.values[i])
		}
		out = append(out, StackANOVA{Setting: g.s, Protocol: g.proto, Stacks: stacksSorted, Test: stats.ANOVA(values...)})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Setting != out[j].Setting {
			return CompareSettings(out[i].Setting, out[j].Setting) < 0
		}
		return out[i].Protocol < out[j].Protocol
	})
	return out
}

// Shares counts, per setting of every factor but the page, the pages where
// the compared protocol's mean is below the baseline's. A run of one page
// has no shares.
func Shares(cmps []Comparison) []Share {
	index := map[Setting]int{}
	var out []Share
	pages := map[string]bool{}
	for _, c := range cmps {
		if len(c.Baseline.Values) == 0 || len(c.Compare.Values) == 0 {
			continue
		}
		pages[c.Setting.Page()] = true
		key := c.Setting
		key.Set(factor.IDPage, "")
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, Share{Setting: key})
		}
		out[i].Pages++
		if c.Diff < 0 {
			out[i].Faster++
		}
		if c.Verdict == stats.Faster {
			out[i].Significant++
		}
	}
	if len(pages) < 2 {
		return nil
	}
	return out
}

// experimental lists the experimental QUIC stacks of trials over h3, in
// their first order, each as "STACK: why".
func experimental(trials []results.Trial) []string {
	var out []string
	seen := map[factor.QUIC]bool{}
	for _, t := range trials {
		q := t.QUIC
		if why := q.Experimental(); why != "" && t.Protocol == factor.H3 && !seen[q] {
			seen[q] = true
			out = append(out, string(q)+": "+why)
		}
	}
	return out
}
