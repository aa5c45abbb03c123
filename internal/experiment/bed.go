package experiment

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"time"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/cpuuse"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/netcheck"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/site/gen"
	"github.com/quicbench/quicbench/internal/stacks"
	"github.com/quicbench/quicbench/internal/testbed"
)

// bed is a running testbed with its page and the clients that load it.
type bed struct {
	*testbed.Testbed
	page *site.Site
	// clients load the page, one per client level of the spec.
	clients map[factor.Client]client.Browser
	// fallback is the TCP protocol the servers speak beside the h3 they
	// offer under a discovery rule (client.Request.Fallback).
	fallback factor.Protocol
	// deterministic makes the pages' time and randomness fixed; paired
	// starts each load from its repetition's link seeds.
	deterministic, paired bool
	// viewport is the viewport of the page's loads: the spec's, else the
	// page's own (a recording's), zero for the default.
	viewport factor.Viewport
	// replay judges how completely the loads replay the page's site.
	replay *replayCheck
	// calibration is the emulator's latency, taken off the link's delays.
	calibration netcheck.PathLatency
	// cpu accounts for the loads' CPU.
	cpu *cpuuse.Meter
	// clientCPU are the CPU accounting groups of the clients that run in
	// processes of their own; each load's client CPU cap goes to them.
	clientCPU map[factor.Client]*cpuuse.Group
	// laneEvery is how often a load's lanes are sampled (0: not at all).
	laneEvery time.Duration
	// live is what a live page's testbed knows of the site; nil for a
	// page the testbed serves.
	live *liveState
	// flights are what the servers' stacks sent first on the loads'
	// connections, for the record's measured columns.
	flights flightTally
}

// startTestbed builds the testbed of setup: its page from the page seed,
// its link from the link seeds, its servers and stack, and a page loader
// of the spec's client.
func (r *runner) startTestbed(_ context.Context, setup *plan.Setup) (*bed, error) {
	page, err := gen.Build(setup.Page, setup.Levels.Origins(), setup.PageSeed, r.spec.ArchiveDir(setup.Page))
	if err != nil {
		return nil, err
	}
	if err := safefs.MkdirAll(r.cfg.Dir, "testbed", 0o755); err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	tb, err := testbed.Start(testbed.Config{
		Stem: netns.NewRunName("r"),
		Link: testbed.LinkOf(setup.Network, setup.UpSeed, setup.DownSeed), Site: page,
		RunDir: filepath.Join(r.cfg.Dir, "testbed"), Log: r.cfg.Log,
		Stack: stacks.Of(setup.Levels.Stack()), Server: setup.Levels.Server(), QUIC: setup.Levels.QUIC(),
		CPU: r.cpu,
	})
	if err != nil {
		return nil, fmt.Errorf("testbed for %s: %w", setup.Key(), err)
	}
	b := r.newBed(tb, page, setup)
	if err := r.addClients(b); err != nil {
		return nil, errors.Join(err, b.close())
	}
	return b, nil
}

// newBed is the bed of testbed tb serving page for setup, its clients
// still to add (addClients).
func (r *runner) newBed(tb *testbed.Testbed, page *site.Site, setup *plan.Setup) *bed {
	return &bed{Testbed: tb, page: page, clients: map[factor.Client]client.Browser{}, deterministic: r.spec.DeterministicFor(setup.Page),
		paired: r.spec.Pairing, viewport: r.spec.ViewportOr(page.Viewport), replay: newReplayCheck(page, r.spec.MaxUnmatched), cpu: r.cpu,
		clientCPU: map[factor.Client]*cpuuse.Group{}, laneEvery: laneInterval(r.cpu, r.cfg.NoLanes), fallback: fallbackOf(r.spec.Protocols())}
}

// fallbackOf is the TCP protocol servers speak beside an h3 offer in a
// run of protocols: h1 where it is the only TCP protocol compared (a
// paper's h1 against h3), else h2.
func fallbackOf(protocols []factor.Protocol) factor.Protocol {
	if slices.Contains(protocols, factor.H1) && !slices.Contains(protocols, factor.H2) {
		return factor.H1
	}
	return factor.H2
}

// addClients makes a client of each of the spec's client levels in b's
// client namespace, with its CPU group where it runs in a process of its
// own.
func (r *runner) addClients(b *bed) error {
	for _, c := range r.spec.Clients() {
		kind, err := clientKind(c)
		if err != nil {
			return err
		}
		env := client.Env{Binary: r.cfg.ClientBinaries[c], Namespace: b.Topo.Client, ProfileDir: r.work, Timeout: r.spec.Timeout,
			Warm: r.spec.Browser() == factor.BrowserWarm && c.Capabilities().Warm, NewGoClient: goClients(b.Testbed),
			Version: r.cfg.Facts["quicbench_version"]}
		if kind.OwnProcess && r.cpu != nil {
			if env.CPU, err = r.cpu.Group(clientGroup(c)); err != nil {
				return err
			}
			if r.spec.CapsClientCPU() {
				if err := env.CPU.Cappable(); err != nil {
					return err
				}
			}
			if r.split {
				if err := env.CPU.Confine(); err != nil {
					return err
				}
			}
			b.clientCPU[c] = env.CPU
		}
		b.clients[c] = kind.New(env)
	}
	return nil
}

// expected are the page's requests client c must make: all of them for a
// client that runs scripts, else those no script makes.
func (b *bed) expected(c factor.Client) []string {
	if !c.Capabilities().Renders {
		return b.page.WithoutScripts()
	}
	return b.page.Subresources
}

// close stops the clients (a warm browser), then removes the testbed.
func (b *bed) close() error {
	for _, c := range b.clients {
		c.Close() // before the testbed's namespaces go
	}
	return b.Testbed.Close()
}

// record is the testbed's row: its setup and its TCP stack as read back,
// the congestion control from a server socket a client connected to.
func (b *bed) record(setup *plan.Setup) results.Testbed {
	st := b.Stack
	l := setup.Levels
	rec := results.Testbed{Key: setup.Key(), Network: setup.Network.Name, Page: setup.Page.String(), Origins: int64(l.Origins()),
		Stack: string(l.Stack()), Server: string(l.Server()),
		QUICServer: string(l.QUIC().Server()), QUICCC: string(l.QUIC().CC()), QUICInitialWindowBytes: int64(b.QUICTransport.InitialWindowBytes), QUICPacing: b.QUICTransport.Pacing, QUICHyStart: b.QUICTransport.HyStart,
		Congestion: st.Congestion, RouteCongestion: st.RouteCongestion,
		InitCwnd: int64(st.InitCwnd), InitRwnd: int64(st.InitRwnd), SlowStartAfterIdle: st.SlowStartAfterIdle,
		TCPRmem: st.TCPRmem, TCPWmem: st.TCPWmem, Pacing: st.Pacing,
		PathLatencyMs: ms(b.calibration.Measured.Seconds()), CompensationMs: ms((b.calibration.Up + b.calibration.Down).Seconds()), StartedAt: time.Now()}
	b.live.record(&rec)
	b.flights.record(&rec)
	return rec
}

// calibrate measures the emulator's own latency on the setup's network and
// takes it off the link's delays, before any load.
func (r *runner) calibrate(ctx context.Context, bed *bed, setup *plan.Setup) error {
	pl, err := netcheck.Calibrate(ctx, bed.Network, netcheck.Config{Link: bed.Link, RTT: setup.Network.RTT})
	if err != nil {
		return fmt.Errorf("calibrate %s: %w", setup.Network.Name, err)
	}
	if pl.Skipped != "" {
		r.cfg.Log.Info("emulator latency not measured", "network", setup.Network.Name, "why", pl.Skipped)
	}
	bed.calibration = pl
	return nil
}

// netcheck measures the setup's network once per run directory, if the
// spec asks for it, and stores the report.
func (r *runner) netcheck(ctx context.Context, bed *bed, setup *plan.Setup) error {
	if !r.spec.Netcheck {
		return nil
	}
	nw := setup.Network
	checked, err := r.store.Checked(nw.Name)
	if err != nil || checked {
		return err
	}
	link := bed.Link
	check := func() (*netcheck.Report, error) {
		report, err := netcheck.Run(ctx, bed.Network, netcheck.Config{Link: link, RTT: nw.RTT,
			RTTProbes: 200, LossProbes: netcheckLossProbes(link), TransferTime: 2 * time.Second})
		if err != nil {
			return nil, fmt.Errorf("netcheck of %s: %w", nw.Name, err)
		}
		return report, nil
	}
	report, err := check()
	if err != nil {
		return err
	}
	if !report.Passed() {
		// A failed calibration: kept, and measured once more.
		first, _ := json.Marshal(report)
		if err := r.store.SetMeta(results.FirstNetcheckFact+nw.Name, string(first)); err != nil {
			return err
		}
		if report, err = check(); err != nil {
			return err
		}
	}
	config, _ := json.Marshal(link)
	reportJSON, _ := json.Marshal(report)
	if err := r.store.SaveNetwork(nw.Name, config, reportJSON, time.Now()); err != nil {
		return err
	}
	if !report.Passed() {
		r.cfg.Log.Warn("netcheck: the network is not what was configured, twice; see the networks table and the report", "network", nw.Name)
	}
	return nil
}

// loadFiles are where the client writes a load's files; "" for none.
type loadFiles struct {
	// har is the HAR's path, netLog the directory of the browser's net log.
	har, netLog string
}

// artifacts are one attempt's files in the run directory: those the
// client writes (a HAR, a net log), where loadFiles says, and those the
// testbed writes (the pcap, the qlog), started by start once the network
// is quiet and stopped by stop.
type artifacts struct {
	list  []artifact
	files loadFiles
	stops []func() error
}

// artifact is one file of an attempt: its name in the run directory and,
// for the testbed's, how it starts and whether it did.
type artifact struct {
	name    string
	start   func() (stop func() error, err error) // nil: the client's
	started bool
}

// start starts the testbed's files.
func (a *artifacts) start() error {
	for i := range a.list {
		f := &a.list[i]
		if f.start == nil || f.started {
			continue
		}
		stop, err := f.start()
		if err != nil {
			return err
		}
		a.stops, f.started = append(a.stops, stop), true
	}
	return nil
}

// stop stops what start started.
func (a *artifacts) stop() error {
	var errs []error
	for _, stop := range a.stops {
		errs = append(errs, stop())
	}
	a.stops = nil
	return errors.Join(errs...)
}

// names are the files' names, in the spec's order, but the testbed's
// that never started (a load that failed before its first request).
func (a *artifacts) names() []string {
	var out []string
	for _, f := range a.list {
		if f.start == nil || f.started {
			out = append(out, f.name)
		}
	}
	return out
}

// prepareArtifacts names the files of one attempt as the spec asks and
// makes their directories; the pcap and qlog start with artifacts.start.
func (r *runner) prepareArtifacts(bed *bed, t plan.Trial, attempt int) (*artifacts, error) {
	a := &artifacts{}
	base := fmt.Sprintf("%s-a%d", t.ID, attempt)
	if r.spec.Artifacts.Pcap || r.spec.Artifacts.HAR || r.spec.Artifacts.Qlog || r.spec.Artifacts.NetLog {
		if err := safefs.MkdirAll(r.cfg.Dir, "artifacts", 0o755); err != nil {
			return nil, fmt.Errorf("artifacts: %w", err)
		}
	}
	if r.spec.Artifacts.Pcap {
		name := filepath.Join("artifacts", base+".pcap")
		a.list = append(a.list, artifact{name: name, start: func() (func() error, error) { return bed.StartCapture(filepath.Join(r.cfg.Dir, name)) }})
	}
	if r.spec.Artifacts.HAR {
		name := filepath.Join("artifacts", base+".har")
		a.files.har, a.list = filepath.Join(r.cfg.Dir, name), append(a.list, artifact{name: name})
	}
	if r.spec.Artifacts.NetLog {
		name := filepath.Join("artifacts", base+"-netlog")
		if err := safefs.MkdirAll(r.cfg.Dir, name, 0o755); err != nil {
			return nil, fmt.Errorf("artifacts: %w", err)
		}
		a.files.netLog, a.list = filepath.Join(r.cfg.Dir, name), append(a.list, artifact{name: name})
	}
	if r.spec.Artifacts.Qlog && t.Cell.Levels.Protocol() == factor.H3 {
		name := filepath.Join("artifacts", base+"-qlog")
		if err := safefs.MkdirAll(r.cfg.Dir, name, 0o755); err != nil {
			return nil, fmt.Errorf("artifacts: %w", err)
		}
		a.list = append(a.list, artifact{name: name, start: func() (func() error, error) {
			return func() error { return bed.SetQlogDir("") }, bed.SetQlogDir(filepath.Join(r.cfg.Dir, name))
		}})
	}
	return a, nil
}

// goClients makes Go HTTP clients in tb's client namespace.
func goClients(tb *testbed.Testbed) client.NewGoClient {
	return func(proto factor.Protocol, sessions tls.ClientSessionCache, maxConns int) (*http.Client, func(), error) {
		c, err := tb.NewGoClient(string(proto), testbed.GoClientOptions{Sessions: sessions, MaxConnsPerHost: maxConns})
		if err != nil {
			return nil, nil, err
		}
		return c.Client, c.Close, nil
	}
}

// removeStale removes the namespaces and browsers' temporary directories
// of runs that were killed.
func removeStale(log *slog.Logger) {
	dirs, namespaces, err := RemoveStale()
	if len(dirs) > 0 {
		log.Info("removed browsers' temporary directories of dead runs", "dirs", dirs)
	}
	if err != nil {
		log.Warn("could not remove namespaces of dead runs", "err", err)
	} else if len(namespaces) > 0 {
		log.Info("removed namespaces of dead runs", "names", namespaces)
	}
}

// writeFrames writes a visual load's frames into the directory dir/name as
// ms_NNNNNN.jpg, NNNNNN the frame's time since navigation start in whole
// milliseconds (the names Browsertime's visualmetrics reads); of frames
// in the same millisecond the first is kept.
func writeFrames(dir, name string, frames []client.Frame) error {
	if err := safefs.MkdirAll(dir, name, 0o755); err != nil {
		return fmt.Errorf("frames: %w", err)
	}
	written := map[string]bool{}
	for _, f := range frames {
		file := filepath.Join(name, fmt.Sprintf("ms_%06d.jpg", int64(f.AtMs)))
		if written[file] {
			continue
		}
		written[file] = true
		if err := safefs.WriteFile(dir, file, f.JPEG, 0o644); err != nil {
			return fmt.Errorf("frames: %w", err)
		}
	}
	return nil
}
