package breakdown

import (
	"cmp"
	"slices"
	"time"
)

// Span is a stretch of a load's time [From, To), counted from when the
// load began.
type Span struct{ From, To time.Duration }

// sortedSpans is a copy of spans in order of their starts.
func sortedSpans(spans []Span) []Span {
	out := slices.Clone(spans)
	slices.SortFunc(out, func(a, b Span) int { return cmp.Compare(a.From, b.From) })
	return out
}

// Covered is the time the spans cover together, overlaps counted once.
func Covered(spans []Span) time.Duration { return unionLength(spans) }

// unionLength is the time the spans cover together, overlaps counted once.
func unionLength(spans []Span) time.Duration {
	return total(merged(spans))
}

// merged is the union of spans as disjoint spans in time order, the empty
// ones left out.
func merged(spans []Span) []Span {
	var out []Span
	for _, s := range sortedSpans(spans) {
		switch {
		case s.To <= s.From:
		case len(out) == 0 || s.From > out[len(out)-1].To:
			out = append(out, s)
		case s.To > out[len(out)-1].To:
			out[len(out)-1].To = s.To
		}
	}
	return out
}

// total is the length of disjoint spans.
func total(disjoint []Span) time.Duration {
	var sum time.Duration
	for _, s := range disjoint {
		sum += s.To - s.From
	}
	return sum
}

// minus is what the disjoint, ordered spans a cover and b do not.
func minus(a, b []Span) []Span {
	var out []Span
	j := 0
	for _, s := range a {
		from := s.From
		for j < len(b) && b[j].To <= from {
			j++
		}
		for k := j; k < len(b) && b[k].From < s.To; k++ {
			if b[k].From > from {
				out = append(out, Span{from, b[k].From})
			}
			from = max(from, b[k].To)
		}
		if from < s.To {
			out = append(out, Span{from, s.To})
		}
	}
	return out
}

// within is the part of the disjoint, ordered spans a inside [0, end).
func within(a []Span, end time.Duration) []Span {
	return minus(a, []Span{{-1 << 62, 0}, {end, 1 << 62}})
}
