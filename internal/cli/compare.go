package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/experiment"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/netconf"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/spec"
)

// compareOptions are compare's flags, parsed and validated: a one-cell
// spec and where to run it.
type compareOptions struct {
	spec     *spec.Spec
	dir      string
	chromium string
	json     bool
	verbose  bool
}

// Defaults of compare: the demo scenario.
const (
	defaultRTT      = "100ms"
	defaultLoss     = "1"
	defaultDown     = "10mbit"
	defaultUp       = "5mbit"
	defaultQueue    = "200ms"
	defaultPage     = "synthetic:32x10KB"
	defaultRuns     = 5
	maxRuns         = 10_000
	compareHelpHint = "see quicbench compare -h"
)

// defaultMinRuns is the rounds compare --until makes before its first look.
const defaultMinRuns = 10

// compareFlags are compare's flags as parsed, before validation.
type compareFlags struct {
	net                                                                    *networkFlags
	page, protos, stack, server, visit, cache, out                         *string
	quicServer, quicCC                                                     *string
	clientName, browser, chromium                                          *string
	origins, runs, retries                                                 *int
	seed                                                                   *uint64
	timeout                                                                *time.Duration
	until                                                                  *float64
	jsonOut, verbose, capture, qlog, check, visual, deterministic, pairing *bool
}

func newCompareFlags(fs *flag.FlagSet) *compareFlags {
	protocols := factor.Protocols().Values()
	return &compareFlags{
		net:           addNetworkFlags(fs, networkDefaults{rtt: defaultRTT, loss: defaultLoss, down: defaultDown, up: defaultUp, queue: defaultQueue}),
		page:          fs.String("page", defaultPage, "the `page`: "+factor.PageKinds().Usage()),
		protos:        fs.String("protocols", joinLevels(protocols), "comma-separated `list` of "+factor.Protocols().Names()),
		stack:         fs.String("stack", string(factor.StackTCP), "the servers' TCP `stack` for h1 and h2: "+factor.Stacks().Usage()+" (quicbench stacks)"),
		server:        fs.String("server", string(factor.ServerGo), "server `stack` for h1 and h2: "+factor.Servers().Usage()),
		quicServer:    fs.String("quic-server", string(factor.QUICGo), "the `server` for h3: "+factor.QUICServers().Usage()+" (quicbench stacks)"),
		quicCC:        fs.String("quic-cc", "", "the h3 server's congestion `control`: "+factor.Controllers().Usage()+"; quic-go has only newreno (default: newreno for quic-go, cubic for quinn)"),
		origins:       fs.Int("origins", 1, "spread the page's objects round-robin over this `number` of origins (host names), each on its own server address; server N is origin N for --path"),
		until:         fs.Float64("until", 0, "stop repeating once the 95 % CI of the h3/h2 ratio is within ± this `fraction` (such as 0.03), or a sequential test gives a verdict, after at least 10 rounds (fewer if --runs is smaller); --runs is then the most"),
		runs:          fs.Int("runs", defaultRuns, "`rounds`: each loads the page once per protocol, in shuffled order"),
		retries:       fs.Int("retries", 0, "more `attempts` for a failed load (a failed load is recorded with its attempts either way)"),
		seed:          fs.Uint64("seed", spec.DefaultSeed, "`seed` of the loss decisions, page bytes and load order (the same as a spec's seed)"),
		jsonOut:       fs.Bool("json", false, "print the summary, with every load, as JSON instead of a table"),
		out:           fs.String("out", "", "run `directory` for results.db, the spec and the certificates (default runs/compare-<time>)"),
		timeout:       fs.Duration("timeout", spec.DefaultTimeout, "`limit` for one page load, browser start included"),
		chromium:      fs.String("chromium", client.DefaultChromiumPath, "Chromium `binary`"),
		browser:       fs.String("browser", string(factor.BrowserFresh), "Chromium `mode`: "+factor.Browsers().Usage()),
		clientName:    fs.String("client", string(factor.ClientChromium), "page `loader`: "+factor.Clients().Usage()),
		verbose:       fs.Bool("verbose", false, "log what the run does to stderr"),
		capture:       fs.Bool("pcap", false, "record each load's client-side packets to artifacts/<trial>-a<attempt>.pcap in the run directory (Wireshark reads them); adds a copy per packet"),
		qlog:          fs.Bool("qlog", false, "record the server's qlog of each h3 load to artifacts/<trial>-a<attempt>-qlog/ in the run directory (qvis reads them)"),
		visit:         fs.String("visit", string(factor.FirstVisit), "`kind` of visit measured: "+factor.Visits().Usage()),
		cache:         fs.String("cache", string(factor.CacheOff), "`on` or off: "+factor.Caches().Usage()),
		visual:        fs.Bool("visual", false, "capture each load's frames in Chromium for visual metrics (First and Last Visual Change, Speed Index, Visually Complete 85/95/99) into artifacts/<trial>-a<attempt>-frames/; the capture costs CPU during the load and 2 s after it"),
		deterministic: fs.Bool("deterministic", false, "make Date and Math.random in the page's scripts the same on every load, as WebPageReplay does, so that a recorded page requests the same URLs each time"),
		pairing:       fs.Bool("pairing", true, "start the protocols' loads of each round from the same link state (the same loss and jitter draws), and analyse them as pairs; --pairing=false draws each load's losses afresh"),
		check:         fs.Bool("netcheck", true, "measure the network first (about 10 s) and store the result in the run directory; --netcheck=false skips it"),
	}
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
	s, err := f.spec()
	if err != nil {
		return nil, err
	}
	dir := *f.out
	if dir == "" {
		dir = filepath.Join("runs", "compare-"+now.Format("20060102-150405"))
	}
	return &compareOptions{spec: s, dir: dir, chromium: *f.chromium, json: *f.jsonOut, verbose: *f.verbose}, nil
}

// spec turns the flags into a spec, through the spec file's own parser.
func (f *compareFlags) spec() (*spec.Spec, error) {
	net, err := f.net.resolve()
	if err != nil {
		return nil, err
	}
	s := &spec.Spec{Name: "compare", Seed: *f.seed, Repetitions: *f.runs, Retries: *f.retries, Timeout: *f.timeout,
		Netcheck: *f.check, Deterministic: *f.deterministic, Pairing: *f.pairing, Artifacts: spec.Artifacts{Pcap: *f.capture, Qlog: *f.qlog}, Networks: []*netconf.Network{net}}
	var page factor.Page
	var stack factor.Stack
	var server factor.Server
	var quic factor.QUIC
	var cc factor.CC
	var visit factor.Visit
	var cache factor.Cache
	for _, p := range []error{
		wrap("--page", func() (err error) { page, err = factor.ParsePage(*f.page); return }),
		wrap("--protocols", func() (err error) { s.Protocols, err = factor.ParseList(factor.Protocols(), *f.protos); return }),
		wrap("--stack", func() (err error) { stack, err = factor.Stacks().Parse(*f.stack); return }),
		wrap("--server", func() (err error) { server, err = factor.Servers().Parse(*f.server); return }),
		wrap("--quic-cc", func() (err error) { cc, err = f.controller(); return }),
		wrap("--quic-server", func() (err error) { quic, err = f.quicStack(cc); return }),
		wrap("--visit", func() (err error) { visit, err = factor.Visits().Parse(*f.visit); return }),
		wrap("--cache", func() (err error) { cache, err = factor.Caches().Parse(*f.cache); return }),
		wrap("--client", func() (err error) { s.Client, err = factor.Clients().Parse(*f.clientName); return }),
		wrap("--browser", func() (err error) { s.Browser, err = factor.Browsers().Parse(*f.browser); return }),
		wrap("--origins", func() error { return factor.CheckOrigins(*f.origins) }),
		wrap("--runs", func() error { return inRange("runs", *f.runs, 1, maxRuns) }),
		wrap("--retries", func() error { return inRange("retries", *f.retries, 0, spec.MaxRetries) }),
		wrap("--timeout", func() error { return positive(*f.timeout) }),
		net.CheckServers(*f.origins),
	} {
		if p != nil {
			return nil, p
		}
	}
	s.Pages, s.Stacks, s.Servers, s.Visits, s.Cache, s.Origins = []factor.Page{page}, []factor.Stack{stack}, []factor.Server{server},
		[]factor.Visit{visit}, []factor.Cache{cache}, []int{*f.origins}
	s.QUIC = []factor.QUIC{quic}
	s.Visual = []factor.Visual{factor.VisualOf(*f.visual)}
	if *f.until != 0 {
		s.Until = &spec.Until{Min: min(defaultMinRuns, *f.runs), CIRatio: *f.until}
	}
	text, err := spec.Format(s)
	if err != nil {
		return nil, err
	}
	return spec.Parse(text)
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
		err = checkPrerequisites(o.spec, o.chromium)
	}
	if err != nil {
		fmt.Fprintln(stderr, "quicbench compare:", err)
		return exitUsage
	}
	s := o.spec
	total := s.Repetitions * len(s.Protocols)
	fmt.Fprintln(stderr, header(s))
	res, err := experiment.Run(ctx, experiment.RunConfig{Spec: s, Dir: o.dir, ChromiumPath: o.chromium,
		Facts: experiment.HostFacts(o.chromium, Version), Log: newLogger(stderr, o.verbose),
		OnTrial: func(p experiment.Progress) { fmt.Fprintln(stderr, loadLine(p, total)) }})
	if res == nil {
		fmt.Fprintln(stderr, "quicbench compare:", err)
		if isUserError(err) {
			return exitUsage
		}
		return exitFailure
	}
	unanswered, perr := printCompare(stdout, o, res)
	if perr != nil {
		fmt.Fprintln(stderr, "quicbench compare:", perr)
		return exitFailure
	}
	switch {
	case err != nil && ctx.Err() != nil:
		fmt.Fprintf(stderr, "quicbench compare: interrupted after %d of %d loads; they are kept in %s (continue with quicbench run %s --out %s --resume)\n",
			res.Done, total, filepath.Join(o.dir, results.FileName), filepath.Join(o.dir, "spec.yaml"), o.dir)
		return exitInterrupted
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

// checkPrerequisites says what is missing to run s: root, TUN, ip, and
// Chromium when s loads with it.
func checkPrerequisites(s *spec.Spec, chromium string) error {
	if err := checkPrivileges(); err != nil {
		return err
	}
	if s.Client == factor.ClientChromium {
		return client.CheckChromium(chromium)
	}
	return nil
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

// header describes the comparison in one line.
func header(s *spec.Spec) string {
	origins := ""
	if s.Origins[0] > 1 {
		origins = fmt.Sprintf(" over %d origins", s.Origins[0])
	}
	loader := "Chromium"
	if s.Browser == factor.BrowserWarm {
		loader = "Chromium (warm)"
	}
	if s.Client == factor.ClientLoader {
		loader = "built-in loader"
	}
	if s.Visual[0].On() {
		loader += " capturing frames"
	}
	runs := "runs"
	if s.Repetitions == 1 {
		runs = "run"
	}
	return fmt.Sprintf("%s%s on %s; %s servers, TCP stack %s; %s, %s visit, cache %s; %d %s × %s, seed %d", s.Pages[0], origins, s.Networks[0].Describe(),
		serverText(s.Servers[0], s.QUIC[0]), s.Stacks[0], loader, s.Visits[0], s.Cache[0], s.Repetitions, runs, joinLevels(s.Protocols), s.Seed)
}

// serverText names the server stacks of a run.
func serverText(server factor.Server, quic factor.QUIC) string {
	tcp := "Go"
	if server == factor.ServerNginx {
		tcp = "nginx"
	}
	if server == factor.ServerGo && quic == factor.QUICGoNewReno {
		return "Go"
	}
	return fmt.Sprintf("%s (h1, h2) and %s (h3)", tcp, quic)
}
