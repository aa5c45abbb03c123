package analysis

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
)

// WorkDifference is a request (its URL without query) that most of some
// protocols' verified loads in a setting started before their load event
// and most of the others' did not: where their work differed.
type WorkDifference struct {
	URL string `json:"url"`
	// In are the protocols most of whose loads started it before their
	// load event; NotIn those fewer than half of whose loads did.
	In    []factor.Protocol `json:"in"`
	NotIn []factor.Protocol `json:"not_in"`
}

// ResourceReader reads one load's resources (results.Store does).
type ResourceReader interface {
	ResourcesOf(trialID string) ([]results.Resource, error)
}

// NameWorkDifferences fills the Differences of each setting of ws whose
// protocols did different work, from the resources of its verified
// loads in trials.
func NameWorkDifferences(ws []SettingWork, trials []results.Trial, rr ResourceReader) error {
	differs := map[Setting]int{}
	for i, sw := range ws {
		if sw.Differs {
			differs[sw.Setting] = i
		}
	}
	if len(differs) == 0 {
		return nil
	}
	for _, g := range bySetting(trials, func(t results.Trial) bool { return t.PageKind == factor.PageArchive }) {
		i, ok := differs[g.setting]
		if !ok {
			continue
		}
		counts := map[factor.Protocol]map[string]int{}
		loads := map[factor.Protocol]int{}
		for _, pt := range g.protocols {
			c, err := countBeforeLoad(pt.trials, rr)
			if err != nil {
				return err
			}
			counts[pt.protocol], loads[pt.protocol] = c, len(pt.trials)
		}
		ws[i].Differences = workDifferences(counts, loads)
	}
	return nil
}

// countBeforeLoad counts, per URL without query, the loads of ts that
// started it before their load event (the document left out).
func countBeforeLoad(ts []results.Trial, rr ResourceReader) (map[string]int, error) {
	counts := map[string]int{}
	for _, t := range ts {
		if t.OnLoad == nil {
			continue
		}
		res, err := rr.ResourcesOf(t.ID)
		if err != nil {
			return nil, fmt.Errorf("resources of %s: %w", t.ID, err)
		}
		inLoad := map[string]bool{}
		for _, r := range res {
			u := withoutQuery(r.URL)
			if !r.Navigation && r.StartMs <= *t.OnLoad && !inLoad[u] {
				inLoad[u] = true
				counts[u]++
			}
		}
	}
	return counts, nil
}

// workDifferences are the URLs most loads of some protocols started and
// most loads of others did not, by URL.
func workDifferences(counts map[factor.Protocol]map[string]int, loads map[factor.Protocol]int) []WorkDifference {
	urls := map[string]bool{}
	for _, c := range counts {
		for u := range c {
			urls[u] = true
		}
	}
	protocols := slices.SortedFunc(maps.Keys(loads), func(a, b factor.Protocol) int { return cmp.Compare(a, b) })
	var out []WorkDifference
	for _, u := range slices.Sorted(maps.Keys(urls)) {
		var d WorkDifference
		for _, p := range protocols {
			if 2*counts[p][u] > loads[p] {
				d.In = append(d.In, p)
			} else {
				d.NotIn = append(d.NotIn, p)
			}
		}
		if len(d.In) > 0 && len(d.NotIn) > 0 {
			d.URL = u
			out = append(out, d)
		}
	}
	return out
}

// withoutQuery is raw up to its query or fragment.
func withoutQuery(raw string) string {
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		return raw[:i]
	}
	return raw
}
