// Package spec reads experiment spec files: YAML that names the factors of a
// study (networks, pages, protocols, transport stacks, server stacks,
// visits, cache, origins), its repetitions, seed, client, timeouts and the
// artifacts to keep. Decoding is strict: an unknown key or a bad value is an
// error that names the file's line.
package spec

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/netconf"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/stacks"
	"github.com/quicbench/quicbench/internal/testbed"
)

// Clients.
const (
	ClientChromium = "chromium" // real headless Chromium
	ClientLoader   = "loader"   // the built-in Go page loader
)

// Browser modes of the Chromium client.
const (
	BrowserFresh = "fresh" // a new browser and profile per load
	BrowserWarm  = "warm"  // a browser per protocol, a new browser context per load
)

// Limits.
const (
	MaxRepetitions = 100_000
	MaxOrigins     = 64
	MaxRetries     = 10
)

// Spec is a decoded, validated spec file. Every list has at least one level.
type Spec struct {
	// Name names the study; default: the file name without extension.
	Name        string
	Description string
	// Seed seeds loss decisions, page bytes and the trial order.
	Seed uint64
	// Repetitions is how many times each cell is loaded.
	Repetitions int
	// Retries is how many more attempts a failed trial gets (default 2).
	Retries int
	// Client loads the pages: ClientChromium (default) or ClientLoader.
	Client string
	// Browser is Chromium's mode: BrowserFresh (default) or BrowserWarm.
	Browser string
	// Timeout bounds one load (default 60 s).
	Timeout time.Duration
	// Netcheck measures each network before its first trial (default on).
	Netcheck  bool
	Artifacts Artifacts
	Networks  []Network
	Pages     []site.SyntheticSpec
	Protocols []client.Protocol
	Stacks    []stacks.Profile
	Servers   []string
	Visits    []client.Visit
	Cache     []bool
	Origins   []int
	// SHA256 is the hex SHA-256 of the file's bytes: a resumed run refuses
	// a spec whose hash changed.
	SHA256 string
	// Source is the file's text, stored with the results.
	Source []byte
}

// Artifacts are the per-load files to keep in the run directory.
type Artifacts struct {
	Pcap bool `yaml:"pcap"`
	Qlog bool `yaml:"qlog"`
	HAR  bool `yaml:"har"`
}

// Network is one level of the networks factor.
type Network struct {
	// Name identifies the network in results; default: the preset's name,
	// or one made of its values such as "rtt100ms-loss1-down10mbit".
	Name string
	// Resolved is the network, ready for the emulator.
	Resolved *netconf.Network
}

// file is the YAML's shape.
type file struct {
	Name        string    `yaml:"name"`
	Description string    `yaml:"description"`
	Seed        *uint64   `yaml:"seed"`
	Repetitions int       `yaml:"repetitions"`
	Retries     *int      `yaml:"retries"`
	Client      string    `yaml:"client"`
	Browser     string    `yaml:"browser"`
	Timeout     string    `yaml:"timeout"`
	Netcheck    *bool     `yaml:"netcheck"`
	Artifacts   Artifacts `yaml:"artifacts"`
	Factors     factors   `yaml:"factors"`
}

type factors struct {
	Networks  []networkNode `yaml:"networks"`
	Pages     []scalar      `yaml:"pages"`
	Protocols []scalar      `yaml:"protocols"`
	Stacks    []scalar      `yaml:"stacks"`
	Servers   []scalar      `yaml:"servers"`
	Visits    []scalar      `yaml:"visits"`
	Cache     []scalar      `yaml:"cache"`
	Origins   []scalar      `yaml:"origins"`
}

// scalar is a factor level with its line.
type scalar struct {
	text string
	line int
}

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
		k, v := n.Content[i], n.Content[i+1]
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
		case isNetconfKey(key):
			if v.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: %s must be a single value", v.Line, key)
			}
			nw.values[key] = v.Value
		default:
			return fmt.Errorf("line %d: unknown network key %q: use name, preset, %s, drop-head or path", k.Line, key, strings.Join(netconf.Keys, ", "))
		}
	}
	return nil
}

func isNetconfKey(k string) bool {
	for _, key := range netconf.Keys {
		if k == key {
			return true
		}
	}
	return false
}

// networkDefaults are the values of a network's missing keys (without a
// preset): no delay, no loss, unlimited rates and queue.
var networkDefaults = map[string]string{"rtt": "0s", "jitter": "0s", "loss": "0", "down": "0", "up": "0", "queue": "0"}

// Load reads and validates the spec file at path.
func Load(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s %w", path, err)
	}
	if s.Name == "" {
		base := path[strings.LastIndexByte(path, '/')+1:]
		s.Name = strings.TrimSuffix(strings.TrimSuffix(base, ".yaml"), ".yml")
	}
	return s, nil
}

// unknownField rewrites yaml's "line N: field x not found in type …".
var unknownField = regexp.MustCompile(`line (\d+): field (\S+) not found in type \S+`)

// Parse decodes and validates a spec; errors start with "line N:" where
// the file has a line to blame.
func Parse(data []byte) (*Spec, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f file
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("is empty: give at least factors.networks, factors.pages and repetitions (see examples/)")
		}
		var te *yaml.TypeError
		if errors.As(err, &te) && len(te.Errors) > 0 {
			msg := te.Errors[0]
			if m := unknownField.FindStringSubmatch(msg); m != nil {
				msg = fmt.Sprintf("line %s: unknown key %q", m[1], m[2])
			}
			return nil, errors.New(msg)
		}
		return nil, errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	sum := sha256.Sum256(data)
	s := &Spec{Name: f.Name, Description: f.Description, Seed: 1, Repetitions: f.Repetitions, Retries: 2,
		Client: ClientChromium, Browser: BrowserFresh, Timeout: 60 * time.Second, Netcheck: true, Artifacts: f.Artifacts,
		SHA256: hex.EncodeToString(sum[:]), Source: data}
	if f.Seed != nil {
		s.Seed = *f.Seed
	}
	if f.Retries != nil {
		s.Retries = *f.Retries
	}
	if f.Netcheck != nil {
		s.Netcheck = *f.Netcheck
	}
	if s.Repetitions < 1 || s.Repetitions > MaxRepetitions {
		return nil, fmt.Errorf("repetitions %d is outside 1 to %d", s.Repetitions, MaxRepetitions)
	}
	if s.Retries < 0 || s.Retries > MaxRetries {
		return nil, fmt.Errorf("retries %d is outside 0 to %d", s.Retries, MaxRetries)
	}
	if f.Client != "" {
		if f.Client != ClientChromium && f.Client != ClientLoader {
			return nil, fmt.Errorf("client %q is unknown: use chromium or loader", f.Client)
		}
		s.Client = f.Client
	}
	switch f.Browser {
	case "", BrowserFresh:
	case BrowserWarm:
		s.Browser = BrowserWarm
	default:
		return nil, fmt.Errorf("browser %q is unknown: use fresh (a browser per load) or warm (a new browser context per load)", f.Browser)
	}
	if f.Timeout != "" {
		d, err := time.ParseDuration(f.Timeout)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("timeout %q is not a positive duration such as 60s", f.Timeout)
		}
		s.Timeout = d
	}
	if err := s.factors(f.Factors); err != nil {
		return nil, err
	}
	return s, nil
}

// factors validates and converts every factor's levels.
func (s *Spec) factors(f factors) error {
	if len(f.Networks) == 0 {
		return fmt.Errorf("factors.networks is missing or empty: give at least one network (a preset name or a mapping such as {rtt: 100ms, loss: 1})")
	}
	names := map[string]int{}
	for _, n := range f.Networks {
		resolved, err := netconf.Resolve(netconf.Description{Preset: n.preset, Values: n.values, DropHead: n.dropHead, Paths: n.paths}, networkDefaults)
		if err != nil {
			return fmt.Errorf("line %d: network: %s", n.line, strings.TrimPrefix(err.Error(), "--"))
		}
		name := n.name
		if name == "" {
			name = defaultNetworkName(n)
		}
		if line, dup := names[name]; dup {
			return fmt.Errorf("line %d: network %q is already on line %d: give each network its own name", n.line, name, line)
		}
		names[name] = n.line
		s.Networks = append(s.Networks, Network{Name: name, Resolved: resolved})
	}
	if len(f.Pages) == 0 {
		return fmt.Errorf("factors.pages is missing or empty: give at least one page such as synthetic:32x10KB")
	}
	var err error
	if s.Pages, err = levels(f.Pages, "page", site.ParsePage); err != nil {
		return err
	}
	if s.Protocols, err = levels(orDefault(f.Protocols, "h1", "h2", "h3"), "protocol", parseProtocol); err != nil {
		return err
	}
	if s.Stacks, err = levels(orDefault(f.Stacks, "tcp"), "stack", parseStack); err != nil {
		return err
	}
	if s.Servers, err = levels(orDefault(f.Servers, testbed.ServerGo), "server", testbed.ParseServer); err != nil {
		return err
	}
	if s.Visits, err = levels(orDefault(f.Visits, string(client.FirstVisit)), "visit", client.ParseVisit); err != nil {
		return err
	}
	if s.Cache, err = levels(orDefault(f.Cache, "off"), "cache", parseCache); err != nil {
		return err
	}
	if s.Origins, err = levels(orDefault(f.Origins, "1"), "origins", parseOrigins); err != nil {
		return err
	}
	for _, n := range s.Networks {
		for _, o := range s.Origins {
			if err := n.Resolved.CheckServers(o); err != nil {
				return fmt.Errorf("network %s: %s with %d origins", n.Name, strings.TrimPrefix(err.Error(), "--"), o)
			}
		}
	}
	return nil
}

// levels parses each level and rejects duplicates.
func levels[T any](in []scalar, what string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	seen := map[string]int{}
	for _, l := range in {
		v, err := parse(l.text)
		if err != nil {
			return nil, fmt.Errorf("line %d: %s: %w", l.line, what, err)
		}
		if first, dup := seen[l.text]; dup {
			return nil, fmt.Errorf("line %d: %s %q is already listed on line %d", l.line, what, l.text, first)
		}
		seen[l.text] = l.line
		out = append(out, v)
	}
	return out, nil
}

func orDefault(in []scalar, defaults ...string) []scalar {
	if len(in) > 0 {
		return in
	}
	out := make([]scalar, len(defaults))
	for i, d := range defaults {
		out[i] = scalar{text: d}
	}
	return out
}

func parseProtocol(s string) (client.Protocol, error) {
	ps, err := client.ParseProtocols(s)
	if err != nil || len(ps) != 1 {
		return "", fmt.Errorf("%q is not one of h1, h2, h3", s)
	}
	return ps[0], nil
}

func parseStack(s string) (stacks.Profile, error) {
	p, err := stacks.Lookup(s)
	if err != nil || p.QUIC {
		return stacks.Profile{}, fmt.Errorf("%q is not a TCP stack: use tcp, tcp+ or tcp+bbr (h3 always runs quic-go)", s)
	}
	return p, nil
}

func parseCache(s string) (bool, error) {
	switch s {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, fmt.Errorf("%q: use on or off", s)
}

func parseOrigins(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxOrigins {
		return 0, fmt.Errorf("%q is not a number of origins from 1 to %d", s, MaxOrigins)
	}
	return n, nil
}

// defaultNetworkName names a network by its preset or values, such as
// "seed004-us-3g" or "rtt100ms-loss1-down10mbit".
func defaultNetworkName(n networkNode) string {
	var parts []string
	if n.preset != "" {
		parts = append(parts, n.preset)
	}
	for _, key := range netconf.Keys {
		if v, ok := n.values[key]; ok {
			parts = append(parts, strings.ReplaceAll(key, "-", "")+strings.ReplaceAll(v, " ", ""))
		}
	}
	if len(parts) == 0 {
		return "unshaped"
	}
	return strings.Join(parts, "-")
}
