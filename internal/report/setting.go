package report

import (
	"sort"
	"strconv"
	"strings"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
)

// Setting is everything of a cell but the protocol: what a comparison
// holds fixed.
type Setting struct {
	Network string
	Page    string
	Origins int
	Stack   factor.Stack
	Server  factor.Server
	// QUIC is the stack that served h3 ("quic-go" for a run made before
	// it was recorded).
	QUIC    factor.QUIC
	Visit   factor.Visit
	Cache   bool
	Client  factor.Client
	Browser factor.Browser
	// Visual: the loads captured frames (which costs CPU): their timings
	// are never pooled with those of loads that did not.
	Visual bool
}

func settingOf(t results.Trial) Setting {
	return Setting{Network: t.Network, Page: t.Page, Origins: int(t.Origins), Stack: t.Stack, Server: t.Server, QUIC: quicOf(t),
		Visit: t.Visit, Cache: t.Cache, Client: t.Client, Browser: t.Browser, Visual: t.Visual}
}

// quicOf is the QUIC stack of t's testbed.
func quicOf(t results.Trial) factor.QUIC {
	if t.QUICServer == "" {
		return factor.QUICGoNewReno // recorded before quic_server existed
	}
	q, err := factor.QUICOf(t.QUICServer, t.QUICCC)
	if err != nil {
		return factor.QUIC(string(t.QUICServer) + "+" + string(t.QUICCC)) // a level this build does not have
	}
	return q
}

// dimension is one factor of a setting besides the network and the page,
// for tables (its column) and figures (its label).
type dimension struct {
	name  string
	value func(Setting) string // the table's cell
	label func(Setting) string // the figure's words, such as "4 origins"
}

// dimensions are the factors a table or label shows when they vary.
func dimensions() []dimension {
	origins := func(s Setting) string { return strconv.Itoa(s.Origins) }
	cache := func(s Setting) string { return onOff(s.Cache) }
	return []dimension{
		{"origins", origins, func(s Setting) string {
			if s.Origins == 1 {
				return "1 origin"
			}
			return origins(s) + " origins"
		}},
		{"stack", func(s Setting) string { return string(s.Stack) }, func(s Setting) string { return string(s.Stack) }},
		{"server", func(s Setting) string { return string(s.Server) }, func(s Setting) string { return string(s.Server) + " server" }},
		{"quic", func(s Setting) string { return string(s.QUIC) }, func(s Setting) string { return string(s.QUIC) }},
		{"visit", func(s Setting) string { return string(s.Visit) }, func(s Setting) string { return string(s.Visit) + " visit" }},
		{"cache", cache, func(s Setting) string { return "cache " + cache(s) }},
		{"client", func(s Setting) string { return string(s.Client) }, func(s Setting) string { return string(s.Client) }},
		{"browser", func(s Setting) string { return string(s.Browser) }, func(s Setting) string { return string(s.Browser) + " browser" }},
		{"visual", func(s Setting) string { return onOff(s.Visual) }, func(s Setting) string { return "visual " + onOff(s.Visual) }},
	}
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

// without drops the dimension called name.
func (v varied) without(name string) varied {
	var out varied
	for _, d := range v {
		if d.name != name {
			out = append(out, d)
		}
	}
	return out
}

// names are the dimensions' column names.
func (v varied) names() []string {
	out := make([]string, len(v))
	for i, d := range v {
		out[i] = d.name
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
// "seed003-lte tcp+" or "delay0-loss10 repeat visit 4 origins".
func (v varied) label(s Setting) string {
	parts := []string{s.Network}
	for _, d := range v {
		parts = append(parts, d.label(s))
	}
	return strings.Join(parts, " ")
}

// sortSettings orders settings by network, page (by object count and
// size), then the rest, so tables read naturally.
func sortSettings(ss []Setting) {
	sort.SliceStable(ss, func(i, j int) bool { return settingLess(ss[i], ss[j]) })
}

func settingLess(a, b Setting) bool {
	switch {
	case a.Network != b.Network:
		return a.Network < b.Network
	case a.Page != b.Page:
		return pageLess(a.Page, b.Page)
	case a.Origins != b.Origins:
		return a.Origins < b.Origins
	case a.Stack != b.Stack:
		return a.Stack < b.Stack
	case a.Server != b.Server:
		return a.Server < b.Server
	case a.QUIC != b.QUIC:
		return a.QUIC < b.QUIC
	case a.Visit != b.Visit:
		return a.Visit < b.Visit
	case a.Cache != b.Cache:
		return !a.Cache
	case a.Client != b.Client:
		return a.Client < b.Client
	case a.Browser != b.Browser:
		return a.Browser < b.Browser
	}
	return !a.Visual && b.Visual
}

// pageLess orders pages by kind, object count, then size in bytes.
func pageLess(a, b string) bool {
	pa, errA := factor.ParsePage(a)
	pb, errB := factor.ParsePage(b)
	if errA != nil || errB != nil {
		return a < b
	}
	switch {
	case pa.Kind != pb.Kind:
		return pageKindRank(pa.Kind) < pageKindRank(pb.Kind)
	case pa.Kind == factor.PageArchive:
		return pa.Archive < pb.Archive
	case pa.Generated() && pa.CorpusSeed != pb.CorpusSeed:
		return pa.CorpusSeed < pb.CorpusSeed
	case pa.Generated():
		return pa.Number < pb.Number
	}
	if pa.Objects != pb.Objects {
		return pa.Objects < pb.Objects
	}
	return pa.ObjectBytes < pb.ObjectBytes
}

// pageKindRank orders page kinds: synthetic, generated, then archives.
func pageKindRank(k factor.PageKind) int {
	return map[factor.PageKind]int{factor.PageSynthetic: 0, factor.PageWeb2024: 1, factor.PageArchive: 2}[k]
}
