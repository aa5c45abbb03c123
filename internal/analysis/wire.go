package analysis

import (
	"cmp"
	"fmt"

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
// 2026-11-28).
func StackWarnings(store *results.Store) ([]StackWarning, int, error) {
	tbs, err := store.Testbeds()
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
		if w := WireWarnings(tb); len(w) > 0 {
			out = append(out, StackWarning{Setup: tb.Key, Warnings: w})
		}
	}
	return out, measured, nil
}

// defaultInitCwnd is Linux's initial congestion window, in packets, where
// the route sets none.
const defaultInitCwnd = 10

// WireWarnings are the differences between what a testbed's stacks were
// set to do and what the wire showed they did: pacing asked for and a
// burst seen (or the other way), a first flight far from the initial
// window applied, a congestion control that kept another share of its
// sending after a loss than its window's.
func WireWarnings(tb results.Testbed) []string {
	var out []string
	pacingDiffers := func(transport string, applied bool, measured string) {
		switch {
		case applied && measured == "burst":
			out = append(out, fmt.Sprintf("%s pacing is on as applied, but its first flights left in one burst on the wire", transport))
		case !applied && measured == "paced":
			out = append(out, fmt.Sprintf("%s pacing is off as applied, but its first flights were paced on the wire", transport))
		}
	}
	pacingDiffers("TCP", tb.Pacing || tb.Congestion == "bbr", tb.MeasuredTCPPacing)
	if tb.QUICServer != "" {
		pacingDiffers("QUIC", tb.QUICPacing, tb.MeasuredQUICPacing)
	}
	if tb.MeasuredTCPFlight != nil {
		want := float64(cmp.Or(tb.InitCwnd, defaultInitCwnd))
		if got := *tb.MeasuredTCPFlight; got < want*0.8-1 || got > want*1.2+1 {
			out = append(out, fmt.Sprintf("TCP's first flights were %.0f packets on the wire, against an initial window of %.0f applied", got, want))
		}
	}
	tcpBackoff, tcpKnown := factor.Backoff(tb.Congestion)
	out = append(out, backoffDiffers("TCP", tb.Congestion, tcpBackoff, tcpKnown, tb.MeasuredTCPBackoff)...)
	// quinn's pacer sends in bursts with gaps inside a round trip, so the
	// calibration's loss may fall inside its first flight, not at the start
	// of a round: the share it kept is printed, not judged
	if tb.QUICServer != "" && factor.QUICServer(tb.QUICServer) != factor.QUICQuinn {
		quicBackoff, quicKnown := factor.QUICServer(tb.QUICServer).Backoff(factor.CC(tb.QUICCC))
		out = append(out, backoffDiffers("QUIC", tb.QUICCC, quicBackoff, quicKnown, tb.MeasuredQUICBackoff)...)
	}
	if tb.MeasuredQUICFlightBytes != nil && tb.QUICInitialWindowBytes > 0 {
		want := float64(tb.QUICInitialWindowBytes)
		if got := *tb.MeasuredQUICFlightBytes; got < want*0.75 || got > want*1.25 {
			out = append(out, fmt.Sprintf("QUIC's first flights were %.0f B on the wire, against an initial window of %.0f B applied", got, want))
		}
	}
	return out
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
