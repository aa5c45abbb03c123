package analysis

import (
	"math"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/stats"
)

// WorkTolerance is how far the protocols' median requests or bytes per
// load up to the load event may differ, relative to the smallest, before
// a setting's loads are said to do different work.
const WorkTolerance = 0.02

// Work is what one protocol's verified loads of a recorded page did in a
// setting, as medians per load: the requests the page started up to its
// load event, as the browser saw them, and the body bytes the servers
// send for them (the work its load time measures); the requests the servers answered over the
// whole load, after the load event too (beacons, late frames), and the
// body bytes they sent; the requests answered by a fuzzy match and by a
// variant (an image the recording holds at another size), those the
// recording lacked, those of them not counted against the tolerance, and
// the images the browser could not show (Broken).
type Work struct {
	Protocol    factor.Protocol `json:"protocol"`
	Loads       int             `json:"loads"`
	Requests    float64         `json:"requests_to_load"`
	Bytes       float64         `json:"bytes_to_load"`
	Served      float64         `json:"served_requests"`
	ServedBytes float64         `json:"served_bytes"`
	Fuzzy       float64         `json:"fuzzy"`
	Variant     float64         `json:"variant"`
	Unmatched   float64         `json:"unmatched"`
	BrowserOwn  float64         `json:"not_counted"`
	Broken      float64         `json:"broken_images"`
}

// SettingWork is the protocols' work in one setting of a recorded page.
// Differs says their median requests or bytes up to the load event
// differ by more than WorkTolerance: their loads are not the same work,
// and their times not comparable as they stand.
type SettingWork struct {
	Setting   Setting `json:"setting"`
	Protocols []Work  `json:"protocols"`
	// RequestSpread and ByteSpread are (largest − smallest) / smallest of
	// the protocols' medians up to the load event.
	RequestSpread float64 `json:"request_spread"`
	ByteSpread    float64 `json:"byte_spread"`
	Differs       bool    `json:"different_work"`
	// Differences name the requests behind Differs, where the loads'
	// resources were read (NameWorkDifferences).
	Differences []WorkDifference `json:"differences,omitempty"`
}

// Works are the settings of recorded pages with their protocols' work,
// from the verified trials (none for generated pages).
func Works(trials []results.Trial) []SettingWork { return works(trials) }

// works is Works.
func works(trials []results.Trial) []SettingWork {
	var out []SettingWork
	for _, g := range bySetting(trials, func(t results.Trial) bool { return t.PageKind == factor.PageArchive }) {
		sw := SettingWork{Setting: g.setting}
		for _, pt := range g.protocols {
			sw.Protocols = append(sw.Protocols, workOf(pt.protocol, pt.trials))
		}
		sw.RequestSpread = spread(sw.Protocols, func(w Work) float64 { return w.Requests })
		sw.ByteSpread = spread(sw.Protocols, func(w Work) float64 { return w.Bytes })
		sw.Differs = sw.RequestSpread > WorkTolerance || sw.ByteSpread > WorkTolerance
		out = append(out, sw)
	}
	return out
}

// workOf is protocol p's work over its verified trials ts.
func workOf(p factor.Protocol, ts []results.Trial) Work {
	median := func(v func(results.Trial) int64) float64 {
		vs := make([]float64, len(ts))
		for i, t := range ts {
			vs[i] = float64(v(t))
		}
		return stats.Summarize(vs).Median
	}
	return Work{Protocol: p, Loads: len(ts),
		Requests:    median(func(t results.Trial) int64 { return t.LoadRequests }),
		Bytes:       median(func(t results.Trial) int64 { return t.LoadBytes }),
		Served:      median(func(t results.Trial) int64 { return t.ServerRequests }),
		ServedBytes: median(func(t results.Trial) int64 { return t.ServedBytes }),
		Fuzzy:       median(func(t results.Trial) int64 { return t.ReplayFuzzy }),
		Variant:     median(func(t results.Trial) int64 { return t.ReplayVariant }),
		Unmatched:   median(func(t results.Trial) int64 { return t.UnmatchedRequests }),
		BrowserOwn:  median(func(t results.Trial) int64 { return t.BrowserOwnUnmatched + t.HeldNavigations + t.SteadyUnmatched }),
		Broken:      median(func(t results.Trial) int64 { return int64(len(t.BrokenImageURLs)) })}
}

// settingTrials are one setting's verified trials, per protocol in the
// protocols' order.
type settingTrials struct {
	setting   Setting
	protocols []protocolTrials
}

// protocolTrials are one protocol's trials.
type protocolTrials struct {
	protocol factor.Protocol
	trials   []results.Trial
}

// bySetting groups the verified trials that keep accepts by setting, in
// the settings' order, and by protocol.
func bySetting(trials []results.Trial, keep func(results.Trial) bool) []settingTrials {
	type key struct {
		s Setting
		p factor.Protocol
	}
	byKey := map[key][]results.Trial{}
	var settings []Setting
	seen := map[Setting]bool{}
	for _, t := range trials {
		if t.Status != results.StatusOK || !keep(t) {
			continue
		}
		s := SettingOf(t)
		if !seen[s] {
			seen[s] = true
			settings = append(settings, s)
		}
		byKey[key{s, t.Protocol}] = append(byKey[key{s, t.Protocol}], t)
	}
	SortSettings(settings)
	out := make([]settingTrials, 0, len(settings))
	for _, s := range settings {
		g := settingTrials{setting: s}
		for _, p := range factor.Protocols().Values() {
			if ts := byKey[key{s, p}]; len(ts) > 0 {
				g.protocols = append(g.protocols, protocolTrials{p, ts})
			}
		}
		out = append(out, g)
	}
	return out
}

// spread is (largest − smallest) / smallest of v over ws; 0 for fewer
// than two, +Inf when the smallest is 0 and the largest is not.
func spread(ws []Work, v func(Work) float64) float64 {
	if len(ws) < 2 {
		return 0
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, w := range ws {
		lo, hi = min(lo, v(w)), max(hi, v(w))
	}
	if hi == lo {
		return 0
	}
	return (hi - lo) / lo
}
