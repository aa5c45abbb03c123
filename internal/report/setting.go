package report

import (
	"slices"
	"strconv"
	"strings"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
)

// Setting is everything of a cell but the protocol: what a comparison
// holds fixed (the stopping rule of a run keys its settings alike).
type Setting = factor.Setting

// settingOf is trial t's setting.
func settingOf(t results.Trial) Setting { return t.Levels.Factors().Setting() }

// dimension is one factor of a setting besides the network and the page,
// for tables (its column) and figures (its label).
type dimension struct {
	factor.Factor
}

// name is the dimension's column.
func (d dimension) name() string { return d.Column }

// value is s's level, as a table shows it.
func (d dimension) value(s Setting) string { return s.Of(d.ID) }

// label is s's level as a figure's words show it, such as "4 origins".
func (d dimension) label(s Setting) string { return d.Words(s.Of(d.ID)) }

// dimensions are the factors a table or label shows when they vary: all
// but the network, the page and the protocol, in table order.
func dimensions() []dimension {
	var out []dimension
	for _, f := range factor.Table() {
		if f.ID != factor.IDNetwork && f.ID != factor.IDPage && f.ID != factor.IDProtocol {
			out = append(out, dimension{f})
		}
	}
	return out
}

// varied is the dimensions that take more than one value among some
// settings, so that tables and figures name every factor that varies.
type varied []dimension

func variedOf(settings []Setting) varied {
	var v varied
	for _, d := range dimensions() {
		for _, s := range settings {
			if d.value(s) != d.value(settings[0]) {
				v = append(v, d)
				break
			}
		}
	}
	return v
}

// variedIn is variedOf the comparisons' settings.
func variedIn(cmps []Comparison) varied {
	settings := make([]Setting, len(cmps))
	for i, c := range cmps {
		settings[i] = c.Setting
	}
	return variedOf(settings)
}

// without drops the dimension of factor id.
func (v varied) without(id factor.ID) varied {
	var out varied
	for _, d := range v {
		if d.ID != id {
			out = append(out, d)
		}
	}
	return out
}

// names are the dimensions' column names.
func (v varied) names() []string {
	out := make([]string, len(v))
	for i, d := range v {
		out[i] = d.name()
	}
	return out
}

// values are s's cells in the dimensions' columns.
func (v varied) values(s Setting) []string {
	out := make([]string, len(v))
	for i, d := range v {
		out[i] = d.value(s)
	}
	return out
}

// label names s by its network and the varying dimensions, such as
// "wolsing2019-lte tcp+" or "delay0-loss10 repeat visit 4 origins".
func (v varied) label(s Setting) string {
	parts := []string{s.Network()}
	for _, d := range v {
		parts = append(parts, d.label(s))
	}
	return strings.Join(parts, " ")
}

// sortSettings orders settings factor by factor in table order, each by
// its own order (pages by kind, object count and size; counts by number),
// so tables read naturally.
func sortSettings(ss []Setting) { slices.SortStableFunc(ss, compareSettings) }

// compareSettings orders two settings as sortSettings does.
func compareSettings(a, b Setting) int {
	for _, f := range factor.Table() {
		if c := f.Compare(a.Of(f.ID), b.Of(f.ID)); c != 0 {
			return c
		}
	}
	return 0
}

// legacyText is s as fmt's %+v printed the struct a setting was before
// the factor table, whose printed form seeds each sample's resampling:
// printing a setting as that struct was keeps the intervals of reports
// made since. It leaves out the implicit factors at their defaults
// (visual off, quic-go), as the seeds of runs without them were made (but
// the client, implicit only since it became a cell factor, and printed
// before), and names a factor added later by its column.
func legacyText(s Setting) string {
	names := map[factor.ID]string{factor.IDNetwork: "Network", factor.IDPage: "Page", factor.IDOrigins: "Origins", factor.IDStack: "Stack",
		factor.IDServer: "Server", factor.IDQUIC: "QUIC", factor.IDVisit: "Visit", factor.IDCache: "Cache", factor.IDClient: "Client",
		factor.IDBrowser: "Browser", factor.IDVisual: "Visual"}
	var parts []string
	for _, f := range factor.Table() {
		level := s.Of(f.ID)
		if f.ID == factor.IDProtocol || f.Implicit && f.ID != factor.IDClient && (level == f.Default || level == "") {
			continue
		}
		if f.Store == factor.StoreFlag {
			level = strconv.FormatBool(level == "on")
		}
		name, ok := names[f.ID]
		if !ok {
			name = f.Column
		}
		parts = append(parts, name+":"+level)
	}
	return "{" + strings.Join(parts, " ") + "}"
}
