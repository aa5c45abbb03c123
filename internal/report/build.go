package report

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/har"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/stats"
)

// Report is a run's analysis with its figures.
type Report struct {
	Page     Page
	Analysis *analysis.Analysis
	Figures  []Figure
}

// Build reads the results database of a run and analyses it. The
// waterfalls show the median loads of the first setting (waterfallTrials;
// or o.WaterfallTrial), each from its HAR when the run kept one, else from
// its Resource Timing. Compared visual settings get a
// filmstrip and progress curves of their median-Speed-Index loads.
// claims, if not nil, are set beside the analysis (package reproduce
// evaluates them). Canceling ctx stops it between its steps.
func Build(ctx context.Context, store *results.Store, name string, o analysis.Options, claims *Claims) (_ *Report, err error) {
	dir := filepath.Dir(store.Path())
	trials, err := readTrials(ctx, store)
	if err != nil {
		return nil, err
	}
	a, err := analyse(ctx, store, trials, o)
	if err != nil {
		return nil, err
	}
	facts, err := store.Facts()
	if err != nil {
		return nil, err
	}
	firstChecks, err := takeFirstNetchecks(facts)
	if err != nil {
		return nil, err
	}
	if n := facts["spec_name"]; n != "" && name == "" {
		name = n
	}
	picked, err := waterfallTrials(trials, a, o.WaterfallTrial)
	if err != nil {
		return nil, err
	}
	waterfalls, err := waterfallsOf(store, dir, picked)
	if err != nil {
		return nil, err
	}
	figs, err := buildFigures(ctx, dir, trials, a, waterfalls)
	if err != nil {
		return nil, err
	}
	listed, count := analysis.Loads(trials, a.Options.Metric)
	return &Report{Page: Page{Name: name, Facts: facts, FirstNetchecks: firstChecks, Loads: listed, LoadCount: count, RunDir: dir, Claims: claims}, Analysis: a, Figures: figs}, nil
}

// readTrials reads every trial of store, stopping if ctx is canceled.
func readTrials(ctx context.Context, store *results.Store) ([]results.Trial, error) {
	total, _, err := store.Counts()
	if err != nil {
		return nil, err
	}
	// Sized once: grown by append, a large run's trials were copied
	// into ever larger arrays, about five times their size allocated in all.
	trials := make([]results.Trial, 0, total)
	if err := store.EachTrial(func(t results.Trial) error {
		trials = append(trials, t)
		return ctx.Err()
	}); err != nil {
		return nil, err
	}
	return trials, nil
}

// analyse analyses trials by o and adds what store's other tables tell:
// calibrations, differences of work, emulator latency and stack warnings.
func analyse(ctx context.Context, store *results.Store, trials []results.Trial, o analysis.Options) (*analysis.Analysis, error) {
	var err error
	if o.Until, err = untilRule(store, trials, o.ReplayUntil); err != nil {
		return nil, err
	}
	a, err := analysis.AnalyzeContext(ctx, trials, o)
	if err != nil {
		return nil, err
	}
	if a.Calibration, err = analysis.Calibrations(store); err != nil {
		return nil, err
	}
	if err := analysis.NameWorkDifferences(a.Work, trials, store); err != nil {
		return nil, err
	}
	if a.EmulatorLatency, err = analysis.EmulatorLatencies(store); err != nil {
		return nil, err
	}
	if a.Stacks, a.Testbeds, err = analysis.StackWarnings(store); err != nil {
		return nil, err
	}
	return a, nil
}

// waterfallsOf reads from store (of the run in dir) what the waterfalls of
// the picked trials show: resources, connections, samples, losses and HAR.
func waterfallsOf(store *results.Store, dir string, picked []*results.Trial) ([]Waterfall, error) {
	var waterfalls []Waterfall
	for _, t := range picked {
		res, err := store.ResourcesOf(t.ID)
		if err != nil {
			return nil, err
		}
		conns, err := store.ConnectionsOf(t.ID)
		if err != nil {
			return nil, err
		}
		samples, err := store.SamplesOf(t.ID)
		if err != nil {
			return nil, err
		}
		losses, err := store.LossesOf(t.ID)
		if err != nil {
			return nil, err
		}
		h, note := harOf(dir, t)
		waterfalls = append(waterfalls, Waterfall{Trial: *t, Resources: res, HAR: h, HARNote: note, Connections: conns, Samples: samples, Losses: losses})
	}
	return waterfalls, nil
}

// buildFigures draws the report's figures, the waterfalls' and the visual
// loads' filmstrips among them, stopping if ctx is canceled.
func buildFigures(ctx context.Context, dir string, trials []results.Trial, a *analysis.Analysis, waterfalls []Waterfall) ([]Figure, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	figs, err := Figures(ctx, a, waterfalls)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	strips, err := visualFigures(dir, trials, a)
	if err != nil {
		return nil, err
	}
	return append(figs, strips...), nil
}

// maxArtifactHARBytes bounds a load's HAR artifact the report reads: one
// page load's requests and timings, which quicbench writes without bodies.
const maxArtifactHARBytes = 64 << 20

// harOf reads t's HAR artifact, if the run kept one; nil otherwise, with
// a note where it kept one the report could not draw (beyond the size
// bound, or not a HAR). The artifacts column is the run's, which a user
// may have edited: the HAR is read only inside the run directory dir (no
// absolute path, no "..", no link followed below dir, as frames are
// read) and within a size bound.
func harOf(dir string, t *results.Trial) (*har.HAR, string) {
	if t == nil {
		return nil, ""
	}
	note := ""
	for _, a := range strings.Split(t.Artifacts, ",") {
		if !strings.HasSuffix(a, ".har") || !insideRun(a) {
			continue
		}
		data, err := safefs.ReadIn(dir, a, maxArtifactHARBytes)
		var tooLarge *safefs.TooLargeError
		switch {
		case errors.As(err, &tooLarge):
			note = fmt.Sprintf("Its HAR artifact is larger than the report's bound of %d MiB, so it is drawn from Resource Timing instead.", maxArtifactHARBytes>>20)
			continue
		case err != nil:
			continue
		}
		if h, err := har.Parse(data); err == nil {
			return h, ""
		}
		note = "Its HAR artifact is not a HAR document the report reads, so it is drawn from Resource Timing instead."
	}
	return nil, note
}

// insideRun reports whether the artifact path a names a file below the
// run directory as written: relative, with no "." or ".." among its names.
func insideRun(a string) bool {
	if a == "" || filepath.IsAbs(a) {
		return false
	}
	for _, name := range strings.Split(a, "/") {
		if name == "" || name == "." || name == ".." {
			return false
		}
	}
	return true
}

// waterfallTrials are the loads whose waterfalls the report draws: the
// trial named id; else, for a run of a few settings, the median load of
// each protocol of the first setting, in protocol order (one above the
// other); else the compared protocol's median load of the first setting.
func waterfallTrials(trials []results.Trial, a *analysis.Analysis, id string) ([]*results.Trial, error) {
	if id != "" {
		for i := range trials {
			if trials[i].ID == id {
				return []*results.Trial{&trials[i]}, nil
			}
		}
		return nil, fmt.Errorf("no trial %q in this run (quicbench export lists the trial IDs)", id)
	}
	cmps := valid(a)
	if len(cmps) == 0 {
		return nil, nil
	}
	samples := []analysis.Sample{cmps[0].Compare}
	if settings, all := settingSamples(a); len(settings) <= maxLoadFigureSettings {
		samples = all[cmps[0].Setting]
	}
	var out []*results.Trial
	for _, sm := range samples {
		if t := medianTrial(trials, a, cmps[0].Setting, sm); t != nil {
			out = append(out, t)
		}
	}
	return out, nil
}

// medianTrial is the verified trial of sample sm in setting s whose metric
// is nearest sm's median.
func medianTrial(trials []results.Trial, a *analysis.Analysis, s analysis.Setting, sm analysis.Sample) *results.Trial {
	metric := analysis.MetricOf(a.Options.Metric)
	var best *results.Trial
	bestDist := math.Inf(1)
	for i := range trials {
		t := &trials[i]
		if t.Protocol != sm.Protocol || analysis.SettingOf(*t) != s || t.Status != results.StatusOK {
			continue
		}
		if v := metric(*t); v != nil && math.Abs(*v-sm.Summary.Median) < bestDist {
			best, bestDist = t, math.Abs(*v-sm.Summary.Median)
		}
	}
	return best
}

// untilRule is the run's stopping rule as it was stored, or for a run
// without one the rule replay gives (up to the run's repetitions, seeded
// by the run's seed); nil for neither. A rule that names no protocols (a
// run made before rules were stored) compares those the run's trials
// have, as the run did.
func untilRule(store *results.Store, trials []results.Trial, replay *analysis.Replay) (*analysis.UntilRule, error) {
	r, err := store.StopRule()
	if err != nil {
		return nil, err
	}
	return UntilOf(r, trials, replay)
}

// UntilOf is the stored rule r (nil: none) as the analysis replays it
// over trials, or for a run without one the rule replay gives; nil for
// neither.
func UntilOf(r *results.StopRule, trials []results.Trial, replay *analysis.Replay) (*analysis.UntilRule, error) {
	if r == nil && replay != nil && len(trials) > 0 {
		r = &results.StopRule{Min: replay.Min, CIRatio: replay.CIRatio, Seed: uint64(trials[0].Seed)}
		for _, t := range trials {
			r.Max = max(r.Max, int(t.Rep))
		}
		if r.Min > r.Max {
			return nil, fmt.Errorf("--until-min %d is above the run's %d repetitions", r.Min, r.Max)
		}
	}
	if r == nil {
		return nil, nil
	}
	seq, err := stats.NewSequential(stats.Alpha, r.Min, r.Max, r.CIRatio)
	if err != nil {
		return nil, err
	}
	if r.Baseline == "" || r.Compare == "" {
		var protocols []factor.Protocol
		for _, t := range trials {
			if !slices.Contains(protocols, t.Protocol) {
				protocols = append(protocols, t.Protocol)
			}
		}
		r.Baseline, r.Compare = factor.ComparedProtocols(protocols)
	}
	return &analysis.UntilRule{Seq: seq, Seed: r.Seed, Baseline: r.Baseline, Compare: r.Compare, CIRatio: r.CIRatio}, nil
}

// takeFirstNetchecks takes the failed first netchecks out of facts, as
// tables, by network.
func takeFirstNetchecks(facts map[string]string) ([]analysis.Calibration, error) {
	var out []analysis.Calibration
	for _, key := range slices.Sorted(maps.Keys(facts)) {
		network, ok := strings.CutPrefix(key, results.FirstNetcheckFact)
		if !ok {
			continue
		}
		c, err := analysis.CalibrationOf(network, facts[key])
		if err != nil {
			return nil, err
		}
		out = append(out, c)
		delete(facts, key)
	}
	return out, nil
}
