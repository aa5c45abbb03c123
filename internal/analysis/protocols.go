package analysis

import (
	"encoding/json"
	"math"
	"slices"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/stats"
)

// RunSummary sums a run up per protocol: what `quicbench compare` prints
// after its loads, read from the run's results database.
type RunSummary struct {
	Protocols []ProtocolSummary `json:"summaries"`
	// Up and Down are the emulator's counts over every trial's measured
	// load.
	Up   LinkTotals `json:"uplink"`
	Down LinkTotals `json:"downlink"`
	// Overhead is what the harness added to the verified loads.
	Overhead Overhead `json:"overhead"`
	Trials   int      `json:"trials"`
	// Failed lists the failed trials, in plan order.
	Failed []results.Trial `json:"failed"`
}

// ProtocolSummary is one protocol's trials. Only verified loads enter the
// statistics; times are in milliseconds.
type ProtocolSummary struct {
	Protocol factor.Protocol `json:"protocol"`
	OK       int             `json:"ok"`
	Failed   int             `json:"failed"`
	PLT      stats.Summary   `json:"plt_ms"`
	DCL      stats.Summary   `json:"dcl_ms"`
	TTFB     stats.Summary   `json:"ttfb_ms"`
	// FCP and LCP are the paint timings; SpeedIndex, FVC and LVC the
	// visual metrics of the visual loads (n 0 without them).
	FCP        stats.Summary `json:"fcp_ms"`
	LCP        stats.Summary `json:"lcp_ms"`
	SpeedIndex stats.Summary `json:"speed_index"`
	FVC        stats.Summary `json:"fvc_ms"`
	LVC        stats.Summary `json:"lvc_ms"`
	// RatioToH2 is the median PLT over h2's; NaN without verified h2
	// loads (JSON null).
	RatioToH2 float64 `json:"-"`
	// Observed lists the distinct document protocols of all loads.
	Observed []string `json:"observed"`
	// Handshakes counts the verified loads' server connections per
	// handshake kind.
	Handshakes map[string]int `json:"handshakes"`
	// Use is how the verified loads' requests divided between h3 and
	// TCP, and Discovery their discovery rules in the order met ("forced",
	// "alt-svc").
	Use       UseTotals `json:"use"`
	Discovery []string  `json:"discovery"`
}

// UseTotals are the requests and transfer bytes of a protocol's verified
// loads over h3 and over TCP (results.ProtocolUse, summed), the median
// start of their first request over h3 in ms from navigation start (n 0
// where none went over h3), and the requests over TCP after their host
// had offered h3.
type UseTotals struct {
	H3Requests    int64         `json:"h3_requests"`
	TCPRequests   int64         `json:"tcp_requests"`
	H3Bytes       int64         `json:"h3_bytes"`
	TCPBytes      int64         `json:"tcp_bytes"`
	FirstH3       stats.Summary `json:"first_h3_ms"`
	TCPAfterOffer int64         `json:"tcp_after_offer"`
}

// RequestShare is the share of requests over h3, 0 to 1 (0 for none).
func (u UseTotals) RequestShare() float64 {
	return fraction(u.H3Requests, u.H3Requests+u.TCPRequests)
}

// ByteShare is the share of transfer bytes over h3, 0 to 1.
func (u UseTotals) ByteShare() float64 { return fraction(u.H3Bytes, u.H3Bytes+u.TCPBytes) }

func fraction(part, whole int64) float64 {
	if whole == 0 {
		return 0
	}
	return float64(part) / float64(whole)
}

// Discovers says whether some of the loads discovered h3 rather than
// having it forced.
func (p ProtocolSummary) Discovers() bool {
	return slices.ContainsFunc(p.Discovery, func(d string) bool { return factor.Discovery(d).Discovers() })
}

// MarshalJSON writes RatioToH2 as null when it is NaN.
func (p ProtocolSummary) MarshalJSON() ([]byte, error) {
	type plain ProtocolSummary
	var ratio *float64
	if !math.IsNaN(p.RatioToH2) {
		ratio = &p.RatioToH2
	}
	return json.Marshal(struct {
		plain
		RatioToH2 *float64 `json:"plt_median_ratio_to_h2"`
	}{plain(p), ratio})
}

// LinkTotals is what the emulator did in one direction over a run's
// measured loads, with the configured mean loss of its trials' network.
type LinkTotals struct {
	Packets           int64   `json:"packets"`
	Lost              int64   `json:"lost"`
	QueueDrops        int64   `json:"queue_drops"`
	PathLost          int64   `json:"path_lost"`
	PeakQueueBytes    int64   `json:"peak_queue_bytes"` // the largest of the trials'
	ConfiguredLossPct float64 `json:"configured_loss_pct"`
}

// Overhead describes the harness's cost per verified load, in ms.
type Overhead struct {
	// PerLoad is wall time − PLT (− the first visit's PLT for repeat
	// visits, whose overhead includes the pause between the visits).
	PerLoad      stats.Summary `json:"per_load_ms"`
	BrowserStart stats.Summary `json:"browser_start_ms"` // part of it spent starting the browser
}

// SummarizeRun sums up trials per protocol, in the vocabulary's order of
// protocols; conns are the trials' connections.
func SummarizeRun(trials []results.Trial, conns []results.Connection) RunSummary {
	r := RunSummary{Trials: len(trials)}
	verified := map[string]factor.Protocol{}
	var perLoad, start []float64
	for _, t := range trials {
		addLink(&r.Up, t.UpPackets, t.UpLost, t.UpQueueDrops, t.UpPathLost, t.UpPeakQueueBytes, t.LossUpPct)
		addLink(&r.Down, t.DownPackets, t.DownLost, t.DownQueueDrops, t.DownPathLost, t.DownPeakQueueBytes, t.LossDownPct)
		if t.Status != results.StatusOK {
			r.Failed = append(r.Failed, t)
			continue
		}
		verified[t.ID] = t.Protocol
		perLoad, start = appendValue(perLoad, t.Overhead), appendValue(start, t.BrowserStart)
	}
	r.Overhead = Overhead{PerLoad: stats.Summarize(perLoad), BrowserStart: stats.Summarize(start)}
	for _, p := range factor.Protocols().Values() {
		if s, ok := summarizeProtocol(p, trials, conns, verified); ok {
			r.Protocols = append(r.Protocols, s)
		}
	}
	for i := range r.Protocols {
		for _, h2 := range r.Protocols {
			if h2.Protocol == factor.H2 && h2.OK > 0 && r.Protocols[i].OK > 0 {
				r.Protocols[i].RatioToH2 = r.Protocols[i].PLT.Median / h2.PLT.Median
			}
		}
	}
	return r
}

// summarizeProtocol is p's summary, and false if no trial loaded over p.
func summarizeProtocol(p factor.Protocol, trials []results.Trial, conns []results.Connection, verified map[string]factor.Protocol) (ProtocolSummary, bool) {
	s := ProtocolSummary{Protocol: p, RatioToH2: math.NaN(), Handshakes: map[string]int{}}
	var plt, dcl, ttfb, fcp, lcp, si, fvc, lvc, firstH3 []float64
	for _, t := range trials {
		if t.Protocol != p {
			continue
		}
		if d := string(t.Discovery); d != "" && !slices.Contains(s.Discovery, d) {
			s.Discovery = append(s.Discovery, d)
		}
		if t.DocumentProtocol != "" && !slices.Contains(s.Observed, t.DocumentProtocol) {
			s.Observed = append(s.Observed, t.DocumentProtocol)
		}
		if t.Status != results.StatusOK {
			s.Failed++
			continue
		}
		s.OK++
		plt, dcl, ttfb = appendValue(plt, t.PLT), appendValue(dcl, t.DCL), appendValue(ttfb, t.TTFB)
		fcp, lcp = appendValue(fcp, t.FCP), appendValue(lcp, t.LCP)
		si, fvc, lvc = appendValue(si, t.SpeedIndex), appendValue(fvc, t.FVC), appendValue(lvc, t.LVC)
		addUse(&s.Use, t.ProtocolUse)
		firstH3 = appendValue(firstH3, t.FirstH3)
	}
	s.Use.FirstH3 = stats.Summarize(firstH3)
	for _, c := range conns {
		if verified[c.TrialID] == p {
			s.Handshakes[c.Handshake]++
		}
	}
	s.PLT, s.DCL, s.TTFB = stats.Summarize(plt), stats.Summarize(dcl), stats.Summarize(ttfb)
	s.FCP, s.LCP = stats.Summarize(fcp), stats.Summarize(lcp)
	s.SpeedIndex, s.FVC, s.LVC = stats.Summarize(si), stats.Summarize(fvc), stats.Summarize(lvc)
	return s, s.OK+s.Failed > 0
}

func addUse(u *UseTotals, t results.ProtocolUse) {
	u.H3Requests += t.H3Requests
	u.TCPRequests += t.TCPRequests
	u.H3Bytes += t.H3Bytes
	u.TCPBytes += t.TCPBytes
	u.TCPAfterOffer += t.TCPAfterOffer
}

func addLink(l *LinkTotals, packets, lost, queueDrops, pathLost, peak int64, lossPct float64) {
	l.Packets += packets
	l.Lost += lost
	l.QueueDrops += queueDrops
	l.PathLost += pathLost
	l.PeakQueueBytes = max(l.PeakQueueBytes, peak)
	l.ConfiguredLossPct = lossPct
}

func appendValue(vs []float64, v *float64) []float64 {
	if v != nil {
		vs = append(vs, *v)
	}
	return vs
}
