package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/experiment"
	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/netcheck"
	"github.com/quicbench/quicbench/internal/netconf"
	"github.com/quicbench/quicbench/internal/origin"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/stacks"
	"github.com/quicbench/quicbench/internal/testbed"
)

// compareOptions are compare's flags, parsed and validated.
type compareOptions struct {
	cfg     experiment.CompareConfig
	net     *netconf.Network
	json    bool
	verbose bool
}

// Defaults of compare: the demo scenario.
const (
	defaultRTT      = "100ms"
	defaultLoss     = "1"
	defaultDown     = "10mbit"
	defaultUp       = "5mbit"
	defaultQueue    = "200ms"
	defaultPage     = "synthetic:32x10KB"
	defaultProtos   = "h1,h2,h3"
	defaultRuns     = 5
	maxRuns         = 10_000
	maxOrigins      = 64
	defaultTimeout  = 60 * time.Second
	compareHelpHint = "see quicbench compare -h"
)

// parseCompare parses compare's arguments. now names the default run
// directory. Every error is one line naming the flag and what is allowed.
func parseCompare(args []string, now time.Time, helpOut io.Writer) (*compareOptions, error) {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	netFlags := addNetworkFlags(fs, networkDefaults{rtt: defaultRTT, loss: defaultLoss, down: defaultDown, up: defaultUp, queue: defaultQueue})
	page := fs.String("page", defaultPage, "the `page`: synthetic:NxSIZE, N images of SIZE bytes (e.g. synthetic:32x10KB; KB = 1000 B, KiB = 1024 B)")
	protos := fs.String("protocols", defaultProtos, "comma-separated `list` of h1, h2, h3")
	stack := fs.String("stack", "tcp", "the servers' TCP `stack` for h1 and h2: tcp, tcp+ or tcp+bbr (quicbench stacks); h3 always uses quic-go's")
	server := fs.String("server", "go", "server `stack` for h1 and h2: go (net/http) or nginx (Debian's nginx, same files and headers); h3 is always quic-go")
	origins := fs.Int("origins", 1, "spread the page's objects round-robin over this `number` of origins (host names), each on its own server address; server N is origin N for --path")
	runs := fs.Int("runs", defaultRuns, "`rounds`: each loads the page once per protocol, in shuffled order")
	seed := fs.Uint64("seed", 1, "`seed` of the loss decisions, page bytes and load order")
	jsonOut := fs.Bool("json", false, "print the result, with every load, as JSON instead of a table")
	out := fs.String("out", "", "run `directory` for certificates and results (default runs/compare-<time>)")
	timeout := fs.Duration("timeout", defaultTimeout, "`limit` for one page load, browser start included")
	chromium := fs.String("chromium", client.DefaultChromiumPath, "Chromium `binary`")
	browserMode := fs.String("browser", "fresh", "Chromium `mode`: fresh (a new browser and profile per load) or warm (a browser per protocol, a new browser context per load: less overhead)")
	loaderFlag := fs.String("client", "chromium", "page `loader`: chromium (real headless Chromium) or loader (the built-in Go loader: no JavaScript, no rendering)")
	verbose := fs.Bool("verbose", false, "log what the run does to stderr")
	capture := fs.Bool("pcap", false, "record each load's client-side packets to pcap/round<N>-<protocol>.pcap in the run directory (Wireshark reads them); adds a copy per packet")
	qlog := fs.Bool("qlog", false, "record the server's qlog of each h3 load to qlog/round<N>-h3/ in the run directory (qvis reads them)")
	visit := fs.String("visit", "first", "`kind` of visit measured: first (a new browser profile) or repeat (load once, the servers close every connection, then measure a second load in the same browser)")
	cache := fs.String("cache", "off", "`on`: the site is cacheable (max-age=86400, ETag, Last-Modified), so a repeat visit can use the browser's cache; off: every response says no-store")
	check := fs.Bool("netcheck", true, "measure the network first (about 10 s) and store the result in the run directory; --netcheck=false skips it")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(helpOut, "Usage: quicbench compare [flags]\n\nLoads one page over each protocol behind an emulated link and compares them.\n\nFlags:")
			fs.SetOutput(helpOut)
			fs.PrintDefaults()
			return nil, err
		}
		return nil, fmt.Errorf("%v (%s)", err, compareHelpHint)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (%s)", fs.Arg(0), compareHelpHint)
	}
	o := &compareOptions{json: *jsonOut, verbose: *verbose}
	var err error
	if o.net, err = netFlags.resolve(); err != nil {
		return nil, err
	}
	tcpStack, err := stacks.Lookup(*stack)
	if err != nil || tcpStack.QUIC {
		return nil, fmt.Errorf("--stack %q: use tcp, tcp+ or tcp+bbr (quicbench stacks describes them)", *stack)
	}
	serverStack, err := testbed.ParseServer(*server)
	if err != nil {
		return nil, fmt.Errorf("--server: %w", err)
	}
	if *origins < 1 || *origins > maxOrigins {
		return nil, fmt.Errorf("--origins %d is outside 1 to %d", *origins, maxOrigins)
	}
	if err := o.net.CheckServers(*origins); err != nil {
		return nil, err
	}
	spec, err := site.ParsePage(*page)
	if err != nil {
		return nil, fmt.Errorf("--page: %w", err)
	}
	protocols, err := client.ParseProtocols(*protos)
	if err != nil {
		return nil, fmt.Errorf("--protocols: %w", err)
	}
	if *runs < 1 || *runs > maxRuns {
		return nil, fmt.Errorf("--runs %d is outside 1 to %d", *runs, maxRuns)
	}
	if *timeout <= 0 {
		return nil, fmt.Errorf("--timeout %v must be positive, e.g. 60s", *timeout)
	}
	if *browserMode != "fresh" && *browserMode != "warm" {
		return nil, fmt.Errorf("--browser %q: use fresh or warm", *browserMode)
	}
	if *loaderFlag != "chromium" && *loaderFlag != "loader" {
		return nil, fmt.Errorf("--client %q: use chromium or loader", *loaderFlag)
	}
	visitKind, err := client.ParseVisit(*visit)
	if err != nil {
		return nil, fmt.Errorf("--visit: %w", err)
	}
	var cacheOn bool
	switch *cache {
	case "on":
		cacheOn = true
	case "off":
	default:
		return nil, fmt.Errorf("--cache %q: use on or off", *cache)
	}
	dir := *out
	if dir == "" {
		dir = "runs/compare-" + now.Format("20060102-150405")
	}
	o.cfg = experiment.CompareConfig{
		Link:         o.net.Link,
		RTT:          o.net.RTT,
		Netcheck:     *check,
		Pcap:         *capture,
		Qlog:         *qlog,
		Page:         spec,
		Origins:      *origins,
		Stack:        tcpStack,
		Server:       serverStack,
		Visit:        visitKind,
		Cache:        cacheOn,
		Protocols:    protocols,
		Runs:         *runs,
		Seed:         *seed,
		RunDir:       dir,
		ChromiumPath: *chromium,
		Loader:       *loaderFlag == "loader",
		WarmBrowser:  *browserMode == "warm",
		LoadTimeout:  *timeout,
	}
	return o, nil
}

func runCompare(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseCompare(args, time.Now(), stdout)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintln(stderr, "quicbench compare:", err)
		return exitUsage
	}
	if err := checkPrivileges(); err != nil {
		fmt.Fprintln(stderr, "quicbench compare:", err)
		return exitUsage
	}
	if err := client.CheckChromium(o.cfg.ChromiumPath); err != nil && !o.cfg.Loader {
		fmt.Fprintln(stderr, "quicbench compare:", err)
		return exitUsage
	}
	o.cfg.Log = newLogger(stderr, o.verbose)
	total := o.cfg.Runs * len(o.cfg.Protocols)
	done := 0
	o.cfg.OnLoad = func(l experiment.Load) {
		done++
		status := fmt.Sprintf("PLT %8.1f ms", l.PLTMs)
		if !l.OK() {
			status = "FAILED: " + l.Failure
		}
		fmt.Fprintf(stderr, "load %3d/%d  round %d  %s  %s\n", done, total, l.Round, l.Requested, status)
	}
	fmt.Fprintln(stderr, header(o))
	res, err := experiment.Compare(ctx, o.cfg)
	if res == nil {
		fmt.Fprintln(stderr, "quicbench compare:", err)
		return exitFailure
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(jsonReport{Config: describe(o), CompareResult: res}); err != nil {
			fmt.Fprintln(stderr, "quicbench compare:", err)
			return exitFailure
		}
	} else {
		fmt.Fprintln(stdout, header(o))
		printSummary(stdout, res)
		if res.Netcheck != nil {
			printNetcheckSummary(stdout, res.Netcheck, res.RunDir)
		}
	}
	switch {
	case res.Interrupted && ctx.Err() != nil:
		fmt.Fprintf(stderr, "quicbench compare: interrupted after %d of %d loads; they are kept in %s/loads.jsonl\n", len(res.Loads), total, res.RunDir)
		return exitInterrupted
	case err != nil:
		fmt.Fprintln(stderr, "quicbench compare:", err)
		return exitFailure
	}
	return exitOK
}

// header describes the scenario in one line.
func header(o *compareOptions) string {
	c := o.cfg
	origins := ""
	if c.Origins > 1 {
		origins = fmt.Sprintf(" over %d origins", c.Origins)
	}
	cache := "off"
	if c.Cache {
		cache = "on"
	}
	loader := "Chromium"
	if c.WarmBrowser {
		loader = "Chromium (warm)"
	}
	if c.Loader {
		loader = "built-in loader"
	}
	runs := "runs"
	if c.Runs == 1 {
		runs = "run"
	}
	return fmt.Sprintf("%s%s on %s; %s servers, TCP stack %s; %s, %s visit, cache %s; %d %s × %s, seed %d", c.Page, origins, o.net.Describe(), serverText(c.Server), c.Stack.Name, loader, c.Visit, cache, c.Runs, runs, protoList(c.Protocols), c.Seed)
}

// scenario is the configuration as JSON reports it.
type scenario struct {
	Page      string            `json:"page"`
	Origins   int               `json:"origins"`
	Preset    string            `json:"preset,omitempty"`
	RTTMs     float64           `json:"rtt_ms"`
	Uplink    link.Config       `json:"uplink"`
	Downlink  link.Config       `json:"downlink"`
	Protocols []client.Protocol `json:"protocols"`
	Stack     string            `json:"tcp_stack"`
	Server    string            `json:"server"`
	Visit     client.Visit      `json:"visit"`
	Cache     bool              `json:"cache"`
	Runs      int               `json:"runs"`
	Seed      uint64            `json:"seed"`
}

type jsonReport struct {
	Config scenario `json:"config"`
	*experiment.CompareResult
}

func describe(o *compareOptions) scenario {
	return scenario{Page: o.cfg.Page.String(), Origins: o.cfg.Origins, Preset: o.net.Preset, RTTMs: float64(o.net.RTT) / 1e6, Uplink: o.cfg.Link.Up, Downlink: o.cfg.Link.Down,
		Protocols: o.cfg.Protocols, Stack: o.cfg.Stack.Name, Server: o.cfg.Server, Visit: o.cfg.Visit, Cache: o.cfg.Cache, Runs: o.cfg.Runs, Seed: o.cfg.Seed}
}

// printSummary writes the comparison table and the link counters.
func printSummary(w io.Writer, res *experiment.CompareResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "protocol\tok\tfailed\tPLT median\tPLT mean\tPLT p25\tPLT p75\tDCL median\tTTFB median\tPLT/h2\tobserved\thandshakes\t")
	for _, s := range res.Summaries {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", s.Protocol, s.OK, s.Failed,
			msText(s.PLT.Median), msText(s.PLT.Mean), msText(s.PLT.P25), msText(s.PLT.P75),
			msText(s.DCL.Median), msText(s.TTFB.Median), ratioText(s.RatioToH2), strings.Join(s.Observed, ","), handshakeText(s.Handshakes))
	}
	tw.Flush()
	fmt.Fprintln(w, "Times in ms from navigation start; PLT = loadEventEnd, DCL = DOMContentLoaded, TTFB = first byte of the document.")
	fmt.Fprintln(w, "Handshakes: the servers' connections in the verified loads, by kind (full, resumed, 0rtt, incomplete).")
	fmt.Fprintln(w, "Only verified loads (every object over the requested protocol, as seen by browser and server) are in the statistics.")
	for _, l := range res.Loads {
		if !l.OK() {
			fmt.Fprintf(w, "failed: round %d %s: %s\n", l.Round, l.Requested, l.Failure)
		}
	}
	fmt.Fprintf(w, "link up:   %s\nlink down: %s\n", linkText(res.Uplink, res.UplinkConfig), linkText(res.Downlink, res.DownlinkConfig))
	if st := res.Stack; st.Profile != "" {
		if st.Congestion == "" { // no TCP connection was read
			st.Congestion = st.RouteCongestion + " (the route's)"
		}
		fmt.Fprintf(w, "servers' TCP stack %s, read back from the kernel: %s, initcwnd %s, initrwnd %s, slow start after idle %s, tcp_wmem %s, pacing %v\n",
			st.Profile, st.Congestion, windowText(st.InitCwnd), windowText(st.InitRwnd), st.SlowStartAfterIdle, st.TCPWmem, st.Pacing)
	}
	fmt.Fprintf(w, "harness overhead per load: median %s ms beyond the PLT (browser start %s ms)\n",
		msText(res.Overhead.PerLoad.Median), msText(res.Overhead.BrowserStart.Median))
	fmt.Fprintf(w, "%d loads in %.1f s; every load is in %s/loads.jsonl\n", len(res.Loads), res.WallSeconds, res.RunDir)
}

func linkText(s emulator.Stats, cfg link.Config) string {
	lossPct := 0.0
	if s.Packets > 0 {
		lossPct = 100 * float64(s.DroppedLoss) / float64(s.Packets)
	}
	text := fmt.Sprintf("%d packets, %d lost at random (%.2f%%, configured %s), %d dropped by the full queue, peak queue %d B",
		s.Packets, s.DroppedLoss, lossPct, netconf.Percent(cfg.MeanLoss()), s.DroppedQueue, s.PeakQueueBytes)
	if s.DroppedPath > 0 {
		text += fmt.Sprintf(", %d lost on per-server paths", s.DroppedPath)
	}
	return text
}

func msText(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func ratioText(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func protoList(ps []client.Protocol) string {
	var s []string
	for _, p := range ps {
		s = append(s, string(p))
	}
	return strings.Join(s, ",")
}

// printNetcheckSummary says in one line whether the network was what it
// claimed, and lists the checks that failed.
func printNetcheckSummary(w io.Writer, r *netcheck.Report, dir string) {
	var failed []string
	for _, l := range r.Lines {
		if l.Result == netcheck.Fail {
			failed = append(failed, fmt.Sprintf("%s: configured %s, measured %s", l.Check, l.Configured, l.Measured))
		}
	}
	if len(failed) == 0 {
		fmt.Fprintf(w, "netcheck: all %d checks passed (RTT, loss, goodput, delay under load; %s/netcheck.json)\n", len(r.Lines), dir)
		return
	}
	fmt.Fprintf(w, "netcheck: %d of %d checks FAILED, the network was not what was configured (%s/netcheck.json):\n", len(failed), len(r.Lines), dir)
	for _, f := range failed {
		fmt.Fprintln(w, "  "+f)
	}
}

func windowText(packets int) string {
	if packets == 0 {
		return "default (10)"
	}
	return strconv.Itoa(packets)
}

// handshakeText lists handshake counts by kind in a fixed order, such as
// "full 12" or "0rtt 5, full 1"; "-" for none.
func handshakeText(counts map[string]int) string {
	var parts []string
	for _, kind := range []string{origin.Handshake0RTT, origin.HandshakeResumed, origin.HandshakeFull, origin.HandshakeIncomplete} {
		if n := counts[kind]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", kind, n))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// serverText names the server stacks of a run.
func serverText(server string) string {
	if server == testbed.ServerNginx {
		return "nginx (h1, h2) and quic-go (h3)"
	}
	return "Go"
}
