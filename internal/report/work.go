package report

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

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
// load event and their transfer bytes, as the browser saw them (the work
// its load time measures); the requests the servers answered over the
// whole load, after the load event too (beacons, late frames), and the
// body bytes they sent; the requests answered by a fuzzy match, those
// the recording lacked, and those of them not counted against the
// tolerance.
type Work struct {
	Protocol    factor.Protocol `json:"protocol"`
	Loads       int             `json:"loads"`
	Requests    float64         `json:"requests_to_load"`
	Bytes       float64         `json:"bytes_to_load"`
	Served      float64         `json:"served_requests"`
	ServedBytes float64         `json:"served_bytes"`
	Fuzzy       float64         `json:"fuzzy"`
	Unmatched   float64         `json:"unmatched"`
	BrowserOwn  float64         `json:"not_counted"`
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
}

// Works are the settings of recorded pages with their protocols' work,
// from the verified trials (none for generated pages).
func Works(trials []results.Trial) []SettingWork { return works(trials) }

// WriteWork writes the replay's completeness of one setting's loads (a
// comparison's), as the report does.
func WriteWork(w io.Writer, sws []SettingWork) { writeWork(w, sws, varied{}) }

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
		Unmatched:   median(func(t results.Trial) int64 { return t.UnmatchedRequests }),
		BrowserOwn:  median(func(t results.Trial) int64 { return t.BrowserOwnUnmatched + t.SteadyUnmatched })}
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
		s := settingOf(t)
		if !seen[s] {
			seen[s] = true
			settings = append(settings, s)
		}
		byKey[key{s, t.Protocol}] = append(byKey[key{s, t.Protocol}], t)
	}
	sortSettings(settings)
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

// writeWork writes the replay's completeness per setting and protocol.
func writeWork(w io.Writer, sws []SettingWork, v varied) {
	if len(sws) == 0 {
		return
	}
	fmt.Fprintf(w, "\nReplay of recorded pages, medians per verified load: the requests the page started up to its load event\n"+
		"and their bytes (the work its load time measures), the requests and body bytes the servers answered over the\n"+
		"whole load, fuzzy matches, unmatched requests and those not counted (the browser's own and those an earlier\n"+
		"load found the recording lacks); DIFFERENT WORK marks a setting whose protocols' work up to the load differs by more than %g %%:\n", 100*WorkTolerance)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%sprotocol\tloads\trequests\tbytes\tserved\tserved bytes\tfuzzy\tunmatched\tnot counted\t\n", v.header())
	for _, sw := range sws {
		for i, p := range sw.Protocols {
			mark := ""
			if i == 0 && sw.Differs {
				mark = fmt.Sprintf("DIFFERENT WORK (requests ±%s, bytes ±%s)", percent(sw.RequestSpread), percent(sw.ByteSpread))
			}
			fmt.Fprintf(tw, "%s%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", v.row(sw.Setting),
				p.Protocol, p.Loads, num(p.Requests, 0), num(p.Bytes, 0), num(p.Served, 0), num(p.ServedBytes, 0),
				num(p.Fuzzy, 0), num(p.Unmatched, 0), num(p.BrowserOwn, 0), mark)
		}
	}
	tw.Flush()
}
