package spec

import (
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/netconf"
	"github.com/quicbench/quicbench/internal/testenv"
)

const full = `name: study
description: a bit of everything
seed: 7
repetitions: 3
retries: 1
client: chromium
browser: warm
timeout: 30s
netcheck: false
deterministic: true
pairing: true
replay: {max_unmatched: 2.5%}
artifacts: {pcap: true, qlog: false, har: true}
factors:
  networks:
    - {name: fast, rtt: 10ms, down: 100mbit, up: 100mbit, queue: 200ms}
    - {rtt: 100ms, loss: 1}
    - biswal2016-us-3g
    - {preset: wolsing2019-lte, loss: 2, path: ["2=40ms"]}
  pages: [synthetic:2x100B, synthetic:8x10KB]
  protocols: [h2, h3]
  stacks: [tcp, tcp+]
  servers: [go, nginx]
  quic: [quic-go, quinn+bbr]
  visits: [first, repeat]
  cache: [off, on]
  origins: [2]
`

func TestParseFullSpec(t *testing.T) {
	s, err := Parse([]byte(full))
	if err != nil {
		t.Fatal(err)
	}
	if s.Browser() != factor.BrowserWarm {
		t.Errorf("browser %q", s.Browser())
	}
	if s.Deterministic == nil || !*s.Deterministic || s.MaxUnmatched != 0.025 {
		t.Errorf("deterministic %v, max_unmatched %g", s.Deterministic, s.MaxUnmatched)
	}
	if s.Name != "study" || s.Seed != 7 || s.Repetitions != 3 || s.Retries != 1 || s.Timeout != 30*time.Second || s.Netcheck || !s.Artifacts.Pcap || !s.Artifacts.HAR {
		t.Errorf("scalars: %+v", s)
	}
	var names []string
	for _, n := range s.Networks {
		names = append(names, n.Name)
	}
	if got := strings.Join(names, " "); got != "fast rtt100ms-loss1 biswal2016-us-3g wolsing2019-lte-loss2-path2-40ms" {
		t.Errorf("network names %q", got)
	}
	if s.Networks[0].Down.RateBitsPerSecond != 100e6 || s.Networks[0].Down.QueueBytes != 2_500_000 {
		t.Errorf("fast network %+v", s.Networks[0].Down)
	}
	if s.Networks[1].Down.RateBitsPerSecond != 0 || s.Networks[1].Up.Loss != 0.01 {
		t.Errorf("rtt100ms-loss1: %+v (missing keys must be unlimited, no queue)", s.Networks[1].Up)
	}
	if s.Networks[3].RTT != 74*time.Millisecond || s.Networks[3].Down.Loss != 0.02 || len(s.Networks[3].Paths) != 1 {
		t.Errorf("preset with overrides: %+v", s.Networks[3])
	}
	want := map[factor.ID][]string{
		factor.IDPage: {"synthetic:2x100B", "synthetic:8x10KB"}, factor.IDProtocol: {"h2", "h3"}, factor.IDStack: {"tcp", "tcp+"},
		factor.IDServer: {"go", "nginx"}, factor.IDQUIC: {"quic-go", "quinn+bbr"}, factor.IDVisit: {"first", "repeat"},
		factor.IDCache: {"off", "on"}, factor.IDVisual: {"off"}, factor.IDOrigins: {"2"}, factor.IDClient: {"chromium"}, factor.IDBrowser: {"warm"},
	}
	for id, levels := range want {
		if got := s.LevelsOf(id); !slices.Equal(got, levels) {
			t.Errorf("%s: %v, want %v", factor.Of(id).Plural, got, levels)
		}
	}
	if s.Pages[1].Objects != 8 {
		t.Errorf("page %+v", s.Pages[1])
	}
	if len(s.SHA256) != 64 || string(s.Source) != full {
		t.Error("hash or source missing")
	}
}

func TestDefaults(t *testing.T) {
	s, err := Parse([]byte("repetitions: 1\nfactors:\n  networks: [{rtt: 20ms}]\n  pages: [synthetic:1x1KB]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Seed != 1 || s.Retries != 2 || !slices.Equal(s.Clients(), []factor.Client{factor.ClientChromium}) || s.Browser() != factor.BrowserFresh || s.Timeout != time.Minute || !s.Netcheck {
		t.Errorf("defaults: %+v", s)
	}
	// Every factor a spec leaves out has its default, the protocols all
	// their levels.
	for _, f := range factor.Table() {
		want := []string{f.Default}
		switch {
		case f.ID == factor.IDNetwork || f.ID == factor.IDPage:
			continue
		case f.AllByDefault:
			want = f.Enum.Values()
		}
		if got := s.LevelsOf(f.ID); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", f.Plural, got, want)
		}
	}
	if !slices.Equal(s.Protocols(), []factor.Protocol{factor.H1, factor.H2, factor.H3}) {
		t.Errorf("protocols %v", s.Protocols())
	}
	// Recorded pages are deterministic unless the spec says otherwise;
	// generated ones are not.
	if s.MaxUnmatched != DefaultMaxUnmatched || s.Deterministic != nil ||
		!s.DeterministicFor(factor.Page{Kind: factor.PageArchive}) || s.DeterministicFor(s.Pages[0]) {
		t.Errorf("replay defaults: max_unmatched %g, deterministic %v", s.MaxUnmatched, s.Deterministic)
	}
	off := false
	if s.Deterministic = &off; s.DeterministicFor(factor.Page{Kind: factor.PageArchive}) {
		t.Error("deterministic: false left an archive page deterministic")
	}
}

func TestBadSpecsNameTheLine(t *testing.T) {
	base := "repetitions: 2\nfactors:\n  networks: [{rtt: 20ms}]\n  pages: [synthetic:1x1KB]\n"
	for _, c := range []struct{ spec, want string }{
		{"", "is empty"},
		{"repetitions: 2\nfactors:\n  pages: [synthetic:1x1KB]\n", "factors.networks is missing"},
		{"repetitions: 2\nfactors:\n  networks: [{rtt: 20ms}]\n", "factors.pages is missing"},
		{"repetitions: 2\nreps: 3\n", `line 2: unknown key "reps"`},
		{base + "  protocol: [h2]\n", `line 5: unknown key "protocol"`},
		{base + "  protocols: [h2, h4]\n", `line 5: protocol "h4" is unknown: use h1, h2 or h3`},
		{base + "  protocols: [h2, h2]\n", `line 5: protocol "h2" is already listed on line 5`},
		{base + "  stacks: [quic]\n", `line 5: stack "quic" is unknown: use tcp, tcp+ or tcp+bbr`},
		{base + "  servers: [apache]\n", `line 5: server "apache" is unknown: use go, nginx or caddy`},
		{base + "  quic: [quinn+reno]\n", `line 5: QUIC stack "quinn+reno" is unknown: use quic-go, quinn+cubic, quinn+newreno, quinn+bbr, quiche+cubic, quiche+reno, quiche+bbr2 or caddy`},
		{base + "  quic: [quic-go, quinn+bbr]\n  protocols: [h2]\n", "quic lists 2 QUIC stacks but protocols has no h3"},
		{base + "  cache: [maybe]\n", `line 5: cache "maybe" is unknown: use off or on`},
		{base + "  origins: [0]\n", `line 5: origins 0 is outside 1 to 64`},
		{base + "  visits: [second]\n", `line 5: visit "second" is unknown`},
		{"repetitions: 2\nfactors:\n  networks:\n    - {rtt: fast}\n  pages: [synthetic:1x1KB]\n", `line 4: network: rtt "fast" is not a duration`},
		{"repetitions: 2\nfactors:\n  networks:\n    - {latency: 5ms}\n  pages: [synthetic:1x1KB]\n", `line 4: unknown network key "latency"`},
		{"repetitions: 2\nfactors:\n  networks:\n    - 5g\n  pages: [synthetic:1x1KB]\n", `line 4: network: net: unknown network preset "5g"`},
		{"repetitions: 2\nfactors:\n  networks: [{rtt: 5ms}, {rtt: 5ms}]\n  pages: [synthetic:1x1KB]\n", `network "rtt5ms" is already on line 3`},
		{"repetitions: 2\nfactors:\n  networks: [{rtt: 5ms, path: 3=10ms}]\n  pages: [synthetic:1x1KB]\n", "path names server 3, but there are 1 servers with 1 origins"},
		{"repetitions: 2\nfactors:\n  networks: [{rtt: 5ms}]\n  pages: [cnn.com]\n", `line 4: page "cnn.com" is not supported`},
		{"repetitions: 0\nfactors:\n  networks: [{rtt: 5ms}]\n  pages: [synthetic:1x1KB]\n", "repetitions 0 is outside 1 to 100000"},
		{"repetitions: two\n", `line 1: cannot unmarshal !!str ` + "`two`"},
		{base + "seed: 18446744073709551615\n", `line 5: seed "18446744073709551615" is not a whole number from 0 to 9223372036854775807`},
		{base + "seed: -1\n", `line 5: seed "-1" is not a whole number from 0 to 9223372036854775807`},
		{"factors:\n  networks: [{rtt: 5ms}]\n  pages: [synthetic:1x1KB]\n", "repetitions is missing: say how often every cell runs"},
		{base + "timeout: 1000000h\n", "timeout 1000000h0m0s is over 30m0s"},
		{base + "name: \"run\\e[2J\"\n", "name \"run\\x1b[2J\" holds control characters"},
		{"repetitions: 2\nfactors:\n  networks: [{name: \"n\\e]0;x\\a\", rtt: 5ms}]\n  pages: [synthetic:1x1KB]\n", "its name holds control characters"},
		{"repetitions: 2\nfactors:\n  networks: [{rtt: 5ms, loss: 100}]\n  pages: [synthetic:1x1KB]\n", "loss 100% lets no packet through"},
		{base + "client: safari\n", `client "safari" is unknown: use chromium, chromium-shell, firefox or loader`},
		{base + "timeout: soon\n", `timeout "soon" is not a positive duration`},
		{base + "client: loader\nbrowser: warm\n", `browser warm needs client chromium, chromium-shell or firefox: the loader client keeps no browser between loads`},
		{base + "client: loader\nartifacts: {netlog: true}\n", `artifacts: {netlog: true} needs client chromium, chromium-shell or firefox: the loader client is no browser and keeps no net log`},
		{base + "browser: warm\nartifacts: {netlog: true}\n", `artifacts: {netlog: true} needs browser fresh`},
		{base + "  clients: [chromium, loader]\nbrowser: warm\n", `browser warm needs client chromium, chromium-shell or firefox: the loader client keeps no browser between loads`},
		{base + "  clients: [chromium, safari]\n", `line 5: client "safari" is unknown`},
		{base + "  clients: [firefox, firefox]\n", `client "firefox" is already listed`},
		{base + "  clients: [chromium, firefox]\nclient: loader\n", `client "loader" and factors.clients are both given: list the clients under factors only`},
		{base + "replay: {max_unmatched: lots}\n", `replay: max_unmatched: "lots" is not a percentage`},
		{base + "replay: {max_unmatched: 120%}\n", `replay: max_unmatched: "120%" is outside 0 to 100 percent`},
		{base + "replay: {unmatched: 1%}\n", `unknown key "unmatched"`},
		{base + "browser: hot\n", `browser "hot" is unknown: use fresh`},
		{base + "  pages: [synthetic:1x1KB]\n", `mapping key "pages" already defined`},
		{base + "  protocols: []\n", "the list of protocol levels is empty"},
		{base + "  cache: []\n", "the list of cache levels is empty"},
		{base + "  visual: [on, maybe]\n", `line 5: visual "maybe" is unknown: use off or on`},
		{base + "  visual: on\nclient: loader\n", "visual on needs client chromium, chromium-shell or firefox: the loader client does not render pages"},
		{base + "  visual: {on: 1}\n", "line 5: cannot unmarshal"},
		{base + "  client_cpu: [1, none]\n", `client CPU "none" is neither "unlimited" nor a number of cores from 0.1 to 1024`},
		{base + "  client_cpu: [0.01]\n", `client CPU "0.01" is neither`},
		{base + "  client_cpu: [1, 1.0]\n", `client CPU "1.0" is already listed`},
		{base + "  client_cpu: [0.5]\nclient: loader\n", "client_cpu [0.5] needs client chromium, chromium-shell or firefox: the loader client runs inside quicbench's own process"},
		{base + "  corpus: {kind: web2023, pages: 3}\n", `corpus kind "web2023" is unknown: use web2024`},
		{base + "  corpus: {kind: web2024, pages: 0}\n", "corpus pages 0 is outside 1 to 100000"},
		{base + "  corpus: {kind: web2024, pages: 2, size: 3}\n", `unknown key "size"`},
		{"repetitions: 2\nfactors:\n  networks: [{rtt: 20ms}]\n  pages: [web2024:2]\n  corpus: {kind: web2024, pages: 2}\n", "page web2024:2 is both in factors.pages and in factors.corpus"},
		{base + "  corpus: {kind: web2024, pages: 2}\n  origins: [1, 4]\n", "pages have their own origins"},
		{"repetitions: 2\nfactors:\n  networks: [{rtt: 20ms}]\n  pages: [\"archive:sites/a\"]\n  servers: [go, nginx]\n", "servers [go nginx]: nginx replays no archive pages (their recorded statuses, headers and queries): use go or caddy"},
		{"repetitions: 2\nfactors:\n  networks: [{rtt: 20ms}]\n  pages: [\"archive:sites/a\"]\n  origins: [2]\n", "pages have their own origins"},
		{"repetitions: 2\nfactors:\n  networks: [{rtt: 20ms}]\n  pages: [synthetic:2x10KB+wait50ms]\n  servers: [nginx]\n", "a page with a server wait (+wait) needs server go and quic quic-go"},
		{"repetitions: 2\nfactors:\n  networks: [{rtt: 20ms}]\n  pages: [synthetic:2x10KB+wait50ms]\n  protocols: [h2, h3]\n  quic: [quinn+cubic]\n", "needs server go and quic quic-go"},
		{"repetitions: 2\nfactors:\n  networks: [{rtt: 20ms}]\n  pages: [\"archive:\"]\n", "is not a usable path"},
		{"repetitions: 1\nfactors:\n  networks: [{rtt: 5ms}]\n  pages: [synthetic:10000x1GiB]\n", "above the limit of 256 MiB"},
		{"repetitions: 100000\nfactors:\n  networks: [{rtt: 5ms}, {rtt: 6ms}, {rtt: 7ms}, {rtt: 8ms}]\n  pages: [synthetic:1x1KB]\n", "the plan has 1200000 trials, above the limit of 1000000"},
	} {
		_, err := Parse([]byte(c.spec))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("spec %q: error %v, want one containing %q", c.spec, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("spec %q: error %q spans lines", c.spec, err)
		}
	}
}

// TestViewportSetting: a spec's viewport is every load's (desktop: the
// default's), unset each page's own; a wrong one says how to write it.
func TestViewportSetting(t *testing.T) {
	phone := factor.Viewport{Width: 411, Height: 731, Scale: 2.625, Mobile: true}
	for text, want := range map[string]factor.Viewport{"": phone, "viewport: desktop\n": {}, "viewport: 800x600@2\n": {Width: 800, Height: 600, Scale: 2}} {
		s, err := Parse([]byte("repetitions: 1\n" + text + "factors: {networks: [{rtt: 20ms}], pages: [synthetic:1x1KB]}\n"))
		if err != nil {
			t.Fatal(err)
		}
		if got := s.ViewportOr(phone); got != want {
			t.Errorf("%q: a page of its own %v loads at %v, want %v", text, phone, got, want)
		}
	}
	_, err := Parse([]byte("repetitions: 1\nviewport: 411\nfactors: {networks: [{rtt: 20ms}], pages: [synthetic:1x1KB]}\n"))
	if err == nil || !strings.Contains(err.Error(), "WIDTHxHEIGHT[@SCALE][,mobile]") {
		t.Errorf("a viewport without a height: %v", err)
	}
}

// TestFormatRoundTrips: a spec written by Format reads back as the same
// spec, so that compare's flags and a spec file meet in one parser.
func TestFormatRoundTrips(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "lte.down")
	if err := os.WriteFile(trace, []byte("1\n1\n2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{full, "repetitions: 1\nfactors:\n  networks: [{rtt: 20ms, gilbert: \"1,30\", drop-head: true, down-trace: " + trace + "}]\n  pages: [synthetic:1x1KB]\n",
		"repetitions: 1\nviewport: 411x731@2.625,mobile\nfactors: {networks: [{rtt: 20ms}], pages: [synthetic:1x1KB]}\n",
		"repetitions: 1\nviewport: desktop\nfactors: {networks: [{rtt: 20ms}], pages: [synthetic:1x1KB]}\n",
		"repetitions: 1\nlive: {resolve: [www.example.test=203.0.113.10, static.example.test], allow_private: true, max_loads: 30, ca: ca.pem, user_agent_suffix: \"acme-bench (ops@example.test)\", unverified: fail}\nfactors: {networks: [{rtt: 20ms}], pages: [\"url:https://www.example.test/shop\"]}\n"} {
		a, err := Parse([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		a.Name = "x: y # not a comment"
		out, err := Format(a)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Parse(out)
		if err != nil {
			t.Fatalf("Format wrote a spec that does not parse: %v\n%s", err, out)
		}
		a.Source, a.SHA256, b.Source, b.SHA256 = nil, "", nil, ""
		if diff := cmp.Diff(a, b, cmp.AllowUnexported(netconf.Network{}), cmpopts.EquateComparable(netip.Addr{})); diff != "" {
			t.Errorf("round trip differs (-parsed +formatted):\n%s\n%s", diff, out)
		}
	}
}

// TestLiveRules: a live page's rules read into typed values, and what a
// live page cannot do is refused with the fix.
func TestLiveRules(t *testing.T) {
	s, err := Parse([]byte("repetitions: 1\nlive: {resolve: [WWW.example.test=203.0.113.10, static.example.test], max_loads: 30}\nfactors: {networks: [{rtt: 20ms}], pages: [\"url:https://www.example.test/\"]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := s.Live.Resolve["www.example.test"]; !ok || len(a) != 1 || a[0].String() != "203.0.113.10" || !s.HasLive() || s.Live.MaxLoads != 30 {
		t.Errorf("live %+v", s.Live)
	}
	if a, ok := s.Live.Resolve["static.example.test"]; !ok || len(a) != 0 {
		t.Errorf("a host alone: %v, %v", a, ok)
	}
	const page = "factors: {networks: [{rtt: 20ms}], pages: [\"url:https://www.example.test/\"]"
	for text, want := range map[string]string{
		"repetitions: 1\nlive: {resolve: [a=b]}\n" + page + "}\n":                                                                       "is no IP address",
		"repetitions: 1\nlive: {max_loads: -1}\n" + page + "}\n":                                                                        "max_loads -1 is outside",
		"repetitions: 1\nartifacts: {qlog: true}\n" + page + "}\n":                                                                      "leave qlog out",
		"repetitions: 1\n" + page + ", servers: [nginx]}\n":                                                                             "leave servers out",
		"repetitions: 1\n" + page + ", clients: [loader]}\n":                                                                            "client loader cannot load a live page",
		"repetitions: 1\n" + page + ", visits: [first, repeat]}\n":                                                                      "leave visits out",
		"repetitions: 1\nfactors: {networks: [{name: far, rtt: 20ms, path: \"1=50ms\"}], pages: [\"url:https://www.example.test/\"]}\n": "network far: per-server paths lead to the testbed",
		"repetitions: 1\nlive: {max_loads: 3}\nfactors: {networks: [{rtt: 20ms}], pages: [synthetic:1x1KB]}\n":                          "no page is a live one",
	} {
		if _, err := Parse([]byte(text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}

// TestImportsNoRuntimePackage: spec and plan read files and expand grids;
// of quicbench's packages they may import only the vocabulary and the
// readers below it (an allow-list: a new import has to be added here, on
// purpose), never what builds namespaces, servers, emulators or browsers.
// site and site/gen are the page model and the web2024 generator, which
// the plan's duration model reads a generated page's shape from.
func TestImportsNoRuntimePackage(t *testing.T) {
	allowed := []string{"units", "factor", "link", "live", "presets", "netconf", "safefs", "trust", "spec", "plan", "site", "site/gen"}
	for _, pkg := range []string{".", "../plan"} {
		testenv.DependsOnlyOn(t, pkg, allowed, nil)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(full))
	f.Add([]byte("repetitions: 1\nfactors: {networks: [x], pages: [y]}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("a multi-line error: %q", err)
			}
			return
		}
		if len(s.Networks) == 0 || len(s.Pages) == 0 || len(s.Protocols()) == 0 || s.Repetitions < 1 {
			t.Errorf("accepted a spec without levels: %+v", s)
		}
		if s.Trials() > MaxTrials {
			t.Errorf("accepted a plan of %d trials", s.Trials())
		}
		for _, p := range s.Pages {
			if p.ObjectsBytes() > factor.MaxPageBytes {
				t.Errorf("accepted page %v", p)
			}
		}
		if name := s.DirName(); strings.ContainsAny(name, "/\x00") || strings.HasPrefix(name, ".") {
			t.Errorf("name %q gives the directory name %q", s.Name, name)
		}
	})
}

// TestExamplesParse keeps examples/ valid.
func TestExamplesParse(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.yaml")
	if err != nil || len(files) < 10 {
		t.Fatalf("%d examples, %v", len(files), err)
	}
	for _, f := range files {
		s, err := Load(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		// A quick example slices a paper for quicbench reproduce, whose
		// claims pool many settings' loads: 3 a setting is the least that
		// gives each setting's mean a spread to resample (the report's
		// per-setting verdict at α = 0.01 needs 5).
		if strings.HasSuffix(f, "-quick.yaml") && s.Repetitions < 3 {
			t.Errorf("%s: %d repetitions, too few to resample a setting's loads", f, s.Repetitions)
		}
	}
}

// TestLoadResolvesTracesBesideTheSpec: a relative trace path is relative
// to the spec file, not the working directory, and the network's name
// (hence its trial IDs) is the same as written.
func TestLoadResolvesTracesBesideTheSpec(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "traces"), 0o755)
	os.WriteFile(filepath.Join(dir, "traces", "lte.down"), []byte("1\n2\n"), 0o644)
	text := "repetitions: 1\nfactors:\n  networks: [{rtt: 20ms, down-trace: traces/lte.down}]\n  pages: [synthetic:1x1KB]\n"
	path := filepath.Join(dir, "study.yaml")
	os.WriteFile(path, []byte(text), 0o644)
	t.Chdir(t.TempDir()) // elsewhere: the trace is not relative to here
	s, err := Load(path)
	if err != nil {
		t.Fatalf("Load from another directory: %v", err)
	}
	n := s.Networks[0]
	if n.Down.Trace == nil || n.Down.Trace.Name != filepath.Join(dir, "traces", "lte.down") || n.Name != "rtt20ms-downtracetraces/lte.down" {
		t.Errorf("network %q with trace %+v", n.Name, n.Down.Trace)
	}
}

// TestLoadRefusesWhatIsNotARegularFile: a FIFO (as spec or as trace) is
// refused at once instead of blocking.
func TestLoadRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(fifo); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Load(FIFO): %v", err)
	}
	path := filepath.Join(dir, "s.yaml")
	os.WriteFile(path, []byte("repetitions: 1\nfactors:\n  networks: [{down-trace: fifo}]\n  pages: [synthetic:1x1KB]\n"), 0o644)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "not a regular file (a FIFO)") {
		t.Errorf("a FIFO as trace: %v", err)
	}
}

func TestDirNameStaysInItsDirectory(t *testing.T) {
	for name, want := range map[string]string{"../../x": "-..-x", "study 1": "study-1", ".hidden": "hidden", "": "run", "wolsing2019-quick": "wolsing2019-quick"} {
		if got := (&Spec{Name: name}).DirName(); got != want || strings.Contains(got, "/") {
			t.Errorf("DirName(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestOneLevelNeedsNoList: `visual: on` is `visual: [on]`, for every
// factor; a key without a value keeps the default.
func TestOneLevelNeedsNoList(t *testing.T) {
	s, err := Parse([]byte("repetitions: 1\nfactors:\n  networks: [{rtt: 20ms}]\n  pages: synthetic:1x1KB\n  protocols: h3\n  visual: on\n  cache:\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Pages) != 1 || !slices.Equal(s.LevelsOf(factor.IDProtocol), []string{"h3"}) ||
		!slices.Equal(s.LevelsOf(factor.IDVisual), []string{"on"}) || !slices.Equal(s.LevelsOf(factor.IDCache), []string{"off"}) {
		t.Errorf("pages %v, protocols %v, visual %v, cache %v", s.Pages, s.Protocols(), s.LevelsOf(factor.IDVisual), s.LevelsOf(factor.IDCache))
	}
}

// TestCorpusAddsItsPages: factors.corpus appends its first pages to the
// pages listed.
func TestCorpusAddsItsPages(t *testing.T) {
	s, err := Parse([]byte("repetitions: 1\nfactors:\n  networks: [{rtt: 20ms}]\n  pages: [synthetic:1x1KB]\n  corpus: {kind: web2024, pages: 3, seed: 2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range s.Pages {
		names = append(names, p.String())
	}
	if got := strings.Join(names, " "); got != "synthetic:1x1KB web2024:1@2 web2024:2@2 web2024:3@2" {
		t.Errorf("pages %s", got)
	}
	out, err := Format(s)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(out)
	if err != nil || len(again.Pages) != 4 || again.Pages[3] != s.Pages[3] {
		t.Errorf("formatted and parsed again: %v, %v", again.Pages, err)
	}
}

// TestArchivePagesAreRelativeToTheSpec: a relative archive directory is
// found beside the spec file, and the page keeps the path as written, so
// that trial IDs do not depend on where the spec is.
func TestArchivePagesAreRelativeToTheSpec(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	text := "repetitions: 1\nfactors:\n  networks: [{rtt: 20ms}]\n  pages: [\"archive:sites/news\", \"archive:/abs/site\"]\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Pages[0].String(); got != "archive:sites/news" {
		t.Errorf("page %s, want it as written", got)
	}
	if got := s.ArchiveDir(s.Pages[0]); got != filepath.Join(dir, "sites/news") {
		t.Errorf("relative archive at %s", got)
	}
	if got := s.ArchiveDir(s.Pages[1]); got != "/abs/site" {
		t.Errorf("absolute archive at %s", got)
	}
}

// TestRepetitionsUntil: the adaptive form parses, round-trips through
// Format, and bad rules are one-line errors.
func TestRepetitionsUntilSpec(t *testing.T) {
	base := "factors:\n  networks: [{rtt: 20ms}]\n  pages: [synthetic:1x1KB]\n"
	s, err := Parse([]byte("repetitions: {min: 10, max: 100, until: {ci_ratio: 0.03}}\n" + base))
	if err != nil {
		t.Fatal(err)
	}
	if s.Repetitions != 100 || s.Until == nil || s.Until.Min != 10 || s.Until.CIRatio != 0.03 {
		t.Fatalf("repetitions %d, until %+v", s.Repetitions, s.Until)
	}
	out, err := Format(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(out)
	if err != nil || back.Until == nil || *back.Until != *s.Until || back.Repetitions != 100 {
		t.Errorf("round trip: %v, %+v\n%s", err, back, out)
	}
	for text, want := range map[string]string{
		"repetitions: {min: 20, max: 10, until: {ci_ratio: 0.03}}\n":              "min 20 is outside 2 to max 10",
		"repetitions: {min: 5, max: 10, until: {ci_ratio: 0}}\n":                  "ci_ratio 0 is outside",
		"repetitions: {min: 5, max: 10, until: {ci: 0.03}}\n":                     `unknown key "ci"`,
		"repetitions: {min: 5, max: 10, upto: 3}\n":                               `unknown key "upto"`,
		"repetitions: [1, 2]\n":                                                   "repetitions is a number, or a mapping",
		"repetitions: {min: 5, max: 10, until: {ci_ratio: 0.03}}\nprotocols: x\n": "unknown key",
	} {
		_, err := Parse([]byte(text + base))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", text, err, want)
		}
	}
	one := "repetitions: {min: 5, max: 10, until: {ci_ratio: 0.03}}\nfactors:\n  networks: [{rtt: 20ms}]\n  pages: [synthetic:1x1KB]\n  protocols: [h3]\n"
	if _, err := Parse([]byte(one)); err == nil || !strings.Contains(err.Error(), "needs two protocols") {
		t.Errorf("one protocol: %v", err)
	}
}

// TestClientCPUIsACellFactor: client_cpu levels multiply the cells, are
// canonical, and a spec without them has the unlimited client only.
func TestClientCPUIsACellFactor(t *testing.T) {
	base := "repetitions: 2\nfactors:\n  networks: [{rtt: 20ms}]\n  pages: [synthetic:1x1KB]\n"
	s, err := Parse([]byte(base + "  client_cpu: [unlimited, 1, 0.50]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.LevelsOf(factor.IDClientCPU); !slices.Equal(got, []string{"unlimited", "1", "0.5"}) || !s.CapsClientCPU() {
		t.Errorf("levels %v, caps %v", got, s.CapsClientCPU())
	}
	plain, err := Parse([]byte(base))
	if err != nil {
		t.Fatal(err)
	}
	if got := plain.LevelsOf(factor.IDClientCPU); !slices.Equal(got, []string{"unlimited"}) || plain.CapsClientCPU() || s.Trials() != 3*plain.Trials() {
		t.Errorf("without client_cpu: levels %v, caps %v; trials %d and %d", got, plain.CapsClientCPU(), s.Trials(), plain.Trials())
	}
}
