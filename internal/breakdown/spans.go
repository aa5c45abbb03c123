package breakdown

import (
	"cmp"
	"slices"
	"time"
)

// sortedSpans is a copy of spans in order of their starts.
func sortedSpans(spans []span) []span {
	out := slices.Clone(spans)
	slices.SortFunc(out, func(a, b span) int { return cmp.Compare(a.From, b.From) })
	return out
}

// span is a stretch of time [From, To).
type span struct{ From, To time.Duration }

// unionLength is the time the spans cover together, overlaps counted once.
func unionLength(spans []span) time.Duration {
	sorted := sortedSpans(spans)
	var total, end time.Duration
	started := false
	for _, s := range sorted {
		switch {
		case !started || s.From > end:
			total += s.To - s.From
			end, started = s.To, true
		case s.To > end:
			total += s.To - end
			end = s.To
		}
	}
	return total
}
