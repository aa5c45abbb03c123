package report

import (
	"fmt"
	"strings"

	"github.com/quicbench/quicbench/internal/analysis"
)

// whyWords says how c's difference in PLT came about, part by part
// (analysis.Why): the parts whose difference is measurable, with their
// intervals, and the rest; "" without a breakdown.
func whyWords(c analysis.Comparison) string {
	w := c.Why
	if w == nil || !w.Total.Known {
		return ""
	}
	how := fmt.Sprintf("differences of medians over %d and %d loads, 95 %% bootstrap intervals", len(c.Compare.Values), len(c.Baseline.Values))
	if w.Paired {
		how = fmt.Sprintf("Hodges–Lehmann estimates of the paired differences over %d pairs, 95 %% intervals", w.Loads)
	}
	head := fmt.Sprintf("Why, %s against %s (%s): of %s ms %s", c.Compare.Protocol, c.Baseline.Protocol, how, signed(w.Total.Diff, 1), interval(w.Total))
	var shown []string
	rest := w.Total.Diff
	names := analysis.PartNames()
	for i, d := range w.Parts {
		if !d.Measurable {
			continue
		}
		words := fmt.Sprintf("%s %s ms %s", names[i], signed(d.Diff, 1), interval(d))
		if i == analysis.PartLoss && w.Held.Measurable {
			words += fmt.Sprintf(" (head-of-line blocking: bytes held behind a missing TCP segment %s ms %s)", signed(w.Held.Diff, 1), interval(w.Held))
		}
		shown = append(shown, words)
		rest -= d.Diff
	}
	if len(shown) == 0 {
		return head + ", no part of the loads' time (loss recovery, the link, handshakes, round trips, the servers, the client) differed measurably."
	}
	return fmt.Sprintf("%s, %s; the rest, %s ms, is the parts that did not differ measurably.", head, strings.Join(shown, ", "), signed(rest, 1))
}

// interval is d's interval in brackets, in ms.
func interval(d analysis.PartDiff) string {
	return "[" + signed(d.Lo, 1) + ", " + signed(d.Hi, 1) + "]"
}
