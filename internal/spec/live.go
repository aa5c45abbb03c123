package spec

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/live"
)

// Live are the rules of a run's live pages (url:…), the spec's live:
// mapping.
type Live struct {
	// Resolve are the hosts a load may reach beside each page's own, with
	// the addresses they are pinned to (none: the host's resolver), and
	// the page's host's own address where it is given (live.Overrides).
	Resolve live.Overrides
	// AllowPrivate lets a host resolve to a private or loopback address.
	AllowPrivate bool
	// MaxLoads caps the run's loads of live pages (0: no cap).
	MaxLoads int
	// CA is a PEM file of the certificate authority of a staging site
	// (relative to the spec's directory): its chains are accepted. "":
	// the system's roots alone.
	CA string
	// AgentSuffix ends the browsers' User-Agent on live loads; "":
	// live.DefaultAgentSuffix (AgentSuffixOrDefault).
	AgentSuffix string
	// FailUnverified makes a live load fail when it holds requests its
	// verification cannot judge (to hosts not pinned, or over another
	// protocol to a host that does not offer the one asked for):
	// unverified: fail. Default (exclude): they are left out, counted.
	FailUnverified bool
}

// The rules for a live load's requests that cannot be verified
// (Live.FailUnverified).
const (
	UnverifiedExclude = "exclude"
	UnverifiedFail    = "fail"
)

// ParseUnverified reads the rule for unverifiable requests.
func ParseUnverified(text string) (fail bool, err error) {
	switch text {
	case "", UnverifiedExclude:
		return false, nil
	case UnverifiedFail:
		return true, nil
	}
	return false, fmt.Errorf("unverified %.40q is not a rule: use %s (leave out of the verification the requests it cannot judge, counted) or %s (fail the load)", text, UnverifiedExclude, UnverifiedFail)
}

// AgentSuffixOrDefault is the User-Agent suffix of live loads.
func (l Live) AgentSuffixOrDefault() string {
	if l.AgentSuffix == "" {
		return live.DefaultAgentSuffix
	}
	return l.AgentSuffix
}

// liveNode is live: {resolve: [host=addr, host], allow_private: false,
// max_loads: 100, ca: staging-ca.pem}.
type liveNode struct {
	Resolve      []string `yaml:"resolve"`
	AllowPrivate bool     `yaml:"allow_private"`
	MaxLoads     int      `yaml:"max_loads"`
	CA           string   `yaml:"ca"`
	AgentSuffix  string   `yaml:"user_agent_suffix"`
	Unverified   string   `yaml:"unverified"`
}

// MaxLiveLoads bounds live.max_loads.
const MaxLiveLoads = 1_000_000

// liveOf converts the live: mapping.
func liveOf(n liveNode) (Live, error) {
	l := Live{Resolve: live.Overrides{}, AllowPrivate: n.AllowPrivate, MaxLoads: n.MaxLoads, CA: n.CA, AgentSuffix: n.AgentSuffix}
	if n.AgentSuffix != "" {
		if err := live.CheckAgentSuffix(n.AgentSuffix); err != nil {
			return Live{}, fmt.Errorf("live: user_agent_suffix: %w", err)
		}
	}
	var err error
	if l.FailUnverified, err = ParseUnverified(n.Unverified); err != nil {
		return Live{}, fmt.Errorf("live: %w", err)
	}
	for _, r := range n.Resolve {
		if err := l.Resolve.ParseResolve(r); err != nil {
			return Live{}, fmt.Errorf("live: resolve: %w", err)
		}
	}
	if n.MaxLoads < 0 || n.MaxLoads > MaxLiveLoads {
		return Live{}, fmt.Errorf("live: max_loads %d is outside 0 (no cap) to %d", n.MaxLoads, MaxLiveLoads)
	}
	if len(n.CA) > factor.MaxArchivePath || strings.ContainsAny(n.CA, "\x00\r\n") {
		return Live{}, fmt.Errorf("live: ca %.100q is not a usable path: give the PEM file of the staging site's CA", n.CA)
	}
	return l, nil
}

// liveYAML is s.Live as the live: mapping; nil when it holds nothing.
func liveYAML(l Live) *yaml.Node {
	if len(l.Resolve) == 0 && !l.AllowPrivate && l.MaxLoads == 0 && l.CA == "" && l.AgentSuffix == "" && !l.FailUnverified {
		return nil
	}
	n := mapping()
	if len(l.Resolve) > 0 {
		var entries []string
		for _, host := range slices.Sorted(maps.Keys(l.Resolve)) {
			entry := host
			if addrs := l.Resolve[host]; len(addrs) > 0 {
				var text []string
				for _, a := range addrs {
					text = append(text, a.String())
				}
				entry += "=" + strings.Join(text, ",")
			}
			entries = append(entries, entry)
		}
		add(n, "resolve", list(entries))
	}
	if l.AllowPrivate {
		add(n, "allow_private", str("true"))
	}
	if l.MaxLoads > 0 {
		add(n, "max_loads", str(strconv.Itoa(l.MaxLoads)))
	}
	if l.CA != "" {
		add(n, "ca", str(l.CA))
	}
	if l.AgentSuffix != "" {
		add(n, "user_agent_suffix", str(l.AgentSuffix))
	}
	if l.FailUnverified {
		add(n, "unverified", str(UnverifiedFail))
	}
	return n
}

// HasLive says whether a page of the spec is a live one.
func (s *Spec) HasLive() bool {
	return slices.ContainsFunc(s.Pages, func(p factor.Page) bool { return p.Kind == factor.PageLive })
}

// LiveCA is where the live CA file is: relative to the spec file's
// directory; "" for none.
func (s *Spec) LiveCA() string {
	if s.Live.CA == "" || filepath.IsAbs(s.Live.CA) {
		return s.Live.CA
	}
	return filepath.Join(s.Dir, s.Live.CA)
}

// checkLive refuses what a live page cannot do (the servers' artifacts,
// factors and paths, repeat visits, a client without a browser's
// records) and live rules without a live page.
func (s *Spec) checkLive() error {
	if !s.HasLive() {
		if len(s.Live.Resolve) > 0 || s.Live.MaxLoads > 0 || s.Live.CA != "" || s.Live.AllowPrivate || s.Live.AgentSuffix != "" || s.Live.FailUnverified {
			return fmt.Errorf("live: is given but no page is a live one: give a page url:https://HOST/PATH, or leave live: out")
		}
		return nil
	}
	if s.Artifacts.Qlog {
		return fmt.Errorf("artifacts: qlog records the testbed's own h3 server, and a live page is served by the site's: leave qlog out (pcap and har work)")
	}
	for _, c := range s.Clients() {
		if !c.Capabilities().Renders {
			return fmt.Errorf("factors: client %s cannot load a live page, whose requests only a browser's records verify: use %s", c, factor.ClientsThat(func(c factor.Capabilities) bool { return c.Renders }))
		}
	}
	if slices.Contains(s.LevelsOf(factor.IDVisit), string(factor.RepeatVisit)) {
		return fmt.Errorf("factors: visit repeat closes the servers' connections between the visits, and a live page's servers are the site's own: leave visits out (first visits)")
	}
	for _, n := range s.Networks {
		if len(n.Paths) > 0 {
			return fmt.Errorf("network %s: per-server paths lead to the testbed's server addresses, and a live page's servers are the site's own: leave paths out", n.Name)
		}
	}
	for _, fc := range factor.Table() {
		if levels := s.LevelsOf(fc.ID); fc.Served && len(levels) > 0 && !slices.Equal(levels, []string{fc.Default}) {
			return fmt.Errorf("factors: %s %v chooses what the testbed's servers do, and a live page is served by the site's own: leave %s out", fc.SpecKey, levels, fc.SpecKey)
		}
	}
	return nil
}
