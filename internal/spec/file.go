package spec

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/netconf"
)

// file is the YAML's shape.
type file struct {
	Name        string          `yaml:"name"`
	Description string          `yaml:"description"`
	Seed        *seedNode       `yaml:"seed"`
	Repetitions repetitionsNode `yaml:"repetitions"`
	Retries     *int            `yaml:"retries"`
	// Client is one client, as specs gave it before clients were a
	// factor (factors: {clients: [...]}).
	Client   string `yaml:"client"`
	Browser  string `yaml:"browser"`
	Timeout  string `yaml:"timeout"`
	Netcheck *bool  `yaml:"netcheck"`
	// Deterministic makes time and randomness in pages' scripts the same
	// on every load (see client.DeterministicJS); unset: for recorded
	// pages only.
	Deterministic *bool `yaml:"deterministic"`
	// Viewport is the viewport of every load, WIDTHxHEIGHT[@SCALE][,mobile]
	// or desktop; unset: each page's (a recording's own, else desktop).
	Viewport string `yaml:"viewport"`
	// Replay is the tolerance of a recorded page's replay.
	Replay replayNode `yaml:"replay"`
	// Pairing starts the loads of a repetition from the same link state.
	Pairing   *bool     `yaml:"pairing"`
	Artifacts Artifacts `yaml:"artifacts"`
	// Live are the rules of live pages (url:…).
	Live    liveNode `yaml:"live"`
	Factors factors  `yaml:"factors"`
}

// factors is the factors: mapping, each key a factor's spec key (see
// factor.Table), plus networks and corpus.
type factors struct {
	networks []networkNode
	pages    levelList
	corpus   *corpusNode
	// levels are the other factors' levels by factor; a factor the spec
	// leaves out is absent.
	levels map[factor.ID]levelList
}

// UnmarshalYAML reads the factors mapping: each key a declared factor,
// its value a list of levels, with the line of each kept for errors.
func (f *factors) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: factors is a mapping, such as {networks: [...], pages: [...]}", n.Line)
	}
	f.levels = map[factor.ID]levelList{}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if line, dup := seen[k.Value]; dup {
			return fmt.Errorf("line %d: mapping key %.40q already defined at line %d", k.Line, k.Value, line)
		}
		seen[k.Value] = k.Line
		if err := f.set(k, v); err != nil {
			return err
		}
	}
	return nil
}

// set reads one key of factors.
func (f *factors) set(k, v *yaml.Node) error {
	switch k.Value {
	case "networks":
		return v.Decode(&f.networks)
	case "pages":
		return v.Decode(&f.pages)
	case "corpus":
		if err := onlyKeys(v, "kind", "pages", "seed"); err != nil {
			return err
		}
		return v.Decode(&f.corpus)
	}
	fc, ok := factor.BySpecKey(k.Value)
	if !ok || fc.Scope == factor.ScopeRun {
		return fmt.Errorf("line %d: unknown key %.40q", k.Line, k.Value)
	}
	var l levelList
	if err := v.Decode(&l); err != nil {
		return err
	}
	if l != nil {
		f.levels[fc.ID] = l
	}
	return nil
}

// replayNode is "replay: {max_unmatched: 5%}".
type replayNode struct {
	MaxUnmatched string `yaml:"max_unmatched"`
}

// corpusNode asks for the first pages of a generated corpus as page
// levels: {kind: web2024, pages: 100, seed: 1}.
type corpusNode struct {
	Kind  string    `yaml:"kind"`
	Pages int       `yaml:"pages"`
	Seed  *seedNode `yaml:"seed"`
}

// seedNode is a seed: a whole number from 0 to math.MaxInt64 (the
// results database stores it as an SQLite INTEGER).
type seedNode uint64

// UnmarshalYAML reads a seed, refusing what is not a whole number from 0
// to math.MaxInt64.
func (s *seedNode) UnmarshalYAML(n *yaml.Node) error {
	v, err := strconv.ParseUint(n.Value, 10, 64)
	if n.Kind != yaml.ScalarNode || err != nil || v > math.MaxInt64 {
		return fmt.Errorf("line %d: seed %.40q is not a whole number from 0 to %d", n.Line, n.Value, int64(math.MaxInt64))
	}
	*s = seedNode(v)
	return nil
}

// levelList is a factor's levels: a list, or one level on its own
// (`visual: on` is `visual: [on]`). A key without a value is no list, so
// the factor's default applies.
type levelList []scalar

// repetitionsNode is "repetitions: N" or "repetitions: {min: A, max: B,
// until: {ci_ratio: C}}".
type repetitionsNode struct {
	Max   int
	Until *untilNode
	// Given says the spec has the key.
	Given bool
}

// untilNode is the adaptive form's mapping.
type untilNode struct {
	Min   int `yaml:"min"`
	Max   int `yaml:"max"`
	Until struct {
		CIRatio float64 `yaml:"ci_ratio"`
	} `yaml:"until"`
}

// UnmarshalYAML reads repetitions: a count, or a mapping of the most
// repetitions and the rule that stops before them (until).
func (r *repetitionsNode) UnmarshalYAML(n *yaml.Node) error {
	r.Given = true
	if n.Kind == yaml.ScalarNode {
		return n.Decode(&r.Max)
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: repetitions is a number, or a mapping such as {min: 10, max: 100, until: {ci_ratio: 0.03}}", n.Line)
	}
	if err := onlyKeys(n, "min", "max", "until"); err != nil {
		return err
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "until" {
			if err := onlyKeys(n.Content[i+1], "ci_ratio"); err != nil {
				return err
			}
		}
	}
	var u untilNode
	if err := n.Decode(&u); err != nil {
		return err
	}
	r.Max, r.Until = u.Max, &u
	return nil
}

// UnmarshalYAML reads a factor's levels: a list, or one level alone.
func (l *levelList) UnmarshalYAML(n *yaml.Node) error {
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag == "!!null":
		*l = nil
		return nil
	case n.Kind == yaml.ScalarNode:
		*l = levelList{{text: n.Value, line: n.Line}}
		return nil
	}
	var items []scalar
	if err := n.Decode(&items); err != nil {
		return err
	}
	*l = append(levelList{}, items...)
	return nil
}

// scalar is a factor level with its line.
type scalar struct {
	text string
	line int
}

// UnmarshalYAML reads a scalar's text and keeps its line for errors.
func (s *scalar) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: a level must be a single value, not a list or a mapping", n.Line)
	}
	s.text, s.line = n.Value, n.Line
	return nil
}

// networkNode is a network level: a mapping of netconf keys plus name,
// preset, drop-head and path.
type networkNode struct {
	line     int
	name     string
	preset   string
	values   map[string]string
	dropHead bool
	paths    []string
}

// UnmarshalYAML reads a network: a preset's name, or a mapping of link
// values (and paths).
func (nw *networkNode) UnmarshalYAML(n *yaml.Node) error {
	nw.line = n.Line
	if n.Kind == yaml.ScalarNode { // a bare preset name
		nw.preset = n.Value
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: a network is a preset name or a mapping such as {rtt: 100ms, loss: 1}", n.Line)
	}
	nw.values = map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if err := nw.set(n.Content[i], n.Content[i+1]); err != nil {
			return err
		}
	}
	return nil
}

// set reads one key of a network mapping.
func (nw *networkNode) set(k, v *yaml.Node) error {
	switch key := k.Value; {
	case key == "name":
		nw.name = v.Value
	case key == "preset":
		nw.preset = v.Value
	case key == "drop-head":
		b, err := strconv.ParseBool(v.Value)
		if err != nil {
			return fmt.Errorf("line %d: drop-head %q: use true or false", v.Line, v.Value)
		}
		nw.dropHead = b
	case key == "path":
		if v.Kind == yaml.SequenceNode {
			for _, p := range v.Content {
				nw.paths = append(nw.paths, p.Value)
			}
		} else {
			nw.paths = append(nw.paths, v.Value)
		}
	case slices.Contains(netconf.Keys, key):
		if v.Kind != yaml.ScalarNode {
			return fmt.Errorf("line %d: %s must be a single value", v.Line, key)
		}
		nw.values[key] = v.Value
	default:
		return fmt.Errorf("line %d: unknown network key %q: use name, preset, %s, drop-head or path", k.Line, key, strings.Join(netconf.Keys, ", "))
	}
	return nil
}

// networkDefaults are the values of a network's missing keys (without a
// preset): no delay, no loss, unlimited rates and queue.
var networkDefaults = map[string]string{"rtt": "0s", "jitter": "0s", "loss": "0", "down": "0", "up": "0", "queue": "0"}

// Format writes s as a spec file that Parse reads back into the same
// spec: every key explicit, networks as their descriptions.
func Format(s *Spec) ([]byte, error) {
	root := mapping()
	add(root, "name", str(s.Name))
	if s.Description != "" {
		add(root, "description", str(s.Description))
	}
	add(root, "seed", str(strconv.FormatUint(s.Seed, 10)))
	add(root, "repetitions", repetitionsYAML(s))
	add(root, "retries", str(strconv.Itoa(s.Retries)))
	add(root, "browser", str(string(s.Browser())))
	add(root, "timeout", str(s.Timeout.String()))
	add(root, "netcheck", str(strconv.FormatBool(s.Netcheck)))
	if s.Deterministic != nil {
		add(root, "deterministic", str(strconv.FormatBool(*s.Deterministic)))
	}
	if s.Viewport != nil {
		add(root, "viewport", str(ViewportText(*s.Viewport)))
	}
	if s.MaxUnmatched != DefaultMaxUnmatched {
		replay := flowMapping()
		add(replay, "max_unmatched", str(strconv.FormatFloat(100*s.MaxUnmatched, 'g', -1, 64)+"%"))
		add(root, "replay", replay)
	}
	if !s.Pairing {
		add(root, "pairing", str("false"))
	}
	if l := liveYAML(s.Live); l != nil {
		add(root, "live", l)
	}
	art := flowMapping()
	add(art, "pcap", str(strconv.FormatBool(s.Artifacts.Pcap)))
	add(art, "qlog", str(strconv.FormatBool(s.Artifacts.Qlog)))
	add(art, "har", str(strconv.FormatBool(s.Artifacts.HAR)))
	add(art, "netlog", str(strconv.FormatBool(s.Artifacts.NetLog)))
	add(root, "artifacts", art)
	add(root, "factors", factorsYAML(s))
	out, err := yaml.Marshal(root)
	if err != nil {
		return nil, fmt.Errorf("spec: format: %w", err)
	}
	return out, nil
}

// repetitionsYAML is s's repetitions: a count, or with a stopping rule
// the least, the most and the rule.
func repetitionsYAML(s *Spec) *yaml.Node {
	u := s.Until
	if u == nil {
		return str(strconv.Itoa(s.Repetitions))
	}
	reps := flowMapping()
	add(reps, "min", str(strconv.Itoa(u.Min)))
	add(reps, "max", str(strconv.Itoa(s.Repetitions)))
	until := flowMapping()
	add(until, "ci_ratio", str(strconv.FormatFloat(u.CIRatio, 'g', -1, 64)))
	add(reps, "until", until)
	return reps
}

// factorsYAML is s's factors: the networks as their descriptions, then
// every declared factor of a trial's scope but an implicit one left at
// its default.
func factorsYAML(s *Spec) *yaml.Node {
	f := mapping()
	nets := &yaml.Node{Kind: yaml.SequenceNode}
	for _, n := range s.Networks {
		nets.Content = append(nets.Content, networkYAML(n))
	}
	add(f, "networks", nets)
	for _, fc := range factor.Table() {
		levels := s.LevelsOf(fc.ID)
		if fc.Scope == factor.ScopeRun || fc.ID == factor.IDNetwork || fc.Implicit && slices.Equal(levels, []string{fc.Default}) {
			continue
		}
		add(f, fc.SpecKey, list(levels))
	}
	return f
}

// networkYAML is a network's description as a flow mapping.
func networkYAML(n *netconf.Network) *yaml.Node {
	d := n.Description
	m := flowMapping()
	add(m, "name", str(n.Name))
	if d.Preset != "" {
		add(m, "preset", str(d.Preset))
	}
	for _, key := range netconf.Keys {
		if v, ok := d.Values[key]; ok && v != "" {
			add(m, key, str(v))
		}
	}
	if d.DropHead {
		add(m, "drop-head", str("true"))
	}
	if len(d.Paths) > 0 {
		add(m, "path", list(d.Paths))
	}
	return m
}

func mapping() *yaml.Node     { return &yaml.Node{Kind: yaml.MappingNode} }
func flowMapping() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle} }

// str is a scalar that YAML reads back as the same text.
func str(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }

func add(m *yaml.Node, key string, v *yaml.Node) { m.Content = append(m.Content, str(key), v) }

// list is a flow sequence of the levels' texts.
func list[T any](levels []T) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, l := range levels {
		n.Content = append(n.Content, str(fmt.Sprint(l)))
	}
	return n
}

// relativeTo makes the network's relative trace paths relative to dir
// ("" leaves them relative to the working directory). An unnamed network
// keeps the name its paths as written give it, so that its trial IDs do
// not depend on where the spec file is.
func (n *networkNode) relativeTo(dir string) {
	if dir == "" {
		return
	}
	for _, key := range []string{"down-trace", "up-trace"} {
		v := n.values[key]
		if v == "" || filepath.IsAbs(v) {
			continue
		}
		if n.name == "" {
			n.name = netconf.Description{Preset: n.preset, Values: n.values, DropHead: n.dropHead, Paths: n.paths}.DefaultName()
		}
		n.values[key] = filepath.Join(dir, v)
	}
}

// onlyKeys rejects a mapping with a key not in keys (a scalar or list is
// left to its decoder).
func onlyKeys(n *yaml.Node, keys ...string) error {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i < len(n.Content); i += 2 {
		if k := n.Content[i]; !slices.Contains(keys, k.Value) {
			return fmt.Errorf("line %d: unknown key %.40q (use %s)", k.Line, k.Value, strings.Join(keys, ", "))
		}
	}
	return nil
}
