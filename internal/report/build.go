package report

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/har"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/stats"
)

// Report is a run's analysis with its figures.
type Report struct {
	Page     Page
	Analysis *Analysis
	Figures  []Figure
}

// Build reads the results database of a run and analyses it. The waterfall
// shows the compared protocol's load whose metric is nearest the median of
// the first comparison (or o.WaterfallTrial), from its HAR when the run kept
// one, else from its Resource Timing. Compared visual settings get a
// filmstrip and progress curves of their median-Speed-Index loads.
// Canceling ctx stops it between its steps.
func Build(ctx context.Context, store *results.Store, name string, o Options) (_ *Report, err error) {
	dir := filepath.Dir(store.Path())
	var trials []results.Trial
	if err := store.EachTrial(func(t results.Trial) error {
		trials = append(trials, t)
		return ctx.Err()
	}); err != nil {
		return nil, err
	}
	if o.Until, err = untilRule(store, trials, o.ReplayUntil); err != nil {
		return nil, err
	}
	a, err := analyze(ctx, trials, o)
	if err != nil {
		return nil, err
	}
	if a.Calibration, err = calibrations(store); err != nil {
		return nil, err
	}
	if a.EmulatorLatency, err = emulatorLatencies(store); err != nil {
		return nil, err
	}
	facts, err := store.Facts()
	if err != nil {
		return nil, err
	}
	if n := facts["spec_name"]; n != "" && name == "" {
		name = n
	}
	var wf []results.Resource
	var wt *results.Trial
	t := medianTrial(trials, a)
	if o.WaterfallTrial != "" {
		t = nil
		for i := range trials {
			if trials[i].ID == o.WaterfallTrial {
				t = &trials[i]
			}
		}
		if t == nil {
			return nil, fmt.Errorf("no trial %q in this run (quicbench export lists the trial IDs)", o.WaterfallTrial)
		}
	}
	if t != nil {
		if wf, err = store.ResourcesOf(t.ID); err != nil {
			return nil, err
		}
		wt = t
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	figs, err := Figures(a, wf, wt, harOf(dir, wt))
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
	figs = append(figs, strips...)
	return &Report{Page: Page{Name: name, Facts: facts}, Analysis: a, Figures: figs}, nil
}

// harOf reads t's HAR artifact, if the run kept one; nil otherwise.
func harOf(dir string, t *results.Trial) *har.HAR {
	if t == nil {
		return nil
	}
	for _, a := range strings.Split(t.Artifacts, ",") {
		if strings.HasSuffix(a, ".har") {
			if h, err := har.ReadFile(filepath.Join(dir, a)); err == nil {
				return h
			}
		}
	}
	return nil
}

// medianTrial is the verified trial of the first comparison's compared
// protocol whose metric is nearest that sample's median.
func medianTrial(trials []results.Trial, a *Analysis) *results.Trial {
	cmps := valid(a)
	if len(cmps) == 0 {
		return nil
	}
	c := cmps[0]
	metric := metricOf(a.Options.Metric)
	var best *results.Trial
	bestDist := math.Inf(1)
	for i := range trials {
		t := &trials[i]
		if t.Protocol != c.Compare.Protocol || settingOf(*t) != c.Setting || t.Status != results.StatusOK {
			continue
		}
		if v := metric(*t); v != nil && math.Abs(*v-c.Compare.Summary.Median) < bestDist {
			best, bestDist = t, math.Abs(*v-c.Compare.Summary.Median)
		}
	}
	return best
}

// untilRule is the run's stopping rule as it was stored, or for a run
// without one the rule replay gives (up to the run's repetitions, seeded
// by the run's seed); nil for neither. A rule that names no protocols (a
// run made before rules were stored) compares those the run's trials
// have, as the run did.
func untilRule(store *results.Store, trials []results.Trial, replay *Replay) (*UntilRule, error) {
	r, err := store.StopRule()
	if err != nil {
		return nil, err
	}
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
	return &UntilRule{Seq: seq, Seed: r.Seed, Baseline: r.Baseline, Compare: r.Compare, CIRatio: r.CIRatio}, nil
}
