// Package experiment runs measurements: compare (one page, one network, each
// protocol in interleaved rounds) today, factorial plans later. Every load
// is appended to the run directory the moment it ends, so an interrupted run
// keeps every completed load.
package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/netcheck"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/origin"
	"github.com/quicbench/quicbench/internal/pcap"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/stacks"
	"github.com/quicbench/quicbench/internal/stats"
	"github.com/quicbench/quicbench/internal/testbed"
)

// CompareConfig is one comparison. Seeds inside Link are ignored: they are
// derived from Seed.
type CompareConfig struct {
	Link emulator.Config
	Page site.SyntheticSpec
	// Origins is how many origins the page's objects are spread over, each
	// on its own server address; the first also serves the document.
	// Zero: 1.
	Origins   int
	Protocols []client.Protocol
	// Runs is the number of rounds; each round loads the page once per
	// protocol, in an order shuffled from Seed.
	Runs int
	// Seed determines the loss decisions, the page bytes and the orders.
	Seed uint64
	// RunDir receives certificates, loads.jsonl and summary.json.
	RunDir string
	// ChromiumPath is the browser binary; empty: client.DefaultChromiumPath.
	ChromiumPath string
	// Loader uses the built-in loader instead of Chromium.
	Loader bool
	// WarmBrowser keeps a browser per protocol and loads each page in a new
	// browser context of it (client.Chromium.Warm).
	WarmBrowser bool
	// LoadTimeout bounds one load; zero: 60 s.
	LoadTimeout time.Duration
	// Log receives progress and server errors; nil discards.
	Log *slog.Logger
	// Stack is the servers' TCP stack (h1 and h2); h3 is always quic-go's.
	Stack stacks.Profile
	// Server is the server stack for h1 and h2: testbed.ServerGo (the zero
	// value) or testbed.ServerNginx.
	Server string
	// RTT is the configured round-trip delay, for the netcheck.
	RTT time.Duration
	// Pcap records each load's client-side packets to
	// pcap/round<N>-<protocol>.pcap in RunDir (Wireshark reads them).
	Pcap bool
	// Qlog records the server's qlog of each h3 load's connections to
	// qlog/round<N>-h3/ in RunDir (qvis reads them); the traces are complete
	// when the run ends and the servers close their connections.
	Qlog bool
	// Netcheck runs a short netcheck before the loads and stores it; the
	// loads' link counters then exclude its traffic.
	Netcheck bool
	// Visit is client.FirstVisit (zero value) or client.RepeatVisit: load the
	// page once, close every server connection, and measure a second load
	// in the same browser.
	Visit client.Visit
	// Cache makes the site cacheable (max-age and validators); off, every
	// response says no-store. It matters for repeat visits.
	Cache bool
	// OnLoad, if set, is called after each load (for progress output).
	OnLoad func(Load)
}

// Load is one page load of a comparison.
type Load struct {
	Round    int `json:"round"` // 1-based
	Position int `json:"position"`
	client.Result
	// ServerRequests are the requests the origin served during the load,
	// per protocol: a second, server-side check of the protocol.
	ServerRequests origin.Counts `json:"server_requests"`
	StartedAt      time.Time     `json:"started_at"`
	// Pcap is the load's capture, relative to the run directory, if any.
	Pcap string `json:"pcap,omitempty"`
	// Qlog is the directory of the load's server qlogs, if any.
	Qlog string `json:"qlog,omitempty"`
	// Connections are the client connections the servers accepted during
	// the measured load, with handshake kind and transport statistics.
	Connections []origin.ConnRecord `json:"connections"`
}

// ProtocolSummary is the comparison's result for one protocol. Only verified
// loads enter the statistics; times are in milliseconds.
type ProtocolSummary struct {
	Protocol client.Protocol `json:"protocol"`
	OK       int             `json:"ok"`
	Failed   int             `json:"failed"`
	PLT      stats.Summary   `json:"plt_ms"`
	DCL      stats.Summary   `json:"dcl_ms"`
	TTFB     stats.Summary   `json:"ttfb_ms"`
	// RatioToH2 is median PLT / h2's median PLT; NaN without verified h2
	// loads (JSON null).
	RatioToH2 float64 `json:"-"`
	// Observed lists the distinct document protocols of all loads.
	Observed []string `json:"observed"`
	// Handshakes counts the verified loads' server connections per
	// handshake kind (origin.HandshakeFull, …).
	Handshakes map[string]int `json:"handshakes"`
}

// MarshalJSON writes RatioToH2 as null when it is NaN.
func (p ProtocolSummary) MarshalJSON() ([]byte, error) {
	type plain ProtocolSummary
	var ratio *float64
	if !math.IsNaN(p.RatioToH2) {
		ratio = &p.RatioToH2
	}
	return json.Marshal(struct {
		plain
		RatioToH2 *float64 `json:"plt_median_ratio_to_h2"`
	}{plain(p), ratio})
}

// CompareResult is a finished or interrupted comparison.
type CompareResult struct {
	Loads     []Load            `json:"loads"`
	Summaries []ProtocolSummary `json:"summaries"`
	Uplink    emulator.Stats    `json:"uplink"`
	Downlink  emulator.Stats    `json:"downlink"`
	// UplinkConfig and DownlinkConfig are the links as run, seeds included.
	UplinkConfig   link.Config `json:"uplink_config"`
	DownlinkConfig link.Config `json:"downlink_config"`
	// Overhead is what the harness adds to each load: the load's wall time
	// minus its PLT (browser start and stop, metrics read-out), in ms.
	Overhead Overhead `json:"overhead"`
	// Stack is the servers' TCP stack as read back from the kernel.
	Stack stacks.Applied `json:"tcp_stack"`
	// Netcheck is the check of the network run before the loads, if any.
	Netcheck *netcheck.Report `json:"netcheck,omitempty"`
	// Interrupted is true when the run stopped before its last load.
	Interrupted bool    `json:"interrupted"`
	WallSeconds float64 `json:"wall_seconds"`
	RunDir      string  `json:"run_dir"`
}

// Compare sets up the network cell, loads the page cfg.Runs times per
// protocol in interleaved shuffled rounds, and tears everything down. When
// ctx is canceled it stops after removing what it created and returns the
// loads completed so far with Interrupted set, and ctx's error.
func Compare(ctx context.Context, cfg CompareConfig) (*CompareResult, error) {
	start := time.Now()
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Runs < 1 || len(cfg.Protocols) == 0 {
		return nil, fmt.Errorf("compare: need at least one run and one protocol")
	}
	seeds := rand.New(rand.NewPCG(cfg.Seed, 0xc0ffee))
	cfg.Link.Up.Seed, cfg.Link.Down.Seed = seeds.Uint64(), seeds.Uint64()
	page, err := site.Synthetic(cfg.Page, site.OriginHosts(max(cfg.Origins, 1)), seeds.Uint64())
	if err != nil {
		return nil, err
	}
	order := rand.New(rand.NewPCG(seeds.Uint64(), seeds.Uint64()))
	if err := os.MkdirAll(cfg.RunDir, 0o755); err != nil {
		return nil, fmt.Errorf("compare: run directory: %w", err)
	}
	if removed, err := netns.RemoveStale(); err != nil {
		cfg.Log.Warn("could not remove namespaces of dead runs", "err", err)
	} else if len(removed) > 0 {
		cfg.Log.Info("removed namespaces of dead runs", "names", removed)
	}
	loadsFile, err := os.Create(filepath.Join(cfg.RunDir, "loads.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	defer loadsFile.Close()

	tb, err := testbed.Start(testbed.Config{
		Stem:   netns.RunName(os.Getpid(), fmt.Sprintf("%04x", rand.Uint32()&0xffff)),
		Link:   cfg.Link,
		Site:   page,
		RunDir: cfg.RunDir,
		Log:    cfg.Log,
		Stack:  cfg.Stack,
		Server: cfg.Server,
		Cache:  cfg.Cache,
	})
	if err != nil {
		return nil, err
	}
	res := &CompareResult{RunDir: cfg.RunDir, UplinkConfig: cfg.Link.Up, DownlinkConfig: cfg.Link.Down}
	if cfg.Netcheck {
		report, err := netcheck.Run(ctx, tb.Network, netcheck.Config{Link: cfg.Link, RTT: cfg.RTT,
			RTTProbes: 200, LossProbes: netcheckLossProbes(cfg.Link), TransferTime: 2 * time.Second})
		if err != nil {
			return nil, errors.Join(fmt.Errorf("compare: netcheck: %w", err), tb.Close())
		}
		res.Netcheck = report
		if err := writeJSON(filepath.Join(cfg.RunDir, "netcheck.json"), report); err != nil {
			return nil, errors.Join(err, tb.Close())
		}
	}
	tb.Emulator.ResetPeaks()
	upBefore, downBefore := tb.Emulator.Stats()
	chromium := &client.Chromium{Path: cfg.ChromiumPath, Namespace: tb.Topo.Client, ProfileDir: cfg.RunDir, Timeout: cfg.LoadTimeout, Warm: cfg.WarmBrowser}
	var browser client.PageLoader = chromium
	if cfg.Loader {
		browser = NewLoader(tb, cfg.LoadTimeout, "")
	}
	runErr := func() error {
		for round := 1; round <= cfg.Runs; round++ {
			protos := slices.Clone(cfg.Protocols)
			order.Shuffle(len(protos), func(i, j int) { protos[i], protos[j] = protos[j], protos[i] })
			for pos, p := range protos {
				if err := ctx.Err(); err != nil {
					return err
				}
				load := Load{Round: round, Position: pos + 1, StartedAt: time.Now()}
				var stopCapture func() error
				if cfg.Pcap {
					load.Pcap = filepath.Join("pcap", fmt.Sprintf("round%d-%s.pcap", round, p))
					stop, err := startCapture(tb, filepath.Join(cfg.RunDir, load.Pcap))
					if err != nil {
						return err
					}
					stopCapture = stop
				}
				if cfg.Qlog && p == client.H3 {
					load.Qlog = filepath.Join("qlog", fmt.Sprintf("round%d-h3", round))
					tb.Origin.SetQlogDir(filepath.Join(cfg.RunDir, load.Qlog))
				}
				r, err := MeasureLoad(ctx, tb, browser, page, p, cfg.Visit, cfg.Cache, cfg.RTT, "")
				tb.Origin.SetQlogDir("")
				if stopCapture != nil {
					if cerr := stopCapture(); cerr != nil && err == nil {
						err = cerr
					}
				}
				if err != nil {
					return err // canceled: the partial load is not kept
				}
				load.Result, load.ServerRequests, load.Connections = r.Result, r.ServerRequests, r.Connections
				if res.Stack.Congestion == "" && tb.Nginx != nil {
					res.Stack.Congestion = tcpCongestion(load.Connections)
				}
				res.Loads = append(res.Loads, load)
				if err := appendJSONLine(loadsFile, load); err != nil {
					return fmt.Errorf("compare: save load: %w", err)
				}
				if cfg.OnLoad != nil {
					cfg.OnLoad(load)
				}
			}
		}
		return nil
	}()
	chromium.Close() // warm browsers live in the client namespace
	up, down := tb.Emulator.Stats()
	res.Uplink, res.Downlink = up.Sub(upBefore), down.Sub(downBefore)
	nginxCongestion := res.Stack.Congestion // read from nginx's connections
	res.Stack = tb.Stack                    // complete once a TCP connection was accepted
	if tb.Nginx != nil {
		res.Stack.Congestion = nginxCongestion
	}
	closeErr := tb.Close()
	res.Interrupted = runErr != nil
	res.Summaries = Summarize(cfg.Protocols, res.Loads)
	res.Overhead = MeasureOverhead(res.Loads)
	res.WallSeconds = time.Since(start).Seconds()
	if err := writeJSON(filepath.Join(cfg.RunDir, "summary.json"), res); err != nil {
		closeErr = errors.Join(closeErr, err)
	}
	return res, errors.Join(runErr, closeErr)
}

// Measured is one verified or failed page load with the servers' view of it.
type Measured struct {
	client.Result
	ServerRequests origin.Counts
	Connections    []origin.ConnRecord
}

// MeasureLoad loads page once over p with browser (a fresh browser per
// load for Chromium, fresh connections for the built-in loader): a first visit, or
// a repeat visit whose second load is measured; cache makes the servers'
// responses cacheable. It checks the servers' request counts against the
// protocol and reads their connection records while the browser still
// holds its connections. rtt is the configured round trip (the pause
// between a repeat visit's loads). An error means ctx was canceled or the
// servers failed; a failed load is a Result with Failure set.
func MeasureLoad(ctx context.Context, tb *testbed.Testbed, browser client.PageLoader, page *site.Site, p client.Protocol,
	visit client.Visit, cache bool, rtt time.Duration, harPath string) (Measured, error) {
	if err := tb.SetCache(cache); err != nil {
		return Measured{}, err
	}
	if err := tb.CloseConnections(); err != nil { // those of the previous load's browser
		return Measured{}, err
	}
	before := tb.Counts()
	var m Measured
	r, err := browser.Load(ctx, client.Request{
		URL: page.DocumentURL(), Protocol: p, Hosts: page.Hosts(),
		HostResolverRules: tb.HostResolverRules(), SPKIHash: tb.Certs.SPKIHash,
		Expected: page.Subresources, Visit: visit, HARPath: harPath,
		CacheAllowed: cache && visit == client.RepeatVisit,
		BetweenVisits: func(ctx context.Context) error {
			if err := tb.CloseConnections(); err != nil {
				return err
			}
			before = tb.Counts()
			return sleep(ctx, closeSettleTime(rtt))
		},
		Loaded: func() { m.Connections = tb.Connections() },
	})
	if err != nil {
		return m, err
	}
	m.Result = r
	m.ServerRequests = tb.Counts().Sub(before)
	if other := m.ServerRequests.Total() - m.ServerRequests.Of(string(p)); other > 0 && m.OK() {
		m.Failure = fmt.Sprintf("server served %d requests over another protocol than %s", other, p)
	}
	return m, nil
}

// tcpCongestion is the congestion control of the first TCP connection in
// recs that reports one.
func tcpCongestion(recs []origin.ConnRecord) string {
	for _, r := range recs {
		if r.Transport == "tcp" && r.Congestion != "" {
			return r.Congestion
		}
	}
	return ""
}

// closeSettleTime is how long a repeat visit waits after the servers closed
// their connections, so that the browser has seen them close: two RTTs,
// at least 100 ms.
func closeSettleTime(rtt time.Duration) time.Duration { return max(2*rtt, 100*time.Millisecond) }

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// startCapture records the client side's packets to path until the returned
// function is called.
func startCapture(tb *testbed.Testbed, path string) (stop func() error, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("compare: capture: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("compare: capture: %w", err)
	}
	w, err := pcap.NewWriter(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	tb.Emulator.SetCapture(w)
	return func() error {
		tb.Emulator.SetCapture(nil)
		return errors.Join(w.Flush(), f.Close())
	}, nil
}

// netcheckLossProbes keeps compare's netcheck short: 5000 probes per
// direction (half a second on fast links), fewer on slow links (at most
// ~2 s at half the rate).
func netcheckLossProbes(l emulator.Config) int {
	n := 5000
	for _, d := range []link.Config{l.Up, l.Down} {
		if rate := d.MeanRate(); rate > 0 {
			n = min(n, max(50, int(rate/2/(92*8)*2)))
		}
	}
	return n
}

// Summarize computes the per-protocol summaries of loads, in the order of
// protocols. Failed loads are counted, never measured.
func Summarize(protocols []client.Protocol, loads []Load) []ProtocolSummary {
	var out []ProtocolSummary
	for _, p := range protocols {
		s := ProtocolSummary{Protocol: p, RatioToH2: math.NaN()}
		var plt, dcl, ttfb []float64
		for _, l := range loads {
			if l.Requested != p {
				continue
			}
			if l.DocumentProtocol != "" && !slices.Contains(s.Observed, l.DocumentProtocol) {
				s.Observed = append(s.Observed, l.DocumentProtocol)
			}
			if !l.OK() {
				s.Failed++
				continue
			}
			s.OK++
			for kind, n := range origin.HandshakeCounts(l.Connections) {
				if s.Handshakes == nil {
					s.Handshakes = map[string]int{}
				}
				s.Handshakes[kind] += n
			}
			plt, dcl, ttfb = append(plt, l.PLTMs), append(dcl, l.DCLMs), append(ttfb, l.TTFBMs)
		}
		s.PLT, s.DCL, s.TTFB = stats.Summarize(plt), stats.Summarize(dcl), stats.Summarize(ttfb)
		out = append(out, s)
	}
	for i := range out {
		for _, h2 := range out {
			if h2.Protocol == client.H2 && h2.OK > 0 && out[i].OK > 0 {
				out[i].RatioToH2 = out[i].PLT.Median / h2.PLT.Median
			}
		}
	}
	return out
}

// Overhead describes the harness's cost per verified load, in ms.
type Overhead struct {
	// PerLoad is wall time − PLT (− the first visit's PLT for repeat
	// visits, whose overhead includes the pause between the visits).
	PerLoad      stats.Summary `json:"per_load_ms"`
	BrowserStart stats.Summary `json:"browser_start_ms"` // part of it spent starting the browser
}

// MeasureOverhead summarizes the overhead of the verified loads.
func MeasureOverhead(loads []Load) Overhead {
	var perLoad, start []float64
	for _, l := range loads {
		if l.OK() {
			perLoad = append(perLoad, l.WallMs-l.PLTMs-l.FirstVisitPLTMs)
			start = append(start, l.BrowserStartMs)
		}
	}
	return Overhead{PerLoad: stats.Summarize(perLoad), BrowserStart: stats.Summarize(start)}
}

func appendJSONLine(f *os.File, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		return err
	}
	return f.Sync()
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
