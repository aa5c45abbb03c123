package analysis

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

// SettingOf is trial t's setting.
func SettingOf(t results.Trial) Setting { return t.Levels.Factors().Setting() }

// Dimension is one factor of a setting besides the network and the page,
// for tables (its column) and figures (its label).
type Dimension struct {
	factor.Factor
}

// Name is the dimension's column.
func (d Dimension) Name() string { return d.Column }

// Value is s's level, as a table shows it.
func (d Dimension) Value(s Setting) string { return s.Of(d.ID) }

// Label is s's level as a figure's words show it, such as "4 origins".
func (d Dimension) Label(s Setting) string { return d.Words(s.Of(d.ID)) }

// Dimensions are the factors a table or label shows when they vary: all
// but the network, the page and the protocol, in table order.
func Dimensions() []Dimension {
	var out []Dimension
	for _, f := range factor.Table() {
		if f.ID != factor.IDNetwork && f.ID != factor.IDPage && f.ID != factor.IDProtocol {
			out = append(out, Dimension{f})
		}
	}
	return out
}

// Varied is the dimensions that take more than one value among some
// settings, so that tables and figures name every factor that varies.
type Varied []Dimension

// VariedOf is the dimensions whose level differs among settings.
func VariedOf(settings []Setting) Varied {
	var v Varied
	for _, d := range Dimensions() {
		for _, s := range settings {
			if d.Value(s) != d.Value(settings[0]) {
				v = append(v, d)
				break
			}
		}
	}
	return v
}

// VariedIn is VariedOf the comparisons' settings.
func VariedIn(cmps []Comparison) Varied {
	settings := make([]Setting, len(cmps))
	for i, c := range cmps {
		settings[i] = c.Setting
	}
	return VariedOf(settings)
}

// Without drops the dimension of factor id.
func (v Varied) Without(id factor.ID) Varied {
	var out Varied
	for _, d := range v {
		if d.ID != id {
			out = append(out, d)
		}
	}
	return out
}

// Names are the dimensions' column names.
func (v Varied) Names() []string {
	out := make([]string, len(v))
	for i, d := range v {
		out[i] = d.Name()
	}
	return out
}

// Values are s's cells in the dimensions' columns.
func (v Varied) Values(s Setting) []string {
	out := make([]string, len(v))
	for i, d := range v {
		out[i] = d.Value(s)
	}
	return out
}

// Label names s by its network and the varying dimensions, such as
// "wolsing2019-lte tcp+" or "delay0-loss10 repeat visit 4 origins".
func (v Varied) Label(s Setting) string {
	parts := []string{s.Network()}
	for _, d := range v {
		parts = append(parts, d.Label(s))
	}
	return strings.Join(parts, " ")
}

// SortSettings orders settings factor by factor in table order, each by
// its own order (pages by kind, object count and size; counts by number),
// so tables read naturally.
func SortSettings(ss []Setting) { slices.SortStableFunc(ss, CompareSettings) }

// CompareSettings orders two settings as sortSettings does.
func CompareSettings(a, b Setting) int {
	for _, f := range factor.Table() {
		if c := f.Compare(a.Of(f.ID), b.Of(f.ID)); c != 0 {
			return c
		}
	}
	return 0
}

// LegacyText is s as fmt's %+v printed the struct a setting was before
// the factor table, whose printed form seeds each sample's resampling:
// printing a setting as that struct was keeps the intervals of reports
// made since. It leaves out the implicit factors at their defaults
// (visual off, quic-go), as the seeds of runs without them were made (but
// the client, implicit only since it became a cell factor, and printed
// before), and names a factor added later by its column.
func LegacyText(s Setting) string {
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
