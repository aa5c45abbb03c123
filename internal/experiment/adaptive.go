package experiment

import (
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/spec"
	"github.com/quicbench/quicbench/internal/stats"
)

// stopper decides when a setting (a cell but for its protocol) has been
// repeated enough (spec until): after each of its repetitions from the
// rule's minimum, the sequential test of the compared protocols' PLTs
// either goes on or stops the setting, whose later trials are then left
// out. Its decisions depend only on the recorded PLTs, so a resumed run
// reaches the decisions the interrupted one did.
type stopper struct {
	seq               *stats.Sequential
	baseline, compare factor.Protocol
	seed              uint64 // of the looks' bootstrap intervals: the spec's seed
	settings          map[factor.Setting]*settingState
}

// settingState is what the stopper knows of one setting.
type settingState struct {
	values map[factor.Protocol]map[int]float64 // PLT of the verified loads by repetition
	looked int                                 // repetitions looked at so far
	stopAt int                                 // the repetition after which it stopped; 0 while going on
	look   stats.Look
}

// stopRuleOf is the stopping rule of s as the run stores it, nil when s
// repeats every cell equally.
func stopRuleOf(s *spec.Spec) *results.StopRule {
	if s.Until == nil {
		return nil
	}
	b, c := factor.ComparedProtocols(s.Protocols())
	return &results.StopRule{Min: s.Until.Min, Max: s.Repetitions, CIRatio: s.Until.CIRatio, Seed: s.Seed, Baseline: b, Compare: c, Paired: s.Pairing}
}

// stopperOf is the stopper of the run in store: its stored rule (for a
// run made before rules were stored, the rule of s, which a resume checks
// is the run's spec); nil for a run that repeats every cell equally.
func stopperOf(store *results.Store, s *spec.Spec) (*stopper, error) {
	r, err := store.StopRule()
	if err != nil {
		return nil, err
	}
	if r == nil || r.Baseline == "" {
		r = stopRuleOf(s)
	}
	return newStopper(r)
}

// newStopper returns the stopper of rule r, or nil for none.
func newStopper(r *results.StopRule) (*stopper, error) {
	if r == nil {
		return nil, nil
	}
	seq, err := stats.NewSequential(stats.Alpha, r.Min, r.Max, r.CIRatio)
	if err != nil {
		return nil, err
	}
	seq.Paired = r.Paired // paired loads are judged as pairs
	return &stopper{seq: seq, baseline: r.Baseline, compare: r.Compare, seed: r.Seed, settings: map[factor.Setting]*settingState{}}, nil
}

// state returns the setting's state, creating it.
func (st *stopper) state(key factor.Setting) *settingState {
	s := st.settings[key]
	if s == nil {
		s = &settingState{values: map[factor.Protocol]map[int]float64{st.baseline: {}, st.compare: {}}}
		st.settings[key] = s
	}
	return s
}

// record notes a recorded trial's outcome.
func (st *stopper) record(t plan.Trial, rec results.Trial) {
	if st == nil {
		return
	}
	s := st.state(t.Cell.Levels.Setting())
	if vals, ok := s.values[t.Cell.Levels.Protocol()]; ok && rec.Status == results.StatusOK && rec.PLT != nil {
		vals[t.Rep] = *rec.PLT
	}
}

// skip reports whether t's setting stopped before t's repetition: it
// makes the looks after repetitions up to t.Rep − 1 not made yet.
func (st *stopper) skip(t plan.Trial) bool {
	if st == nil {
		return false
	}
	s := st.state(t.Cell.Levels.Setting())
	for s.stopAt == 0 && s.looked < t.Rep-1 {
		s.looked++
		if s.looked < st.seq.Min {
			continue
		}
		l := st.seq.LookAt(s.looked, s.values[st.compare], s.values[st.baseline], st.seed)
		if l.Stop {
			s.stopAt, s.look = s.looked, l
		}
	}
	return s.stopAt != 0 && t.Rep > s.stopAt
}

// load feeds the stopper the trials recorded before this invocation.
func (st *stopper) load(store *results.Store, trials []plan.Trial) error {
	if st == nil {
		return nil
	}
	byID := make(map[string]plan.Trial, len(trials))
	for _, t := range trials {
		byID[t.ID] = t
	}
	return store.EachTrial(func(rec results.Trial) error {
		if t, ok := byID[rec.ID]; ok {
			st.record(t, rec)
		}
		return nil
	})
}
