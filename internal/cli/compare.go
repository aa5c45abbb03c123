package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/quicbench/quicbench/internal/cpuuse"
	"github.com/quicbench/quicbench/internal/experiment"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/live"
	"github.com/quicbench/quicbench/internal/netconf"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/spec"
	"github.com/quicbench/quicbench/internal/trust"
	"github.com/quicbench/quicbench/internal/units"
)

// compareOptions are compare's flags, parsed and validated: a one-cell
// spec and where to run it.
type compareOptions struct {
	spec     *spec.Spec
	dir      string
	binaries map[factor.Client]string
	json     bool
	verbose  bool
	// details prints every table before the short answer (--details).
	details  bool
	waitLock time.Duration
	// noLanes leaves the loads unsampled (--lanes=false).
	noLanes bool
	// cpuNote says why the client has the cores it has when --client-cpu
	// was left to auto; "" otherwise.
	cpuNote string
}

// Defaults of compare: the demo scenario.
const (
	defaultRTT      = "100ms"
	defaultLoss     = "1"
	defaultDown     = "10mbit"
	defaultUp       = "5mbit"
	defaultQueue    = "200ms"
	defaultPage     = "synthetic:32x10KB"
	defaultRuns     = 10 // a paired test at α = 0.01 needs 8 (stats.PairsToReach)
	maxRuns         = 10_000
	compareHelpHint = "see quicbench compare -h"
)

// defaultMinRuns is the rounds compare --until makes before its first look.
const defaultMinRuns = 10

// compareFlags are compare's flags as parsed, before validation.
type compareFlags struct {
	net                                                     *networkFlags
	page, protos, stack, server, visit, cache, out          *string
	discovery, dns                                          *string
	quicServer, quicCC                                      *string
	clientName, browser, clientCPU                          *string
	binaries                                                clientBinaries
	origins, runs, retries                                  *int
	seed                                                    *uint64
	timeout, waitLock                                       *time.Duration
	until                                                   *float64
	jsonOut, verbose, capture, qlog, check, visual, pairing *bool
	netLog, har, lanes, details                             *bool
	deterministic                                           *optionalBool
	maxUnmatched, viewport                                  *string
	// live are the flags of a live page (--page url:…).
	resolve      repeated
	allowPrivate *bool
	maxLoads     *int
	liveCA       *string
	agentSuffix  *string
	unverified   *string
	// cpuNote is why --client-cpu auto chose the client's cores
	// (resolvedClientCPU); "" when the flag named them.
	cpuNote string
}

// optionalBool is a boolean flag that also knows whether it was given.
type optionalBool struct{ value *bool }

// String is the value, or "" when the flag was not given.
func (o *optionalBool) String() string {
	if o == nil || o.value == nil {
		return ""
	}
	return strconv.FormatBool(*o.value)
}

// Set parses the flag's value as flag.Bool does.
func (o *optionalBool) Set(text string) error {
	v, err := strconv.ParseBool(text)
	if err != nil {
		return errors.New("give true or false")
	}
	o.value = &v
	return nil
}

// IsBoolFlag lets the flag stand alone (--deterministic).
func (o *optionalBool) IsBoolFlag() bool { return true }

func newCompareFlags(fs *flag.FlagSet) *compareFlags {
	protocols := factor.Protocols().Values()
	def := func(id factor.ID) string { return factor.Of(id).Default }
	f := &compareFlags{
		net:           addNetworkFlags(fs, networkDefaults{rtt: defaultRTT, loss: defaultLoss, down: defaultDown, up: defaultUp, queue: defaultQueue}),
		page:          fs.String("page", defaultPage, "the `page`: "+factor.PageKinds().Usage()),
		protos:        fs.String("protocols", joinLevels(protocols), "comma-separated `list` of "+factor.Protocols().Names()),
		stack:         fs.String("stack", def(factor.IDStack), "the servers' TCP `stack` for h1 and h2: "+factor.Stacks().Usage()+" (quicbench stacks)"),
		server:        fs.String("server", def(factor.IDServer), "server `stack` for h1 and h2: "+factor.Servers().Usage()),
		quicServer:    fs.String("quic-server", string(factor.QUIC(def(factor.IDQUIC)).Server()), "the `server` for h3: "+factor.QUICServers().Usage()+" (quicbench stacks)"),
		quicCC:        fs.String("quic-cc", "", "the h3 server's congestion `control`: "+factor.Controllers().Usage()+"; each server's, its default first: "+factor.ControllersUsage()),
		origins:       fs.Int("origins", 1, "spread the page's objects round-robin over this `number` of origins (host names), each on its own server address; server N is origin N for --path"),
		until:         fs.Float64("until", 0, "look after every round from the 10th (fewer if --runs is smaller) and stop once the h3/h2 ratio's repeated 99 % interval (group-sequential, O'Brien–Fleming) excludes 1, or once its 95 % CI is within ± this `fraction` (such as 0.03); --runs is then the most, the budget"),
		runs:          fs.Int("runs", defaultRuns, "`rounds`: each loads the page once per protocol, in shuffled order"),
		retries:       fs.Int("retries", 0, "more `attempts` for a failed load (a failed load is recorded with its attempts either way)"),
		seed:          fs.Uint64("seed", spec.DefaultSeed, "`seed` of the loss decisions, page bytes and load order (the same as a spec's seed)"),
		jsonOut:       fs.Bool("json", false, "print the summary, with every load, as JSON instead of a table"),
		out:           fs.String("out", "", "run `directory` for results.db, the spec and the certificates (default runs/compare-<time>)"),
		timeout:       fs.Duration("timeout", spec.DefaultTimeout, "`limit` for one page load, browser start included"),
		waitLock:      fs.Duration("wait-lock", experiment.DefaultWaitLock, "wait at most this `long` while another run measures on this machine (it is named); 0 waits as long as it takes"),
		binaries:      newClientBinaries(fs),
		browser:       fs.String("browser", def(factor.IDBrowser), "browser `mode` (Chromium, Firefox): "+factor.Browsers().Usage()),
		clientName:    fs.String("client", def(factor.IDClient), "page `loader`: "+factor.Clients().Usage()),
		clientCPU:     fs.String("client-cpu", clientCPUAuto, "the `cores` the browser may use (such as 1 or 0.5, or unlimited), capped by a cgroup as a slower device's CPU would be, leaving the rest to the emulator and servers; auto: 1 on a machine of fewer than 4 cores (where an unlimited browser waits for a CPU behind the emulator and servers) when this run can cap the browser, else unlimited"),
		verbose:       fs.Bool("verbose", false, "log what the run does to stderr, and list each load as it ends (on a terminal the progress is one line otherwise)"),
		details:       fs.Bool("details", false, "print every table (protocols, paints, stopping, the loads' parts, CPU, links, stacks, netcheck) and the answer in full before the short answer"),
		capture:       fs.Bool("pcap", false, "record each load's client-side packets to artifacts/<trial>-a<attempt>.pcap in the run directory (Wireshark reads them); adds a copy per packet"),
		netLog:        fs.Bool("netlog", false, "keep the browser's own network log of each load in artifacts/<trial>-a<attempt>-netlog/: Chromium's NetLog (netlog-viewer reads it) or Firefox's HTTP log; the logging costs CPU during the load, and needs --browser fresh"),
		har:           fs.Bool("har", false, "keep each load's HAR in artifacts/<trial>-a<attempt>.har in the run directory: the report's waterfalls then show each request's phases (DNS, connect, TLS or QUIC's handshake, wait, receive) and its connection; the browser's network events cost a little CPU during the load"),
		qlog:          fs.Bool("qlog", false, "record the server's qlog of each h3 load to artifacts/<trial>-a<attempt>-qlog/ in the run directory (qvis reads them)"),
		visit:         fs.String("visit", def(factor.IDVisit), "`kind` of visit measured: "+factor.Visits().Usage()),
		discovery:     fs.String("discovery", def(factor.IDDiscovery), "`rule` by which the browser learns of h3: "+factor.Discoveries().Usage()),
		dns:           fs.String("dns", def(factor.IDDNS), "`how` the browser finds the hosts: "+factor.DNSLevels().Usage()),
		cache:         fs.String("cache", def(factor.IDCache), "`on` or off: "+factor.Caches().Usage()),
		visual:        fs.Bool("visual", false, "capture each load's frames in Chromium for visual metrics (First and Last Visual Change, Speed Index, Visually Complete 85/95/99) into artifacts/<trial>-a<attempt>-frames/; the capture costs CPU during the load and 2 s after it"),
		deterministic: optionalBoolFlag(fs, "deterministic", "make Date and Math.random in the page's scripts the same on every load, as WebPageReplay does, so that a recorded page requests the same URLs each time: the clock starts at the recording's time; default on for archive pages, off for generated ones (--deterministic=false turns it off)"),
		viewport:      fs.String("viewport", "", "the `viewport` of every load, WIDTHxHEIGHT[@SCALE][,mobile] in CSS pixels (such as 411x731@2.625,mobile), or desktop (1366x768@1); default: an archive page's own (the one its recording implies), else desktop"),
		maxUnmatched:  fs.String("max-unmatched", "5%", "the `share` of an archive page's requests that may match nothing in the recording before its load fails; the browser's own requests (favicon, manifest) and those an earlier load found the recording lacks are not counted"),
		pairing:       fs.Bool("pairing", true, "start the protocols' loads of each round from the same link state (the same loss and jitter draws), and analyse them as pairs; --pairing=false draws each load's losses afresh"),
		lanes:         fs.Bool("lanes", true, "sample each load's CPU (browser, servers, quicbench) and the bytes the link delivered each way every 100 ms, for the lanes under the report's waterfalls (results.db's samples); --lanes=false leaves the loads unwatched (the sampling wakes quicbench's process ten times a second)"),
		check:         fs.Bool("netcheck", true, "measure the network first (about 10 s) and store the result in the run directory; --netcheck=false skips it"),
		allowPrivate:  fs.Bool("allow-private", false, "let a live page's hosts resolve to private, loopback or link-local addresses (a staging server on your own network); refused by default, so that a mistyped URL cannot aim a benchmark at an internal service"),
		maxLoads:      fs.Int("max-loads", 0, "stop a live page's run after this `number` of loads (retries included), its loads so far kept; 0: no cap. Live loads are spaced one second apart per origin either way"),
		agentSuffix:   fs.String("user-agent-suffix", "", "`text` that ends the browser's User-Agent on a live page's loads, so that the site's operators can tell them from their users' (default \""+live.DefaultAgentSuffix+"\")"),
		unverified:    fs.String("unverified", spec.UnverifiedExclude, "`rule` for a live load's requests that cannot be verified (to hosts not pinned, which are not sent, or over another protocol to a host that does not offer the one asked for, such as a third party without HTTP/3): exclude leaves them out of the verification, counted in live_excluded; fail fails the load"),
		liveCA:        fs.String("ca", "", "PEM `file` of a staging site's certificate authority: a live page's chains signed by it are accepted"),
	}
	fs.Var(&f.resolve, "resolve", "`host=addr[,addr]`: pin a live page's host to an address (a staging server), or host alone: another host the page loads from, resolved by this machine; repeat for more hosts. A live load reaches only its page's host and these")
	return f
}

// repeated is a flag that may be given many times, each value kept.
type repeated []string

// String is the values, comma-separated.
func (r *repeated) String() string { return strings.Join(*r, ",") }

// Set keeps one more value.
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// optionalBoolFlag defines a boolean flag whose absence is nil.
func optionalBoolFlag(fs *flag.FlagSet, name, usage string) *optionalBool {
	o := &optionalBool{}
	fs.Var(o, name, usage)
	return o
}

// parseCompare parses compare's arguments into a one-cell spec. now names
// the default run directory. Every error is one line naming the flag and
// what is allowed.
func parseCompare(args []string, now time.Time, helpOut io.Writer) (*compareOptions, error) {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := newCompareFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(helpOut, "Usage: quicbench compare [flags]\n\nLoads one page over each protocol behind an emulated link and compares them: a spec of one\nnetwork and one page, run into DIR/results.db like quicbench run (quicbench report DIR and\nquicbench export DIR read it).\n\nFlags:")
			fs.SetOutput(helpOut)
			fs.PrintDefaults()
			return nil, err
		}
		return nil, fmt.Errorf("%v (%s)", err, compareHelpHint)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (%s)", fs.Arg(0), compareHelpHint)
	}
	if err := trust.CheckUserPaths(flagPaths(fs)...); err != nil {
		return nil, err
	}
	s, err := f.spec()
	if err != nil {
		return nil, err
	}
	dir := *f.out
	if dir == "" {
		dir = filepath.Join("runs", "compare-"+now.Format("20060102-150405"))
	}
	if *f.waitLock < 0 {
		return nil, fmt.Errorf("--wait-lock %v is negative: give a duration such as 10m, or 0 to wait as long as it takes (%s)", *f.waitLock, compareHelpHint)
	}
	return &compareOptions{spec: s, dir: dir, binaries: f.binaries.values(), json: *f.jsonOut, verbose: *f.verbose, details: *f.details, waitLock: experiment.WaitLockOf(*f.waitLock), noLanes: !*f.lanes, cpuNote: f.cpuNote}, nil
}

// spec turns the flags into a spec, through the spec file's own parser.
func (f *compareFlags) spec() (*spec.Spec, error) {
	net, err := f.net.resolve()
	if err != nil {
		return nil, err
	}
	s := &spec.Spec{Name: "compare", Seed: *f.seed, Repetitions: *f.runs, Retries: *f.retries, Timeout: *f.timeout,
		Netcheck: *f.check, Deterministic: f.deterministic.value, Pairing: *f.pairing, Artifacts: spec.Artifacts{Pcap: *f.capture, Qlog: *f.qlog, NetLog: *f.netLog, HAR: *f.har},
		Networks: []*netconf.Network{net}, Levels: map[factor.ID][]string{}}
	if err := f.levels(s); err != nil {
		return nil, err
	}
	for _, p := range []error{
		wrap("--runs", func() error { return inRange("runs", *f.runs, 1, maxRuns) }),
		wrap("--retries", func() error { return inRange("retries", *f.retries, 0, spec.MaxRetries) }),
		wrap("--timeout", func() error { return positive(*f.timeout) }),
		net.CheckServers(*f.origins),
	} {
		if p != nil {
			return nil, p
		}
	}
	if s.MaxUnmatched, err = units.ParsePercent(*f.maxUnmatched); err != nil {
		return nil, fmt.Errorf("--max-unmatched: %w", err)
	}
	if *f.viewport != "" {
		v, err := spec.ParseViewport(*f.viewport)
		if err != nil {
			return nil, fmt.Errorf("--viewport: %w", err)
		}
		s.Viewport = &v
	}
	if *f.until != 0 {
		s.Until = &spec.Until{Min: min(defaultMinRuns, *f.runs), CIRatio: *f.until}
	}
	if err := f.liveRules(s); err != nil {
		return nil, err
	}
	text, err := spec.Format(s)
	if err != nil {
		return nil, err
	}
	return spec.Parse(text)
}

// liveRules puts the live page's flags into s, each error naming its
// flag.
func (f *compareFlags) liveRules(s *spec.Spec) error {
	s.Live = spec.Live{Resolve: live.Overrides{}, AllowPrivate: *f.allowPrivate, MaxLoads: *f.maxLoads, CA: *f.liveCA, AgentSuffix: *f.agentSuffix}
	if s.Live.AgentSuffix != "" {
		if err := live.CheckAgentSuffix(s.Live.AgentSuffix); err != nil {
			return err
		}
	}
	var err error
	if s.Live.FailUnverified, err = spec.ParseUnverified(*f.unverified); err != nil {
		return fmt.Errorf("--%w", err)
	}
	for _, r := range f.resolve {
		if err := s.Live.Resolve.ParseResolve(r); err != nil {
			return err
		}
	}
	if err := inRange("max-loads", *f.maxLoads, 0, spec.MaxLiveLoads); err != nil {
		return fmt.Errorf("--max-loads: %w", err)
	}
	if s.Live.CA != "" {
		abs, err := filepath.Abs(s.Live.CA)
		if err != nil {
			return fmt.Errorf("--ca: %w", err)
		}
		s.Live.CA = abs
	}
	return nil
}

// levels parses the flags that give a factor its one level (its
// levels, for --protocols) into s, each error naming its flag.
func (f *compareFlags) levels(s *spec.Spec) error {
	page, err := factor.ParsePage(*f.page)
	if err != nil {
		return fmt.Errorf("--page: %w", err)
	}
	s.Pages = []factor.Page{page}
	protocols, err := factor.ParseList(factor.Protocols(), *f.protos)
	if err != nil {
		return fmt.Errorf("--protocols: %w", err)
	}
	for _, p := range protocols {
		s.Levels[factor.IDProtocol] = append(s.Levels[factor.IDProtocol], string(p))
	}
	cc, err := f.controller()
	if err != nil {
		return fmt.Errorf("--quic-cc: %w", err)
	}
	quic, err := f.quicStack(cc)
	if err != nil {
		return fmt.Errorf("--quic-server: %w", err)
	}
	for _, l := range []struct {
		flag, text string
		id         factor.ID
	}{
		{"--stack", *f.stack, factor.IDStack}, {"--server", *f.server, factor.IDServer}, {"--quic-server", string(quic), factor.IDQUIC},
		{"--visit", *f.visit, factor.IDVisit}, {"--discovery", *f.discovery, factor.IDDiscovery}, {"--dns", *f.dns, factor.IDDNS}, {"--cache", *f.cache, factor.IDCache}, {"--client", *f.clientName, factor.IDClient},
		{"--browser", *f.browser, factor.IDBrowser}, {"--origins", strconv.Itoa(*f.origins), factor.IDOrigins},
		{"--visual", string(factor.VisualOf(*f.visual)), factor.IDVisual}, {"--client-cpu", f.resolvedClientCPU(runtime.NumCPU(), func() error { return cpuuse.CanCap(nil) }), factor.IDClientCPU},
	} {
		if l.id == factor.IDClient && strings.Contains(l.text, ",") {
			return fmt.Errorf("--client takes one client: to compare clients, list them in a spec (factors: {clients: [%.100s]}) and run it with quicbench run",
				strings.Join(strings.Split(l.text, ","), ", "))
		}
		level, err := factor.Of(l.id).Parse(l.text)
		if err != nil {
			return fmt.Errorf("%s: %w", l.flag, err)
		}
		s.Levels[l.id] = []string{level}
	}
	return nil
}

// clientCPUAuto is --client-cpu's default: one core for the client on a
// machine of fewer than autoCPUCores, else unlimited.
const clientCPUAuto = "auto"

// autoCPUCores is the fewest cores on which --client-cpu auto leaves the
// browser unlimited: on two, an unlimited browser's threads waited for a
// CPU 11–17 % of each demo load and every load of three real sites was
// CPU-bound (BENCHMARKS.md).
const autoCPUCores = 4

// resolvedClientCPU is --client-cpu's level on a machine of cores CPUs,
// auto resolved, and notes in f.cpuNote why auto chose it. canCap says
// whether this run can cap the browser's CPU (cpuuse.CanCap): auto picks
// only what the run can enforce.
func (f *compareFlags) resolvedClientCPU(cores int, canCap func() error) string {
	if *f.clientCPU != clientCPUAuto {
		return *f.clientCPU
	}
	client, err := factor.Of(factor.IDClient).Parse(*f.clientName)
	if err != nil || !factor.Client(client).Capabilities().CPUCap { // the built-in loader: no cap to set (--client reports a bad name)
		return string(factor.ClientCPUUnlimited)
	}
	if cores < autoCPUCores {
		if err := canCap(); err != nil {
			f.cpuNote = fmt.Sprintf("client CPU unlimited: on a machine of fewer than %d cores (this one has %d) it would be 1, but this run cannot cap the browser (%v); run as root on a host with the cgroup cpu controller for the cap", autoCPUCores, cores, err)
			return string(factor.ClientCPUUnlimited)
		}
		f.cpuNote = fmt.Sprintf("client CPU 1 by default on a machine of fewer than %d cores (this one has %d): --client-cpu unlimited lifts it", autoCPUCores, cores)
		return "1"
	}
	f.cpuNote = fmt.Sprintf("client CPU unlimited by default on a machine of %d cores or more (this one has %d)", autoCPUCores, cores)
	return string(factor.ClientCPUUnlimited)
}

// controller is --quic-cc's controller, "" for the server's default.
func (f *compareFlags) controller() (factor.CC, error) {
	if *f.quicCC == "" {
		return "", nil
	}
	return factor.Controllers().Parse(*f.quicCC)
}

// quicStack is the QUIC stack of --quic-server with controller cc.
func (f *compareFlags) quicStack(cc factor.CC) (factor.QUIC, error) {
	server, err := factor.QUICServers().Parse(*f.quicServer)
	if err != nil {
		return "", err
	}
	return factor.QUICOf(server, cc)
}

// wrap runs check and names the flag in its error.
func wrap(flagName string, check func() error) error {
	if err := check(); err != nil {
		return fmt.Errorf("%s: %w", flagName, err)
	}
	return nil
}

func inRange(what string, v, lo, hi int) error {
	if v < lo || v > hi {
		return fmt.Errorf("%s %d is outside %d to %d", what, v, lo, hi)
	}
	return nil
}

func positive(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("%v must be positive, e.g. 60s", d)
	}
	return nil
}

func joinLevels[T ~string](levels []T) string {
	names := make([]string, len(levels))
	for i, l := range levels {
		names[i] = string(l)
	}
	return strings.Join(names, ",")
}

func runCompare(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseCompare(args, time.Now(), stdout)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err == nil {
		err = checkPrerequisites(ctx, o.spec, o.binaries, o.dir)
	}
	if err != nil {
		fmt.Fprintln(stderr, "quicbench compare:", err)
		return exitUsage
	}
	s := o.spec
	total := s.Repetitions * len(s.Protocols())
	fmt.Fprintln(stderr, header(s, o.cpuNote))
	progress := newLoadProgress(stderr, total, o.verbose)
	res, err := experiment.Run(ctx, experiment.RunConfig{Spec: s, Dir: o.dir, ClientBinaries: o.binaries, ReadBack: true, WaitLock: o.waitLock, NoLanes: o.noLanes,
		Facts: experiment.HostFacts(s.Clients(), o.binaries, Version), Log: newLogger(stderr, o.verbose),
		OnTrial: progress.update})
	progress.finish()
	if res == nil {
		return failedToStart(ctx, "compare", err, stderr)
	}
	unanswered, perr := printCompare(printable{stdout}, o, res)
	if perr != nil {
		fmt.Fprintln(stderr, "quicbench compare:", perr)
		return exitFailure
	}
	switch {
	case err != nil && ctx.Err() != nil:
		fmt.Fprintf(stderr, "quicbench compare: interrupted after %d of %d loads; they are kept in %s (continue with quicbench run %s --out %s --resume)\n",
			res.Done, total, filepath.Join(o.dir, results.FileName), filepath.Join(o.dir, "spec.yaml"), o.dir)
		return exitInterrupted
	case err != nil && isUserError(err):
		fmt.Fprintf(stderr, "quicbench compare: %v (%d completed loads are kept in %s)\n", err, res.Done, o.dir)
		return exitUsage
	case err != nil:
		fmt.Fprintf(stderr, "quicbench compare: %v; every completed load is kept: %scontinue with quicbench run %s --out %s --resume\n",
			err, freeSpace(err), filepath.Join(o.dir, "spec.yaml"), o.dir)
		return exitFailure
	case len(unanswered) > 0:
		fmt.Fprintf(stderr, "quicbench compare: no verified load over %s, so no answer: see the failures above (retry them with quicbench run %s --out %s --resume --retry-failed)\n",
			joinLevels(unanswered), filepath.Join(o.dir, "spec.yaml"), o.dir)
		return exitFailure
	}
	return exitOK
}

// checkPrerequisites says what is missing to run s: root, TUN, ip, what
// s's clients need (a browser at its binary, none for its default), and
// live pages' hosts that do not resolve or that the policy refuses.
func checkPrerequisites(ctx context.Context, s *spec.Spec, binaries map[factor.Client]string, dir string) error {
	if err := checkPrivileges(); err != nil {
		return err
	}
	if err := experiment.CheckRunDir(dir); err != nil {
		return err
	}
	if err := experiment.CheckServers(s); err != nil {
		return err
	}
	for _, c := range s.Clients() {
		if err := experiment.CheckClient(c, binaries[c]); err != nil {
			return err
		}
	}
	return experiment.CheckLive(ctx, s)
}

// clientBinaries are the flags that name the clients' programs, one per
// client kind that has one (client.Kind.Executable).
type clientBinaries map[factor.Client]*string

// newClientBinaries defines each client's flag on fs, such as --chromium.
func newClientBinaries(fs *flag.FlagSet) clientBinaries {
	b := clientBinaries{}
	for _, k := range experiment.Clients() {
		if e := k.Executable; e != nil {
			b[k.Client] = fs.String(e.Flag, e.Default, e.Name+" `binary`")
		}
	}
	return b
}

// values maps each client to its program.
func (b clientBinaries) values() map[factor.Client]string {
	out := map[factor.Client]string{}
	for c, path := range b {
		out[c] = *path
	}
	return out
}

// loadProgress shows each recorded load: on a terminal one line that
// updates in place (a failed load's line stays), elsewhere or when verbose
// a line per load.
type loadProgress struct {
	w            io.Writer
	total, width int
	inPlace      bool
	shown        bool
}

// clearLine returns a terminal's cursor to the start of its line and
// erases the line.
const clearLine = "\r\033[K"

func newLoadProgress(w io.Writer, total int, verbose bool) *loadProgress {
	p := &loadProgress{w: w, total: total}
	if f, ok := fileOf(w); ok && !verbose && term.IsTerminal(int(f.Fd())) {
		p.inPlace, p.width = true, 99
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 1 {
			p.width = cols - 1
		}
	}
	return p
}

// update shows the load pr recorded.
func (p *loadProgress) update(pr experiment.Progress) {
	line := loadLine(pr, p.total)
	if !p.inPlace {
		fmt.Fprintln(printable{p.w}, line)
		return
	}
	io.WriteString(p.w, clearLine)
	if pr.Trial.Status != results.StatusOK {
		fmt.Fprintln(printable{p.w}, line)
	}
	line = fmt.Sprintf("load %d/%d, %d failed, about %s left: %s", pr.Done, p.total, pr.Failed, pr.ETA.Round(time.Second), strings.TrimSpace(line[strings.Index(line, "round"):]))
	if r := []rune(line); len(r) > p.width {
		line = string(r[:p.width])
	}
	fmt.Fprint(printable{p.w}, line)
	p.shown = true
}

// finish erases the in-place line.
func (p *loadProgress) finish() {
	if p.inPlace && p.shown {
		io.WriteString(p.w, clearLine)
	}
}

// loadLine is the progress line of a recorded trial.
func loadLine(p experiment.Progress, total int) string {
	t := p.Trial
	status := "FAILED: " + t.Error
	if t.Status == results.StatusOK && t.PLT != nil {
		status = fmt.Sprintf("PLT %8.1f ms", *t.PLT)
		if t.SpeedIndex != nil {
			status += fmt.Sprintf("  Speed Index %6.0f  FVC %6.0f ms  LVC %6.0f ms", *t.SpeedIndex, *t.FVC, *t.LVC)
		}
	}
	return fmt.Sprintf("load %3d/%d  round %d  %s  %s", p.Done, total, t.Rep, t.Protocol, status)
}

// header describes the comparison in one line: its page and network, the
// level of every other factor but the protocol (an implicit one only when
// it is not its default), the runs, protocols and seed, and cpuNote (why
// the client has its cores, when --client-cpu chose) if given.
func header(s *spec.Spec, cpuNote string) string {
	var levels []string
	for _, f := range factor.Table() {
		if f.ID == factor.IDNetwork || f.ID == factor.IDPage || f.ID == factor.IDProtocol || (f.Served && s.HasLive()) {
			continue // a live page's servers are the site's own
		}
		if l := s.LevelsOf(f.ID)[0]; !f.Implicit || l != f.Default {
			levels = append(levels, f.What+" "+l)
		}
	}
	runs := fmt.Sprintf("%d runs", s.Repetitions)
	switch {
	case s.Until != nil:
		runs = fmt.Sprintf("rounds until the answer is known (a look after each from the %s, at most %d)", ordinal(s.Until.Min), s.Repetitions)
	case s.Repetitions == 1:
		runs = "1 run"
	}
	line := fmt.Sprintf("%s on %s; %s; %s × %s, seed %d", s.Pages[0], s.Networks[0].Describe(), strings.Join(levels, ", "),
		runs, strings.Join(s.LevelsOf(factor.IDProtocol), ","), s.Seed)
	if cpuNote != "" {
		line += " (" + cpuNote + ")"
	}
	return line
}

// ordinal is n in words' order: 1st, 2nd, 3rd, 10th, 11th, 22nd.
func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}
