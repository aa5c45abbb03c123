// Package spec reads experiment spec files: YAML that names the factors of a
// study (networks, pages, protocols, transport stacks, server stacks,
// visits, cache, origins), its repetitions, seed, client, timeouts and the
// artifacts to keep. Decoding is strict: an unknown key or a bad value is an
// error that names the file's line.
//
// A spec is also what `quicbench compare` runs: its flags become a Spec,
// written out with Format and read back with Parse, so one parser and one
// validator serve files and flags alike. The package imports only the
// vocabulary (factor, netconf), never a package that runs anything.
package spec

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/netconf"
	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/units"
)

// Limits.
const (
	MaxRepetitions = 100_000
	MaxRetries     = 10
	// MaxTrials bounds a plan: a million trials is months of loads on
	// one machine; split a larger study into several specs.
	MaxTrials = 1_000_000
)

// Defaults of the scalars a spec may leave out.
const (
	DefaultSeed    = 1
	DefaultRetries = 2
	DefaultTimeout = 60 * time.Second
	// MaxTimeout bounds a load's timeout.
	MaxTimeout = 30 * time.Minute
	// DefaultMaxUnmatched is the share of a recorded page's requests that
	// may match nothing in the recording before its load fails: the
	// browser's own requests and those an earlier load found the
	// recording lacks are not counted (experiment's completeness).
	DefaultMaxUnmatched = 0.05
)

// Spec is a decoded, validated spec file. Every factor has at least one
// level.
type Spec struct {
	// Name names the study; default: the file name without extension.
	Name        string
	Description string
	// Seed seeds loss decisions, page bytes and the trial order (package
	// plan derives every stream from it).
	Seed uint64
	// Repetitions is how many times each cell is loaded: with Until, the
	// most it may be loaded.
	Repetitions int
	// Until, when set, stops a setting's repetitions once its answer is
	// known (repetitions: {min, max, until: {ci_ratio}}); nil: every
	// cell is loaded Repetitions times.
	Until *Until
	// Retries is how many more attempts a failed trial gets (default 2;
	// none where plan.Cell.OnlyFails says why it cannot succeed).
	Retries int
	// Timeout bounds one load (default 60 s).
	Timeout time.Duration
	// Netcheck measures each network before its first trial (default on).
	Netcheck bool
	// Deterministic makes Date and Math.random in the pages' scripts the
	// same on every load (WebPageReplay's fix for pages that put the time
	// or random numbers into URLs); nil: on for recorded pages, off for
	// generated ones (DeterministicFor).
	Deterministic *bool
	// Viewport is the viewport of every load; nil: each page's (a
	// recording's own, else the default). The zero Viewport is the
	// default's (desktop).
	Viewport *factor.Viewport
	// MaxUnmatched is the fraction of a recorded page's requests that may
	// match nothing in the recording (default DefaultMaxUnmatched); a
	// generated page has every request it makes.
	MaxUnmatched float64
	// Pairing starts every load of a repetition from the same link state
	// (common random numbers): the loads of a setting that differ only in
	// protocol, visit, cache, visual, stack or server get the same loss
	// and jitter draws and trace phase (plan.PairSeeds); default on: it
	// narrowed the interval of the h3/h2 ratio 1.7 to 3 times on lossy
	// networks (BENCHMARKS.md).
	Pairing   bool
	Artifacts Artifacts
	// Live are the rules of the live pages (url:…): the hosts they may
	// reach, the addresses allowed, the loads' cap, a staging CA.
	Live Live
	// Networks and Pages are the levels of the two factors whose levels
	// carry more than their text: a network's numbers, a page's make-up.
	Networks []*netconf.Network
	Pages    []factor.Page
	// Levels are every other factor's levels (factor.Table) as canonical
	// text, in the spec's order; a run factor (client, browser) has one.
	Levels map[factor.ID][]string
	// Dir is the spec file's directory, which relative archive page
	// directories are relative to ("" for the working directory).
	Dir string
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
	// NetLog keeps the browser's own network log of each load: Chromium's
	// NetLog, Firefox's HTTP log.
	NetLog bool `yaml:"netlog"`
}

// Load reads and validates the spec file at path.
func Load(path string) (*Spec, error) {
	data, err := safefs.ReadRegular(path, MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	s, err := parse(data, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("%s %w", path, err)
	}
	if s.Name == "" {
		base := path[strings.LastIndexByte(path, '/')+1:]
		s.Name = strings.TrimSuffix(strings.TrimSuffix(base, ".yaml"), ".yml")
	}
	return s, nil
}

// yamlQuote is a value the YAML decoder quotes in its errors.
var yamlQuote = regexp.MustCompile("`[^`]*`")

// shortenQuotes keeps the values YAML errors quote to one line of at most
// 20 printable characters.
func shortenQuotes(msg string) string {
	msg = yamlQuote.ReplaceAllStringFunc(msg, func(q string) string {
		r := []rune(strings.Trim(q, "`"))
		short := len(r) > 20
		if short {
			r = r[:20]
		}
		s := strings.Map(func(c rune) rune {
			if unicode.IsPrint(c) {
				return c
			}
			return '?'
		}, string(r))
		if short {
			s += "…"
		}
		return "`" + s + "`"
	})
	return strings.Map(func(c rune) rune {
		if c == '\n' || c == '\r' {
			return ' '
		}
		return c
	}, msg)
}

// unknownField rewrites yaml's "line N: field x not found in type …".
var unknownField = regexp.MustCompile(`line (\d+): field (\S+) not found in type \S+`)

// MaxFileBytes bounds a spec file.
const MaxFileBytes = 1 << 20

// DirName is the spec's name as a directory name: letters, digits, ".",
// "_" and "-" kept, anything else (a "/" of "../x" among them) made "-", no
// leading dot.
func (s *Spec) DirName() string {
	name := strings.Map(func(r rune) rune {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._-", r)) {
			return r
		}
		return '-'
	}, s.Name)
	name = strings.TrimLeft(name, ".")
	if name == "" {
		return "run"
	}
	return name
}

// Parse decodes and validates a spec; errors start with "line N:" where
// the file has a line to blame. Relative trace paths are relative to the
// working directory.
func Parse(data []byte) (*Spec, error) { return parse(data, "") }

// parse is Parse with relative trace paths relative to dir ("" for the
// working directory).
func parse(data []byte, dir string) (*Spec, error) {
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
			return nil, errors.New(shortenQuotes(msg))
		}
		return nil, errors.New(shortenQuotes(strings.TrimPrefix(err.Error(), "yaml: ")))
	}
	if !f.Repetitions.Given {
		return nil, fmt.Errorf("repetitions is missing: say how often every cell runs, such as repetitions: 30 (1 to %d)", MaxRepetitions)
	}
	sum := sha256.Sum256(data)
	s := &Spec{Name: f.Name, Description: f.Description, Seed: DefaultSeed, Repetitions: f.Repetitions.Max, Retries: DefaultRetries,
		Timeout: DefaultTimeout, Netcheck: true, Artifacts: f.Artifacts, MaxUnmatched: DefaultMaxUnmatched, Levels: map[factor.ID][]string{},
		SHA256: hex.EncodeToString(sum[:]), Source: data, Dir: dir}
	if err := s.scalars(f); err != nil {
		return nil, err
	}
	if err := s.factors(f.Factors, dir); err != nil {
		return nil, err
	}
	if err := s.topClient(f); err != nil {
		return nil, err
	}
	return s, s.Validate()
}

// topClient takes the client a spec names at its top (`client: firefox`,
// from before clients were a factor) as the one level of factors'
// clients, which it must then leave out.
func (s *Spec) topClient(f file) error {
	if f.Client == "" {
		return nil
	}
	if _, both := f.Factors.levels[factor.IDClient]; both {
		return fmt.Errorf("client %q and factors.clients are both given: list the clients under factors only", f.Client)
	}
	level, err := factor.Of(factor.IDClient).Parse(f.Client)
	if err != nil {
		return err
	}
	s.Levels[factor.IDClient] = []string{level}
	return nil
}

// scalars converts the keys outside factors, the run factors among them.
func (s *Spec) scalars(f file) error {
	if u := f.Repetitions.Until; u != nil {
		s.Until = &Until{Min: u.Min, CIRatio: u.Until.CIRatio}
	}
	if f.Seed != nil {
		s.Seed = uint64(*f.Seed)
	}
	if f.Retries != nil {
		s.Retries = *f.Retries
	}
	if f.Netcheck != nil {
		s.Netcheck = *f.Netcheck
	}
	s.Deterministic, s.Pairing = f.Deterministic, f.Pairing == nil || *f.Pairing
	if f.Viewport != "" {
		v, err := ParseViewport(f.Viewport)
		if err != nil {
			return err
		}
		s.Viewport = &v
	}
	var err error
	if s.Live, err = liveOf(f.Live); err != nil {
		return err
	}
	if m := f.Replay.MaxUnmatched; m != "" {
		v, err := units.ParsePercent(m)
		if err != nil {
			return fmt.Errorf("replay: max_unmatched: %w", err)
		}
		s.MaxUnmatched = v
	}
	for _, run := range []struct {
		id   factor.ID
		text string
	}{{factor.IDBrowser, f.Browser}} {
		id, text, fc := run.id, run.text, factor.Of(run.id)
		if text == "" {
			text = fc.Default
		}
		level, err := fc.Parse(text)
		if err != nil {
			return err
		}
		s.Levels[id] = []string{level}
	}
	if f.Timeout != "" {
		d, err := time.ParseDuration(f.Timeout)
		if err != nil || d <= 0 {
			return fmt.Errorf("timeout %q is not a positive duration such as 60s", f.Timeout)
		}
		s.Timeout = d
	}
	return nil
}

// ParseViewport reads a spec's or a flag's viewport: "desktop" for the
// default, else factor.ParseViewport's WIDTHxHEIGHT[@SCALE][,mobile].
func ParseViewport(text string) (factor.Viewport, error) {
	if text == "desktop" {
		return factor.Viewport{}, nil
	}
	return factor.ParseViewport(text)
}

// ViewportText is v as ParseViewport reads it.
func ViewportText(v factor.Viewport) string {
	if v.IsZero() {
		return "desktop"
	}
	return v.String()
}

// ViewportOr is the viewport of a load of a page whose own is own (zero:
// none): the spec's if it sets one, else own.
func (s *Spec) ViewportOr(own factor.Viewport) factor.Viewport {
	if s.Viewport != nil {
		return *s.Viewport
	}
	return own
}

// DeterministicFor says whether loads of page get deterministic time and
// randomness: as the spec says, else for recorded pages.
func (s *Spec) DeterministicFor(page factor.Page) bool {
	if s.Deterministic != nil {
		return *s.Deterministic
	}
	return page.Kind == factor.PageArchive
}

// LevelsOf lists factor id's levels as text: the networks' names, the
// pages as factor.ParsePage reads them, and the other factors' Levels.
func (s *Spec) LevelsOf(id factor.ID) []string {
	switch id {
	case factor.IDNetwork:
		out := make([]string, len(s.Networks))
		for i, n := range s.Networks {
			out[i] = n.Name
		}
		return out
	case factor.IDPage:
		out := make([]string, len(s.Pages))
		for i, p := range s.Pages {
			out[i] = p.String()
		}
		return out
	}
	return s.Levels[id]
}

// Has reports whether level is one of factor id's levels.
func (s *Spec) Has(id factor.ID, level string) bool { return slices.Contains(s.LevelsOf(id), level) }

// Protocols are the protocols loaded.
func (s *Spec) Protocols() []factor.Protocol {
	var out []factor.Protocol
	for _, l := range s.Levels[factor.IDProtocol] {
		out = append(out, factor.Protocol(l))
	}
	return out
}

// Clients are what load the pages (a cell factor).
func (s *Spec) Clients() []factor.Client {
	var out []factor.Client
	for _, l := range s.Levels[factor.IDClient] {
		out = append(out, factor.Client(l))
	}
	return out
}

// Browser is the browser mode (a run factor: one level).
func (s *Spec) Browser() factor.Browser { return factor.Browser(s.one(factor.IDBrowser)) }

// one is the level of a run factor, "" if it has none.
func (s *Spec) one(id factor.ID) string {
	if l := s.Levels[id]; len(l) > 0 {
		return l[0]
	}
	return ""
}

// Trials is the size of the plan: the product of the factors' level
// counts and the repetitions (capped at MaxInt64 rather than wrapping).
func (s *Spec) Trials() int64 {
	n := int64(s.Repetitions)
	for _, f := range factor.Table() {
		if k := len(s.LevelsOf(f.ID)); k > 0 && n > math.MaxInt64/int64(k) {
			return math.MaxInt64
		} else if k > 0 {
			n *= int64(k)
		}
	}
	return n
}

// Validate checks what no single level can: limits, levels present,
// known and distinct, and paths that name an existing origin. Parse
// calls it; so does anything that builds a Spec otherwise.
func (s *Spec) Validate() error {
	switch {
	case s.Seed > math.MaxInt64: // stored as an SQLite INTEGER
		return fmt.Errorf("seed %d is above %d", s.Seed, int64(math.MaxInt64))
	case s.Repetitions < 1 || s.Repetitions > MaxRepetitions:
		return fmt.Errorf("repetitions %d is outside 1 to %d", s.Repetitions, MaxRepetitions)
	case s.Retries < 0 || s.Retries > MaxRetries:
		return fmt.Errorf("retries %d is outside 0 to %d", s.Retries, MaxRetries)
	case s.Until != nil && s.Until.validate(s.Repetitions, len(s.Protocols())) != nil:
		return s.Until.validate(s.Repetitions, len(s.Protocols()))
	case s.Timeout <= 0:
		return fmt.Errorf("timeout %v is not positive", s.Timeout)
	case s.Timeout > MaxTimeout:
		return fmt.Errorf("timeout %v is over %v: a load that takes longer is no page load to compare; give at most %v", s.Timeout, MaxTimeout, MaxTimeout)
	case hasControl(s.Name):
		return fmt.Errorf("name %q holds control characters: name the spec with printable text", s.Name)
	}
	if err := s.checkLevels(); err != nil {
		return err
	}
	if err := s.checkCombinations(); err != nil {
		return err
	}
	if err := s.checkLive(); err != nil {
		return err
	}
	return s.checkNetworks()
}

// checkLevels checks each factor's levels on their own: at least one
// (one for a run factor), each known and written as quicbench writes it,
// none twice.
func (s *Spec) checkLevels() error {
	for _, p := range s.Pages {
		if err := p.Validate(); err != nil {
			return fmt.Errorf("page %s: %w", p, err)
		}
	}
	for _, f := range factor.Table() {
		levels := s.LevelsOf(f.ID)
		switch {
		case len(levels) == 0:
			return fmt.Errorf("every factor needs at least one level: %s has none", f.Plural)
		case f.Scope == factor.ScopeRun && len(levels) != 1:
			return fmt.Errorf("%s has one level per run, not %d", f.What, len(levels))
		}
		seen := make(map[string]bool, len(levels))
		for _, l := range levels {
			if seen[l] {
				return fmt.Errorf("%s %q is listed twice: give each level once", f.What, l)
			}
			seen[l] = true
			if f.ID == factor.IDNetwork || f.ID == factor.IDPage {
				continue // resolved and checked as they were made
			}
			if canonical, err := f.Parse(l); err != nil {
				return err
			} else if canonical != l {
				return fmt.Errorf("%s %q is not written as quicbench writes it (%q)", f.What, l, canonical)
			}
		}
	}
	return nil
}

// checkClient checks what the spec asks of client c.
func (s *Spec) checkClient(c factor.Client) error {
	caps := c.Capabilities()
	switch {
	case s.Has(factor.IDVisual, string(factor.VisualOn)) && !caps.Frames:
		return fmt.Errorf("visual on needs client %s: the %s client %s", factor.ClientsThat(func(c factor.Capabilities) bool { return c.Frames }), c, framesReason(c))
	case s.Artifacts.NetLog && !caps.NetLog:
		return fmt.Errorf("artifacts: {netlog: true} needs client %s: the %s client is no browser and keeps no net log", factor.ClientsThat(func(c factor.Capabilities) bool { return c.NetLog }), c)
	case s.Browser() == factor.BrowserWarm && !caps.Warm:
		return fmt.Errorf("browser warm needs client %s: the %s client keeps no browser between loads", factor.ClientsThat(func(c factor.Capabilities) bool { return c.Warm }), c)
	case slices.ContainsFunc(s.LevelsOf(factor.IDDiscovery), func(l string) bool { return factor.Discovery(l).Discovers() }) && !caps.Discovers:
		return fmt.Errorf("discovery %v needs client %s: the %s client speaks only the protocol it is given and never learns of h3 from Alt-Svc; use discovery: forced", s.LevelsOf(factor.IDDiscovery), factor.ClientsThat(func(c factor.Capabilities) bool { return c.Discovers }), c)
	case s.Has(factor.IDDNS, string(factor.DNSResolved)) && !caps.Resolves:
		return fmt.Errorf("dns resolved needs client %s: the %s client is given each host's address", factor.ClientsThat(func(c factor.Capabilities) bool { return c.Resolves }), c)
	case s.CapsClientCPU() && !caps.CPUCap:
		return fmt.Errorf("client_cpu %v needs client %s: the %s client runs inside quicbench's own process, whose CPU cannot be capped apart", s.LevelsOf(factor.IDClientCPU), factor.ClientsThat(func(c factor.Capabilities) bool { return c.CPUCap }), c)
	}
	return nil
}

// CapsClientCPU says some cell's client has a CPU cap (client_cpu other
// than unlimited).
func (s *Spec) CapsClientCPU() bool {
	return slices.ContainsFunc(s.LevelsOf(factor.IDClientCPU), func(l string) bool { return factor.ClientCPU(l).Cores() > 0 })
}

// framesReason says why client c captures no frames.
func framesReason(c factor.Client) string {
	if c.Capabilities().Renders {
		return "captures no frames yet"
	}
	return "does not render pages"
}

// checkCombinations checks the levels that cannot go together, and the
// plan's size.
func (s *Spec) checkCombinations() error {
	for _, c := range s.Clients() {
		if err := s.checkClient(c); err != nil {
			return err
		}
	}
	switch {
	case s.Artifacts.NetLog && s.Browser() == factor.BrowserWarm:
		return fmt.Errorf("artifacts: {netlog: true} needs browser fresh: a browser writes one net log from its start to its end, and a warm browser serves many loads")
	case slices.ContainsFunc(s.Pages, factor.Page.OwnOrigins) && !slices.Equal(s.LevelsOf(factor.IDOrigins), []string{"1"}):
		return fmt.Errorf("origins %v: web2024 and archive pages have their own origins; spread only synthetic pages over origins (put them in another spec)", s.LevelsOf(factor.IDOrigins))
	case slices.ContainsFunc(s.Pages, isArchive) && slices.ContainsFunc(s.LevelsOf(factor.IDServer), func(l string) bool { return !factor.Server(l).Replays() }):
		var not []string
		for _, l := range s.LevelsOf(factor.IDServer) {
			if !factor.Server(l).Replays() {
				not = append(not, l)
			}
		}
		return fmt.Errorf("servers %v: %s replays no archive pages (their recorded statuses, headers and queries): use %s", s.LevelsOf(factor.IDServer),
			strings.Join(not, " and "), factor.ServersThat(factor.Server.Replays))
	case slices.ContainsFunc(s.Pages, waits) && !s.onlyGoServes():
		return fmt.Errorf("a page with a server wait (+wait) needs server go and quic quic-go, the only stacks that hold responses: serve it with them or drop the wait")
	case s.Has(factor.IDDiscovery, string(factor.DiscoveryHTTPSRR)) && s.Has(factor.IDDNS, string(factor.DNSPinned)):
		return fmt.Errorf("discovery https-rr needs dns: [resolved]: a browser given its hosts' addresses makes no lookup and reads no HTTPS record (put pinned loads in another spec)")
	case len(s.LevelsOf(factor.IDQUIC)) > 1 && !s.Has(factor.IDProtocol, string(factor.H3)):
		return fmt.Errorf("quic lists %d QUIC stacks but protocols has no h3, which they serve: add h3 or list one QUIC stack", len(s.LevelsOf(factor.IDQUIC)))
	case s.Trials() > MaxTrials:
		return fmt.Errorf("the plan has %d trials, above the limit of %d: use fewer levels or repetitions, or split the study into several specs", s.Trials(), MaxTrials)
	}
	return nil
}

// checkNetworks checks that each network is named once and that its
// per-server paths name servers the origins have.
func (s *Spec) checkNetworks() error {
	names := map[string]bool{}
	for _, n := range s.Networks {
		if names[n.Name] {
			return fmt.Errorf("network %q is listed twice: give each network its own name", n.Name)
		}
		if hasControl(n.Name) {
			return fmt.Errorf("network %q: its name holds control characters: name it with printable text", n.Name)
		}
		names[n.Name] = true
		for _, text := range s.LevelsOf(factor.IDOrigins) {
			o, _ := strconv.Atoi(text)
			if err := n.CheckServers(o); err != nil {
				return fmt.Errorf("network %s: %s with %d origins", n.Name, strings.TrimPrefix(err.Error(), "--"), o)
			}
		}
	}
	return nil
}

// factors validates and converts every factor's levels.
func (s *Spec) factors(f factors, dir string) error {
	if len(f.networks) == 0 {
		return fmt.Errorf("factors.networks is missing or empty: give at least one network (a preset name or a mapping such as {rtt: 100ms, loss: 1})")
	}
	lines := map[string]int{}
	for _, n := range f.networks {
		n.relativeTo(dir)
		resolved, err := netconf.Resolve(netconf.Description{Name: n.name, Preset: n.preset, Values: n.values, DropHead: n.dropHead, Paths: n.paths}, networkDefaults)
		if err != nil {
			return fmt.Errorf("line %d: network: %s", n.line, strings.TrimPrefix(err.Error(), "--"))
		}
		if line, dup := lines[resolved.Name]; dup {
			return fmt.Errorf("line %d: network %q is already on line %d: give each network its own name", n.line, resolved.Name, line)
		}
		lines[resolved.Name] = n.line
		s.Networks = append(s.Networks, resolved)
	}
	var err error
	if s.Pages, err = pagesOf(f); err != nil {
		return err
	}
	for _, fc := range factor.Table() {
		if fc.Scope == factor.ScopeRun || fc.ID == factor.IDNetwork || fc.ID == factor.IDPage {
			continue
		}
		given, ok := f.levels[fc.ID]
		if !ok {
			given = defaultLevels(fc)
		}
		if s.Levels[fc.ID], err = levels(given, fc.What, fc.Parse); err != nil {
			return err
		}
	}
	return nil
}

// defaultLevels are the levels of a factor a spec leaves out: its default,
// or every level.
func defaultLevels(f factor.Factor) levelList {
	if f.AllByDefault {
		var all levelList
		for _, l := range f.Enum.Values() {
			all = append(all, scalar{text: l})
		}
		return all
	}
	return levelList{{text: f.Default}}
}

// pagesOf is the pages of factors.pages followed by those of
// factors.corpus.
func pagesOf(f factors) ([]factor.Page, error) {
	if len(f.pages) == 0 && f.corpus == nil {
		return nil, fmt.Errorf("factors.pages is missing or empty: give at least one page such as synthetic:32x10KB, or a corpus such as {kind: web2024, pages: 100}")
	}
	var pages []factor.Page
	if f.pages != nil {
		var err error
		if pages, err = levels(f.pages, "page", factor.ParsePage); err != nil {
			return nil, err
		}
	}
	if c := f.corpus; c != nil {
		if c.Kind != string(factor.PageWeb2024) {
			return nil, fmt.Errorf("corpus kind %q is unknown: use web2024", c.Kind)
		}
		if c.Pages < 1 || c.Pages > factor.MaxCorpusPage {
			return nil, fmt.Errorf("corpus pages %d is outside 1 to %d", c.Pages, factor.MaxCorpusPage)
		}
		seed := uint64(1)
		if c.Seed != nil {
			seed = uint64(*c.Seed)
		}
		listed := map[factor.Page]bool{}
		for _, p := range pages {
			listed[p] = true
		}
		for n := 1; n <= c.Pages; n++ {
			p := factor.Page{Kind: factor.PageWeb2024, Number: n, CorpusSeed: seed}
			if listed[p] {
				return nil, fmt.Errorf("page %s is both in factors.pages and in factors.corpus: list it once", p)
			}
			pages = append(pages, p)
		}
	}
	return pages, nil
}

// levels parses each level and rejects duplicates (two texts of one
// level, such as 10KB and 10000B, among them).
func levels[T comparable](in levelList, what string, parse func(string) (T, error)) ([]T, error) {
	if len(in) == 0 {
		return nil, fmt.Errorf("the list of %s levels is empty: give at least one, or leave the key out for its default", what)
	}
	var out []T
	seen := map[T]int{}
	for _, l := range in {
		v, err := parse(l.text)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", l.line, err)
		}
		if first, dup := seen[v]; dup {
			return nil, fmt.Errorf("line %d: %s %q is already listed on line %d", l.line, what, l.text, first)
		}
		seen[v] = l.line
		out = append(out, v)
	}
	return out, nil
}

// isArchive reports whether p is replayed from a site archive.
func isArchive(p factor.Page) bool { return p.Kind == factor.PageArchive }

// waits reports whether the server holds p's responses (its server wait).
func waits(p factor.Page) bool { return p.ServerWait > 0 }

// onlyGoServes reports whether the Go origin serves every protocol: the
// server factor is go, and the QUIC stacks are quic-go's where h3 runs.
func (s *Spec) onlyGoServes() bool {
	for _, l := range s.LevelsOf(factor.IDServer) {
		if factor.Server(l) != factor.ServerGo {
			return false
		}
	}
	if !s.Has(factor.IDProtocol, string(factor.H3)) {
		return true
	}
	for _, l := range s.LevelsOf(factor.IDQUIC) {
		if factor.QUIC(l).Server() != factor.QUICGo {
			return false
		}
	}
	return true
}

// ArchiveDir is where the archive page p's directory is: relative to the
// spec file's directory.
func (s *Spec) ArchiveDir(p factor.Page) string {
	if filepath.IsAbs(p.Archive) || s.Dir == "" {
		return p.Archive
	}
	return filepath.Join(s.Dir, p.Archive)
}

// Until is the rule that stops a setting's repetitions: after each
// repetition from Min on, a setting (every factor but the protocol) stops
// once the group-sequential test of the compared protocols (h3 against h2
// where both are loaded) gives a verdict, or once the 95 % interval of
// their ratio of medians is within ±CIRatio of it; at the latest after
// Repetitions (stats.Sequential).
type Until struct {
	Min     int     // repetitions before the first look
	CIRatio float64 // relative half-width of the ratio's interval that suffices, such as 0.03
}

// MaxCIRatio bounds until.ci_ratio: a half-width of 50 % answers nothing.
const MaxCIRatio = 0.5

// Check validates the rule on its own: a first look after at least 2
// repetitions and a usable half-width.
func (u *Until) Check() error {
	return u.validate(MaxRepetitions, 2)
}

// validate checks the rule against the spec's repetitions and protocols.
func (u *Until) validate(max int, protocols int) error {
	switch {
	case u.Min < 2 || u.Min > max:
		return fmt.Errorf("repetitions min %d is outside 2 to max %d: the first look needs at least 2 loads per protocol", u.Min, max)
	case !(u.CIRatio > 0 && u.CIRatio <= MaxCIRatio):
		return fmt.Errorf("until ci_ratio %g is outside 0 to %g: give the half-width of the ratio's interval that suffices, such as 0.03 for ±3 %%", u.CIRatio, MaxCIRatio)
	case protocols < 2:
		return fmt.Errorf("repetitions until needs two protocols to compare: list at least two under protocols")
	}
	return nil
}

// hasControl reports whether text holds a control character (an escape
// sequence would reach the terminal that shows the name).
func hasControl(text string) bool {
	return strings.IndexFunc(text, unicode.IsControl) >= 0
}
