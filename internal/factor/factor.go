// Package factor is quicbench's vocabulary: the factors an experiment can
// vary, declared once in Table (table.go) with their spec keys, result
// columns, scopes, defaults and labels, and each enumerated factor as one
// type with its levels, one parser and one validator (levels.go): network,
// page, origins, TCP stack, server stack, QUIC stack, protocol, visit,
// cache, client and its capabilities, browser mode, visual capture.
// Command-line flags, spec files, plans, results and reports iterate over
// Table, so a new level of a factor is added here (and where it is
// implemented), never in the layers that only pass it on.
//
// The network's numbers are package netconf's; here it is its name.
package factor

import (
	"fmt"
	"slices"
	"strings"
)

// Level is one value of an enumerated factor, with what it means.
type Level[T ~string] struct {
	Name T
	// Meaning is one sentence for help texts.
	Meaning string
}

// Enum is an enumerated factor: a name for messages and its levels, in
// the order help texts and tables show them.
type Enum[T ~string] struct {
	// What names the factor in messages, such as "visit".
	What   string
	Levels []Level[T]
}

// Parse returns the level called s, or an error that names the factor and
// lists its levels, such as `visit "second" is unknown: use first or
// repeat`.
func (e Enum[T]) Parse(s string) (T, error) {
	for _, l := range e.Levels {
		if string(l.Name) == s {
			return l.Name, nil
		}
	}
	return "", fmt.Errorf("%s %q is unknown: use %s", e.What, s, e.Names())
}

// Meaning is what level v means, "" if v is no level.
func (e Enum[T]) Meaning(v T) string {
	for _, l := range e.Levels {
		if l.Name == v {
			return l.Meaning
		}
	}
	return ""
}

// Has reports whether v is a level of e.
func (e Enum[T]) Has(v T) bool {
	return slices.ContainsFunc(e.Levels, func(l Level[T]) bool { return l.Name == v })
}

// Values lists the levels, in order.
func (e Enum[T]) Values() []T {
	out := make([]T, len(e.Levels))
	for i, l := range e.Levels {
		out[i] = l.Name
	}
	return out
}

// Names lists the levels for messages: "a", "a or b", "a, b or c".
func (e Enum[T]) Names() string {
	names := make([]string, len(e.Levels))
	for i, l := range e.Levels {
		names[i] = string(l.Name)
	}
	return orList(names)
}

// Usage describes every level for a flag's help text, such as "first (a
// new browser profile) or repeat (…)".
func (e Enum[T]) Usage() string {
	parts := make([]string, len(e.Levels))
	for i, l := range e.Levels {
		parts[i] = fmt.Sprintf("%s (%s)", l.Name, l.Meaning)
	}
	return orList(parts)
}

// orList joins items as "a", "a or b", "a, b or c".
func orList(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// Declared is a level with what else its factor declares about it (a
// client's capabilities, a QUIC server's controllers).
type Declared[T ~string, X any] struct {
	Level[T]
	Traits X
}

// enumOf is the factor of the declared levels ds.
func enumOf[T ~string, X any](what string, ds []Declared[T, X]) Enum[T] {
	e := Enum[T]{What: what}
	for _, d := range ds {
		e.Levels = append(e.Levels, d.Level)
	}
	return e
}

// traitsOf is the traits ds declare for level v; the zero value for a
// level ds does not declare.
func traitsOf[T ~string, X any](ds []Declared[T, X], v T) X {
	for _, d := range ds {
		if d.Name == v {
			return d.Traits
		}
	}
	var none X
	return none
}

// namesThat lists the names of the levels of ds that ok accepts, such as
// "a or b".
func namesThat[T ~string, X any](ds []Declared[T, X], ok func(Declared[T, X]) bool) string {
	var names []string
	for _, d := range ds {
		if ok(d) {
			names = append(names, string(d.Name))
		}
	}
	return orList(names)
}

// ParseList parses a comma-separated list of levels such as "h1,h2",
// rejecting unknown levels, duplicates and an empty list.
func ParseList[T ~string](e Enum[T], s string) ([]T, error) {
	var out []T
	for _, f := range strings.Split(s, ",") {
		v, err := e.Parse(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		if slices.Contains(out, v) {
			return nil, fmt.Errorf("%s %s is listed twice", e.What, v)
		}
		out = append(out, v)
	}
	return out, nil
}
