package results

import (
	"encoding/json"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/quicbench/quicbench/internal/factor"
)

// stopRuleKey is the run fact that holds the run's StopRule.
const stopRuleKey = "stop_rule"

// StopRule is a run's rule for stopping a setting's repetitions (a spec's
// repetitions: {min, max, until: {ci_ratio}}), stored with the run when
// it is created: the run applies it and the report replays it from here.
type StopRule struct {
	// Min is the repetitions before the first look, Max the most.
	Min int `json:"min"`
	Max int `json:"max"`
	// CIRatio is the relative half-width of the ratio's 95 % interval
	// that suffices, such as 0.03.
	CIRatio float64 `json:"ci_ratio"`
	// Seed seeds each look's bootstrap interval (the spec's seed).
	Seed uint64 `json:"seed"`
	// Baseline and Compare are the protocols the rule compares; empty in
	// a rule read from a run made before rules were stored (the report
	// then takes them from the run's trials).
	Baseline factor.Protocol `json:"baseline,omitempty"`
	Compare  factor.Protocol `json:"compare,omitempty"`
	// Paired: the loads of a repetition started from the same link
	// state and are judged as pairs.
	Paired bool `json:"paired"`
}

// StopRuleFact is the run fact that stores r, for the facts a run is
// created with.
func StopRuleFact(r StopRule) (key, value string) {
	b, _ := json.Marshal(r) // plain numbers and strings: it cannot fail
	return stopRuleKey, string(b)
}

// StopRule returns the run's stopping rule, nil for a run that repeated
// every cell equally. A run made before the rule was stored has it in its
// stored spec, which is read for that alone.
func (s *Store) StopRule() (*StopRule, error) {
	text, err := s.Meta(stopRuleKey)
	if err != nil {
		return nil, err
	}
	if text != "" {
		var r StopRule
		if err := json.Unmarshal([]byte(text), &r); err != nil {
			return nil, fmt.Errorf("results database %s: the run's stopping rule: %w", s.path, err)
		}
		return &r, nil
	}
	spec, err := s.Meta("spec")
	if err != nil {
		return nil, err
	}
	return legacyStopRule([]byte(spec))
}

// legacyStopRule reads the rule of a run made before rules were stored
// from its stored spec's seed and repetitions (the rest of that spec is
// not checked: its files may be elsewhere now); nil for a spec without
// one.
func legacyStopRule(spec []byte) (*StopRule, error) {
	var f struct {
		Seed        *uint64   `yaml:"seed"`
		Repetitions yaml.Node `yaml:"repetitions"`
	}
	if err := yaml.Unmarshal(spec, &f); err != nil {
		return nil, fmt.Errorf("the run's stored spec: %s", oneLine(err))
	}
	if f.Repetitions.Kind != yaml.MappingNode {
		return nil, nil
	}
	var reps struct {
		Min   int `yaml:"min"`
		Max   int `yaml:"max"`
		Until struct {
			CIRatio float64 `yaml:"ci_ratio"`
		} `yaml:"until"`
	}
	if err := f.Repetitions.Decode(&reps); err != nil {
		return nil, fmt.Errorf("the run's stored spec: repetitions: %s", oneLine(err))
	}
	r := &StopRule{Min: reps.Min, Max: reps.Max, CIRatio: reps.Until.CIRatio, Seed: 1, Paired: true}
	if f.Seed != nil {
		r.Seed = *f.Seed
	}
	return r, nil
}

// oneLine is err's text on one line: YAML's errors list one problem per
// line.
func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

// MaxRepetitions is the most repetitions a stored spec gives its cells:
// its repetitions, or their max in the adaptive form.
func MaxRepetitions(spec []byte) (int, error) {
	var f struct {
		Repetitions yaml.Node `yaml:"repetitions"`
	}
	if err := yaml.Unmarshal(spec, &f); err != nil {
		return 0, fmt.Errorf("the run's stored spec: %s", oneLine(err))
	}
	var n int
	var err error
	switch f.Repetitions.Kind {
	case yaml.ScalarNode:
		err = f.Repetitions.Decode(&n)
	case yaml.MappingNode:
		var reps struct {
			Max int `yaml:"max"`
		}
		err = f.Repetitions.Decode(&reps)
		n = reps.Max
	}
	if err != nil || n < 1 {
		return 0, fmt.Errorf("the run's stored spec gives no repetitions")
	}
	return n, nil
}
