package factor

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ID names a factor: its place in Table, which is also the order of keys,
// result columns, grids and tables.
type ID int

// The factors, in Table's order.
const (
	IDNetwork ID = iota
	IDPage
	IDOrigins
	IDStack
	IDServer
	IDQUIC
	IDProtocol
	IDDiscovery
	IDDNS
	IDVisit
	IDCache
	IDClient
	IDClientCPU
	IDBrowser
	IDVisual
	numFactors
)

// Scope says where a factor's level takes effect.
type Scope int

// The scopes.
const (
	// ScopeRun is one level for a whole run, set by a key at the top of a
	// spec file (browser); it is in no key.
	ScopeRun Scope = iota
	// ScopeSetup levels need a testbed of their own: cells with equal
	// setup levels share its namespaces, emulator and servers.
	ScopeSetup
	// ScopeCell levels change from load to load on one testbed.
	ScopeCell
)

// Storage is how a level is stored in the results: its column's type.
type Storage int

// The storages.
const (
	StoreText  Storage = iota // TEXT: the level
	StoreCount                // INTEGER: a whole number (origins)
	StoreFlag                 // BOOLEAN: "on" is true, "off" false
	StoreCores                // REAL: cores; NULL is "unlimited" (client CPU)
)

// Factor is one factor, declared once: spec files, plans, results,
// reports and the command line iterate over Table rather than naming the
// factors again.
type Factor struct {
	ID ID
	// Column names the factor in the results (the trials' column of its
	// level), in setup and cell keys ("stack=tcp+"), and in tables.
	Column string
	// SpecKey is its key in a spec file: under factors: for setup and
	// cell factors ("stacks"), at the top for run factors ("client").
	SpecKey string
	Scope   Scope
	// What names one level's factor in messages ("TCP stack"); Plural
	// counts levels ("3 TCP stacks").
	What, Plural string
	// Default is the level of a spec that leaves the factor out; "" for
	// the factors a spec must give (networks, pages), and for those of
	// which it then gets every level (AllByDefault: the protocols).
	Default      string
	AllByDefault bool
	// Implicit leaves the default out of setup and cell keys, and so out
	// of trial IDs: the factor came after runs had been made, whose trial
	// IDs stay what they were.
	Implicit bool
	// Served says the factor chooses what the testbed's servers do (their
	// stacks, origins, cache): a live page, served by the site's own
	// servers, has only its default.
	Served bool
	Store  Storage
	// Enum lists an enumerated factor's levels with their meanings, in
	// the order help texts show them; nil for network, page and origins.
	Enum *Enum[string]
	// parse checks a level and returns its canonical text; nil for the
	// network, whose levels package netconf resolves.
	parse func(string) (string, error)
	// words is a level as a label reads ("repeat visit", "4 origins");
	// nil: the level itself.
	words func(level string) string
	// keyText is the level as a key writes it where that differs: the
	// cache's "true" and "false", from before it was a factor of levels.
	keyText func(level string) string
}

// Table is every factor, in ID order.
func Table() []Factor { return slices.Clone(table()) }

// table is the declaration, made once: it is immutable, and keys are
// built from it for every trial of a plan.
var table = sync.OnceValue(declare)

// declare is the table's one declaration.
func declare() []Factor {
	suffix := func(s string) func(string) string { return func(l string) string { return l + " " + s } }
	prefix := func(p string) func(string) string { return func(l string) string { return p + " " + l } }
	return []Factor{
		{ID: IDNetwork, Column: "network", SpecKey: "networks", Scope: ScopeSetup, What: "network", Plural: "networks"},
		{ID: IDPage, Column: "page", SpecKey: "pages", Scope: ScopeSetup, What: "page", Plural: "pages",
			parse: func(s string) (string, error) { p, err := ParsePage(s); return p.String(), err }},
		{ID: IDOrigins, Column: "origins", SpecKey: "origins", Scope: ScopeSetup, What: "origins", Plural: "origins", Default: "1", Store: StoreCount, Served: true,
			parse: func(s string) (string, error) { n, err := ParseOrigins(s); return strconv.Itoa(n), err }, words: originWords},
		served(enumFactor(IDStack, "stack", "stacks", ScopeSetup, "TCP stacks", Stacks(), StackTCP, nil)),
		served(enumFactor(IDServer, "server", "servers", ScopeSetup, "server stacks", Servers(), ServerGo, suffix("server"))),
		served(implicit(enumFactor(IDQUIC, "quic", "quic", ScopeSetup, "QUIC stacks", QUICs(), QUICGoNewReno, nil))),
		all(enumFactor(IDProtocol, "protocol", "protocols", ScopeCell, "protocols", Protocols(), "", nil)),
		served(implicit(enumFactor(IDDiscovery, "discovery", "discovery", ScopeCell, "discovery rules", Discoveries(), DiscoveryForced, nil))),
		served(implicit(enumFactor(IDDNS, "dns", "dns", ScopeCell, "DNS levels", DNSLevels(), DNSPinned, prefix("dns")))),
		enumFactor(IDVisit, "visit", "visits", ScopeCell, "visits", Visits(), FirstVisit, suffix("visit")),
		served(flagKey(flag(enumFactor(IDCache, "cache", "cache", ScopeCell, "cache levels", Caches(), CacheOff, prefix("cache"))))),
		implicit(enumFactor(IDClient, "client", "clients", ScopeCell, "clients", Clients(), ClientChromium, nil)),
		{ID: IDClientCPU, Column: "client_cpu", SpecKey: "client_cpu", Scope: ScopeCell, What: "client CPU", Plural: "client CPU levels",
			Default: string(ClientCPUUnlimited), Implicit: true, Store: StoreCores,
			parse: func(s string) (string, error) { c, err := ParseClientCPU(s); return string(c), err }, words: clientCPUWords},
		enumFactor(IDBrowser, "browser", "browser", ScopeRun, "browser modes", Browsers(), BrowserFresh, suffix("browser")),
		implicit(flag(enumFactor(IDVisual, "visual", "visual", ScopeCell, "visual levels", Visuals(), VisualOff, prefix("visual")))),
	}
}

// enumFactor declares an enumerated factor from its Enum.
func enumFactor[T ~string](id ID, column, key string, scope Scope, plural string, e Enum[T], def T, words func(string) string) Factor {
	levels := make([]Level[string], len(e.Levels))
	for i, l := range e.Levels {
		levels[i] = Level[string]{string(l.Name), l.Meaning}
	}
	f := Factor{ID: id, Column: column, SpecKey: key, Scope: scope, What: e.What, Plural: plural, Default: string(def),
		Enum: &Enum[string]{What: e.What, Levels: levels}, words: words}
	f.parse = func(s string) (string, error) { v, err := e.Parse(s); return string(v), err }
	return f
}

func implicit(f Factor) Factor { f.Implicit = true; return f }

// served marks a factor of the testbed's servers (Factor.Served).
func served(f Factor) Factor { f.Served = true; return f }

// all gives a spec that leaves the factor out every level.
func all(f Factor) Factor { f.AllByDefault = true; return f }

// flag stores the levels off and on as a BOOLEAN.
func flag(f Factor) Factor { f.Store = StoreFlag; return f }

// flagKey writes a flag's level in keys as "true" or "false".
func flagKey(f Factor) Factor {
	f.keyText = func(l string) string { return strconv.FormatBool(l == "on") }
	return f
}

// originWords is "1 origin" or "N origins".
func originWords(l string) string {
	if l == "1" {
		return "1 origin"
	}
	return l + " origins"
}

// Of returns the factor id.
func Of(id ID) Factor { return table()[id] }

// BySpecKey returns the factor whose spec key is key, if any.
func BySpecKey(key string) (Factor, bool) {
	for _, f := range table() {
		if f.SpecKey == key {
			return f, true
		}
	}
	return Factor{}, false
}

// Parse checks a level of f and returns its canonical text, or an error
// that names the factor and says what is allowed.
func (f Factor) Parse(s string) (string, error) {
	if f.parse == nil {
		return "", fmt.Errorf("%s %q cannot be parsed on its own: give it as a spec's network", f.What, s)
	}
	return f.parse(s)
}

// Words is level as a label reads it, such as "repeat visit" or "4
// origins".
func (f Factor) Words(level string) string {
	if f.words == nil {
		return level
	}
	return f.words(level)
}

// Compare orders two levels of f: counts by number, pages by kind, object
// count and size (ComparePages), the rest as text.
func (f Factor) Compare(a, b string) int {
	switch {
	case f.Store == StoreCount:
		x, errX := strconv.Atoi(a)
		y, errY := strconv.Atoi(b)
		if errX == nil && errY == nil {
			return cmp.Compare(x, y)
		}
	case f.ID == IDPage:
		return ComparePages(a, b)
	case f.Store == StoreCores:
		return cmp.Compare(coresOrMost(a), coresOrMost(b))
	}
	return strings.Compare(a, b)
}

// coresOrMost is a client CPU level's cores, unlimited the most.
func coresOrMost(level string) float64 {
	if c := ClientCPU(level).Cores(); c > 0 {
		return c
	}
	return math.Inf(1)
}

// Levels holds one level of every factor as its canonical text, by ID;
// "" where a factor has none (the protocol of a Setting, the cell factors
// of a setup).
type Levels [numFactors]string

// Of is the level of factor id.
func (l Levels) Of(id ID) string { return l[id] }

// Set sets the level of factor id.
func (l *Levels) Set(id ID, level string) { l[id] = level }

// Key is the text a setup's (upTo ScopeSetup) or a cell's (ScopeCell) ID
// is made from: "column=level" of each factor of those scopes in table
// order, joined by ";", leaving out an implicit factor at its default (or
// without a level).
func (l Levels) Key(upTo Scope) string {
	var parts []string
	for _, f := range table() {
		level := l[f.ID]
		if f.Scope == ScopeRun || f.Scope > upTo || f.Implicit && (level == f.Default || level == "") {
			continue
		}
		if f.keyText != nil {
			level = f.keyText(level)
		}
		parts = append(parts, f.Column+"="+level)
	}
	return strings.Join(parts, ";")
}

// Setting is l without its protocol: what a comparison of protocols holds
// fixed.
func (l Levels) Setting() Setting {
	l[IDProtocol] = ""
	return Setting{l}
}

// Typed levels, for the code that acts on one factor.

// Network is the network's name.
func (l Levels) Network() string { return l[IDNetwork] }

// Page is the page as ParsePage reads it.
func (l Levels) Page() string { return l[IDPage] }

// Origins is the number of origins (0 if unset).
func (l Levels) Origins() int { n, _ := strconv.Atoi(l[IDOrigins]); return n }

// Stack is the servers' TCP stack.
func (l Levels) Stack() Stack { return Stack(l[IDStack]) }

// Server is the server stack of h1 and h2.
func (l Levels) Server() Server { return Server(l[IDServer]) }

// QUIC is the stack that serves h3.
func (l Levels) QUIC() QUIC { return QUIC(l[IDQUIC]) }

// Protocol is the protocol loaded.
func (l Levels) Protocol() Protocol { return Protocol(l[IDProtocol]) }

// Discovery is how the browser learns of h3.
func (l Levels) Discovery() Discovery { return Discovery(l[IDDiscovery]) }

// DNS is how the browser finds the hosts' addresses.
func (l Levels) DNS() DNS { return DNS(l[IDDNS]) }

// Visit is the kind of visit measured.
func (l Levels) Visit() Visit { return Visit(l[IDVisit]) }

// Cache is whether responses may be cached.
func (l Levels) Cache() Cache { return Cache(l[IDCache]) }

// Client is what loads the page.
func (l Levels) Client() Client { return Client(l[IDClient]) }

// ClientCPU is the CPU the client may use.
func (l Levels) ClientCPU() ClientCPU { return ClientCPU(l[IDClientCPU]) }

// Browser is the browser mode.
func (l Levels) Browser() Browser { return Browser(l[IDBrowser]) }

// Visual is whether frames are captured.
func (l Levels) Visual() Visual { return Visual(l[IDVisual]) }

// Setting is the level of every factor but the protocol: what a comparison
// holds fixed. It is comparable, so it keys maps.
type Setting struct{ Levels }

// MarshalJSON writes a setting as an object of its factors' columns and
// levels, leaving out those without a level (the protocol).
func (s Setting) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for _, f := range table() {
		level := s.Levels[f.ID]
		if level == "" {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(f.Column)
		value, _ := json.Marshal(level)
		b.Write(name)
		b.WriteByte(':')
		b.Write(value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// ComparedProtocols are the protocols a comparison of ps compares when
// none is chosen: h3 against h2 where both are loaded, else h3 against h1,
// else h2 against h1.
func ComparedProtocols(ps []Protocol) (baseline, compare Protocol) {
	has := func(p Protocol) bool { return slices.Contains(ps, p) }
	switch {
	case has(H2) && has(H3):
		return H2, H3
	case has(H1) && has(H3):
		return H1, H3
	}
	return H1, H2
}
