package analysis

import (
	"cmp"
	"encoding/json"
	"fmt"
	"time"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
)

// StackWarning is what one testbed's stacks did on the wire that was not
// what was applied (WireWarnings).
type StackWarning struct {
	// Setup is the testbed's setup key (results.Testbed.Key).
	Setup    string
	Warnings []string
}

// StackWarnings reads the run's testbeds and the warnings of each whose
// stacks did not do on the wire what was applied, and how many testbeds
// had their stacks measured on the wire (none in runs made before
// 2026-11-28). Each testbed is judged on its network's round trip as the
// run stored it (WireWarnings).
func StackWarnings(store *results.Store) ([]StackWarning, int, error) {
	tbs, err := store.Testbeds()
	if err != nil {
		return nil, 0, err
	}
	rtts, err := networkRoundTrips(store)
	if err != nil {
		return nil, 0, err
	}
	var out []StackWarning
	measured := 0
	for _, tb := range tbs {
		if tb.MeasuredTCPFlight == nil && tb.MeasuredQUICFlight == nil && tb.MeasuredTCPBackoff == nil && tb.MeasuredQUICBackoff == nil {
			continue
		}
		measured++
		if w := WireWarnings(tb, rtts[tb.Network]); len(w) > 0 {
			out = append(out, StackWarning{Setup: tb.Key, Warnings: w})
		}
	}
	return out, measured, nil
}

// networkRoundTrips are the round trips of the run's networks as it
// stored their links (both directions' delays), by name; a network whose
// link was not stored (a run without netchecks) is missing.
func networkRoundTrips(store *results.Store) (map[string]time.Duration, error) {
	configs, err := store.NetworkConfigs()
	if err != nil {
		return nil, err
	}
	out := map[string]time.Duration{}
	for name, text := range configs {
		var l struct {
			Up, Down struct {
				Delay time.Duration `json:"delay_ns"`
			}
		}
		if json.Unmarshal([]byte(text), &l) == nil {
			out[name] = l.Up.Delay + l.Down.Delay
		}
	}
	return out, nil
}

// MinJudgedRTT is the shortest round trip on which the wire tells a
// stack's pacing and its answer to a loss: breakdown.MinJudgedRTT, which
// reads them (the analysis reads only the results; a test keeps the two
// equal).
const MinJudgedRTT = 20 * time.Millisecond

// defaultInitCwnd is Linux's initial congestion window, in packets, where
// the route sets none.
const defaultInitCwnd = 10

// WireWarnings are the differences between what a testbed's stacks were
// set to do and what the wire showed they did: pacing asked for and a
// burst seen (or the other way), a first flight far from the initial
// window applied, a congestion control that kept another share of its
// sending after a loss than its window's. rtt is the network's round trip
// (0: not known). On one under MinJudgedRTT neither pacing nor
// the answer to a loss is judged, nor a paced stack's first flight (its
// pacer's timer is too coarse to send a window within so short a round
// trip: quic-go's first flights read 10 packets at 5 ms); and a first
// flight spread over a round trip or more is no window. Runs made before
// 2026-11-30 stored such readings (the wire reads them no more).
func WireWarnings(tb results.Testbed, rtt time.Duration) []string {
	var out []string
	judged := rtt == 0 || rtt >= MinJudgedRTT
	pacingDiffers := func(transport string, applied bool, measured string) {
		switch {
		case !judged:
		case applied && measured == "burst":
			out = append(out, fmt.Sprintf("%s pacing is on as applied, but its first flights left in one burst on the wire", transport))
		case !applied && measured == "paced":
			out = append(out, fmt.Sprintf("%s pacing is off as applied, but its first flights were paced on the wire", transport))
		}
	}
	tcpPaced := tb.Pacing || tb.Congestion == "bbr"
	pacingDiffers("TCP", tcpPaced, tb.MeasuredTCPPacing)
	if tb.QUICServer != "" {
		pacingDiffers("QUIC", tb.QUICPacing, tb.MeasuredQUICPacing)
	}
	if tb.MeasuredTCPFlight != nil && WithinRound(tb.MeasuredTCPSpreadMs, rtt) && (judged || !tcpPaced) {
		want := float64(cmp.Or(tb.InitCwnd, defaultInitCwnd))
		if got := *tb.MeasuredTCPFlight; got < want*0.8-1 || got > want*1.2+1 {
			out = append(out, fmt.Sprintf("TCP's first flights were %.0f packets on the wire, against an initial window of %.0f applied", got, want))
		}
	}
	if judged {
		out = append(out, backoffWarnings(tb)...)
	}
	if judged || !tb.QUICPacing {
		out = append(out, quicFlightDiffers(tb, rtt)...)
	}
	return out
}

// backoffWarnings warn where a testbed's TCP or QUIC congestion control
// kept another kind of share of its sending after the calibration's loss
// than its window's, as applied.
func backoffWarnings(tb results.Testbed) []string {
	tcpBackoff, tcpKnown := factor.Backoff(tb.Congestion)
	out := backoffDiffers("TCP", tb.Congestion, tcpBackoff, tcpKnown, tb.MeasuredTCPBackoff)
	// quinn's pacer sends in bursts with gaps inside a round trip, so the
	// calibration's loss may fall inside its first flight, not at the start
	// of a round: the share it kept is printed, not judged
	if tb.QUICServer != "" && factor.QUICServer(tb.QUICServer) != factor.QUICQuinn {
		quicBackoff, quicKnown := factor.QUICServer(tb.QUICServer).Backoff(factor.CC(tb.QUICCC))
		out = append(out, backoffDiffers("QUIC", tb.QUICCC, quicBackoff, quicKnown, tb.MeasuredQUICBackoff)...)
	}
	return out
}

// quicFlightDiffers warns where the QUIC server's first flights on the
// wire were far from the initial window applied (in bytes), if they left
// within a round trip rtt.
func quicFlightDiffers(tb results.Testbed, rtt time.Duration) []string {
	if tb.MeasuredQUICFlightBytes == nil || tb.QUICInitialWindowBytes <= 0 || !WithinRound(tb.MeasuredQUICSpreadMs, rtt) {
		return nil
	}
	want := float64(tb.QUICInitialWindowBytes)
	if got := *tb.MeasuredQUICFlightBytes; got < want*0.75 || got > want*1.25 {
		return []string{fmt.Sprintf("QUIC's first flights were %.0f B on the wire, against an initial window of %.0f B applied", got, want)}
	}
	return nil
}

// WithinRound reports whether first flights spread over spreadMs (their
// median, ms) left within the round trip rtt, as a window does (true
// where either is not known).
func WithinRound(spreadMs *float64, rtt time.Duration) bool {
	return spreadMs == nil || rtt == 0 || time.Duration(*spreadMs*float64(time.Millisecond)) < rtt
}

// BackoffClass names the share of its window (or of its sending, on the
// wire) a congestion control keeps after a loss in the three kinds the
// wire can tell apart: "halves" (below 0.6: Reno's and NewReno's 0.5),
// "keeps most" (0.6 to 0.95: CUBIC's 0.7) and "does not back off" (0.95
// and over: BBR). The wire reads a share only roughly (0.70 to 0.79 for
// Linux's, quic-go's and quiche's 0.7 in the wire test), so warnings
// compare kinds, not values.
func BackoffClass(share float64) string {
	switch {
	case share < 0.6:
		return "halves"
	case share < 0.95:
		return "keeps most"
	}
	return "does not back off"
}

// backoffDiffers warns where a transport's congestion control cc, as
// applied, keeps a share want of its window on a loss (known: the share
// is known) of another kind than the wire showed.
func backoffDiffers(transport, cc string, want float64, known bool, measured *float64) []string {
	if !known || measured == nil || BackoffClass(*measured) == BackoffClass(want) {
		return nil
	}
	return []string{fmt.Sprintf("%s's congestion control %s keeps %.1f of its window on a loss as applied (%s), but kept %.2f of its sending on the wire (%s)",
		transport, cc, want, BackoffClass(want), *measured, BackoffClass(*measured))}
}
