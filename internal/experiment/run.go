package experiment

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/loader"
	"github.com/quicbench/quicbench/internal/netcheck"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/origin"
	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/spec"
	"github.com/quicbench/quicbench/internal/testbed"
)

// RunConfig is a run of a spec's plan.
type RunConfig struct {
	Spec *spec.Spec
	// Dir is the run directory: results.db, spec.yaml, artifacts.
	Dir string
	// Resume continues the run in Dir; it refuses a changed spec.
	Resume bool
	// ChromiumPath is the browser; empty: client.DefaultChromiumPath.
	ChromiumPath string
	// Facts are stored with the run (versions, host); see HostFacts.
	Facts map[string]string
	Log   *slog.Logger
	// OnTrial, if set, is called after each recorded trial.
	OnTrial func(Progress)
}

// Progress is the state of a run after a trial.
type Progress struct {
	Trial results.Trial
	// Done and Failed count recorded trials, this run's and earlier ones';
	// Total is the plan's size.
	Done, Failed, Total int
	// ETA is the time left at this run's pace so far.
	ETA time.Duration
}

// InputError is an error the user fixes by changing the command or the
// spec, not a failure of the run.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

func inputErrorf(format string, args ...any) error { return &InputError{fmt.Errorf(format, args...)} }

// RunResult sums up a run.
type RunResult struct {
	Total, Done, Failed int
	// Ran is how many trials this invocation recorded.
	Ran         int
	Interrupted bool
	Elapsed     time.Duration
}

// Run runs the trials of cfg.Spec's plan that are not yet in the results
// database, in plan order, each recorded the moment it ends. A failed trial
// is retried up to Spec.Retries times, its attempts recorded, and recorded
// as failed if every attempt failed. Canceling ctx stops after removing the
// testbed; the trial in progress is not recorded and runs again on resume.
func Run(ctx context.Context, cfg RunConfig) (*RunResult, error) {
	start := time.Now()
	s := cfg.Spec
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	store, res, todo, err := prepare(cfg)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	if len(todo) == 0 {
		res.Elapsed = time.Since(start)
		return res, nil
	}
	if removed, err := netns.RemoveStale(); err != nil {
		cfg.Log.Warn("could not remove namespaces of dead runs", "err", err)
	} else if len(removed) > 0 {
		cfg.Log.Info("removed namespaces of dead runs", "names", removed)
	}
	r := &runner{cfg: cfg, spec: s, store: store, res: res, started: time.Now(), left: len(todo)}
	for len(todo) > 0 {
		n := 1
		for n < len(todo) && todo[n].Cell.SetupKey() == todo[0].Cell.SetupKey() {
			n++
		}
		if err := r.setup(ctx, todo[:n]); err != nil {
			res.Interrupted = true
			res.Elapsed = time.Since(start)
			return res, err
		}
		todo = todo[n:]
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// prepare builds the plan, opens or creates the results database, and
// lists the trials not yet recorded: what a resumed run does before its
// first trial.
func prepare(cfg RunConfig) (*results.Store, *RunResult, []plan.Trial, error) {
	p := plan.Build(cfg.Spec)
	store, err := openStore(cfg, p)
	if err != nil {
		return nil, nil, nil, err
	}
	done, err := store.Done()
	if err != nil {
		store.Close()
		return nil, nil, nil, err
	}
	total, failed, err := store.Counts()
	if err != nil {
		store.Close()
		return nil, nil, nil, err
	}
	res := &RunResult{Total: len(p.Trials), Done: total, Failed: failed}
	var todo []plan.Trial
	for _, t := range p.Trials {
		if !done[t.ID] {
			todo = append(todo, t)
		}
	}
	return store, res, todo, nil
}

// openStore creates the run's database, or opens it for a resume and
// checks that the spec is the one the run started with.
func openStore(cfg RunConfig, p plan.Plan) (*results.Store, error) {
	path := filepath.Join(cfg.Dir, results.FileName)
	if cfg.Resume {
		store, err := results.Open(path)
		if err != nil {
			return nil, &InputError{err}
		}
		was, err := store.Meta("spec_sha256")
		if err != nil {
			store.Close()
			return nil, err
		}
		if was != cfg.Spec.SHA256 {
			store.Close()
			return nil, inputErrorf("the spec changed since this run started (its SHA-256 was %.12s…, now %.12s…; the original is %s): restore it, or start a new run with another --out", was, cfg.Spec.SHA256, filepath.Join(cfg.Dir, "spec.yaml"))
		}
		return store, nil
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	meta := map[string]string{
		"spec_sha256": cfg.Spec.SHA256, "spec_name": cfg.Spec.Name, "spec": string(cfg.Spec.Source),
		"plan_trials": fmt.Sprint(len(p.Trials)), "created_at": time.Now().UTC().Format(time.RFC3339),
	}
	for k, v := range cfg.Facts {
		meta[k] = v
	}
	if _, err := os.Stat(path); err == nil {
		return nil, inputErrorf("%s holds a run already: continue it with --resume, or choose another --out", cfg.Dir)
	}
	store, err := results.Create(path, meta)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(cfg.Dir, "spec.yaml"), cfg.Spec.Source, 0o644); err != nil {
		store.Close()
		return nil, fmt.Errorf("run directory: %w", err)
	}
	return store, nil
}

// runner runs the trials of one invocation.
type runner struct {
	cfg     RunConfig
	spec    *spec.Spec
	store   *results.Store
	res     *RunResult
	started time.Time
	ran     int
	left    int
}

// seedOf derives a stable seed for one level of a factor.
func (r *runner) seedOf(kind uint64, index int) uint64 {
	return rand.New(rand.NewPCG(r.spec.Seed, kind<<32|uint64(index))).Uint64()
}

// setup builds the testbed of trials (one setup key), checks the network
// once per run directory, and runs the trials.
func (r *runner) setup(ctx context.Context, trials []plan.Trial) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c := trials[0].Cell
	nw := r.spec.Networks[c.NetworkIndex]
	link := nw.Resolved.Link
	link.Up.Seed, link.Down.Seed = r.seedOf(1, 2*c.NetworkIndex), r.seedOf(1, 2*c.NetworkIndex+1)
	page, err := site.Synthetic(r.spec.Pages[c.PageIndex], site.OriginHosts(c.Origins), r.seedOf(2, c.PageIndex))
	if err != nil {
		return err
	}
	tb, err := testbed.Start(testbed.Config{
		Stem: netns.RunName(os.Getpid(), fmt.Sprintf("r%04x", rand.Uint32()&0xffff)),
		Link: link, Site: page, RunDir: filepath.Join(r.cfg.Dir, "testbed"), Log: r.cfg.Log,
		Stack: r.spec.Stacks[c.StackIndex], Server: c.Server,
	})
	if err != nil {
		return fmt.Errorf("testbed for %s: %w", c.SetupKey(), err)
	}
	runErr := r.trials(ctx, tb, page, nw, link, trials)
	return errors.Join(runErr, tb.Close())
}

func (r *runner) trials(ctx context.Context, tb *testbed.Testbed, page *site.Site, nw spec.Network, link emulator.Config, trials []plan.Trial) error {
	if r.spec.Netcheck {
		checked, err := r.store.Checked(nw.Name)
		if err != nil {
			return err
		}
		if !checked {
			report, err := netcheck.Run(ctx, tb.Network, netcheck.Config{Link: link, RTT: nw.Resolved.RTT,
				RTTProbes: 200, LossProbes: netcheckLossProbes(link), TransferTime: 2 * time.Second})
			if err != nil {
				return fmt.Errorf("netcheck of %s: %w", nw.Name, err)
			}
			config, _ := json.Marshal(link)
			reportJSON, _ := json.Marshal(report)
			if err := r.store.SaveNetwork(nw.Name, config, reportJSON, time.Now()); err != nil {
				return err
			}
			if !report.Passed() {
				r.cfg.Log.Warn("netcheck: the network is not what was configured; see the networks table", "network", nw.Name)
			}
		}
	}
	chromium := &client.Chromium{Path: r.cfg.ChromiumPath, Namespace: tb.Topo.Client, ProfileDir: r.cfg.Dir, Timeout: r.spec.Timeout,
		Warm: r.spec.Browser == spec.BrowserWarm}
	defer chromium.Close() // before the testbed's namespaces go
	var browser client.PageLoader = chromium
	if r.spec.Client == spec.ClientLoader {
		browser = NewLoader(tb, r.spec.Timeout, r.cfg.Facts["quicbench_version"])
	}
	for _, t := range trials {
		if err := r.trial(ctx, tb, browser, page, nw, t); err != nil {
			return err
		}
	}
	return nil
}

// trial runs one trial with its retries and records it.
func (r *runner) trial(ctx context.Context, tb *testbed.Testbed, browser client.PageLoader, page *site.Site, nw spec.Network, t plan.Trial) error {
	c := t.Cell
	rec := results.Trial{ID: t.ID, Seq: t.Seq, Rep: t.Rep, Network: c.Network, Page: c.Page, Origins: c.Origins, Stack: c.Stack,
		Server: c.Server, Protocol: string(c.Protocol), Visit: string(c.Visit), Cache: c.Cache, Client: r.spec.Client}
	var m Measured
	var artifacts []string
	for attempt := 1; attempt <= 1+r.spec.Retries; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		attemptStart := time.Now()
		if attempt == 1 {
			rec.StartedAt = attemptStart
		}
		stop, names, harPath, err := r.startArtifacts(tb, t, attempt)
		if err != nil {
			return err
		}
		m, err = MeasureLoad(ctx, tb, browser, page, c.Protocol, c.Visit, c.Cache, nw.Resolved.RTT, harPath)
		if serr := stop(); serr != nil && err == nil {
			err = serr
		}
		if err != nil {
			return err // canceled, or the servers failed: not recorded
		}
		rec.Attempts, artifacts = attempt, names
		if m.OK() {
			break
		}
		if err := r.store.AddAttempt(results.Attempt{TrialID: t.ID, Attempt: attempt, Error: m.Failure, StartedAt: attemptStart}); err != nil {
			return err
		}
		r.cfg.Log.Info("trial failed", "trial", t.ID, "attempt", attempt, "err", m.Failure)
	}
	rec.FinishedAt = time.Now()
	fillTrial(&rec, m)
	rec.Artifacts = strings.Join(artifacts, ",")
	var resources []results.Resource
	for _, rt := range m.Resources {
		resources = append(resources, results.Resource{URL: rt.URL, Protocol: rt.Protocol, StartMs: rt.StartMs,
			ResponseEndMs: rt.ResponseEndMs, TransferBytes: rt.TransferBytes, Status: rt.Status})
	}
	if err := r.store.AddTrial(rec, resources); err != nil {
		return err
	}
	r.ran++
	r.left--
	r.res.Ran, r.res.Done = r.ran, r.res.Done+1
	if rec.Status != results.StatusOK {
		r.res.Failed++
	}
	if r.cfg.OnTrial != nil {
		perTrial := time.Since(r.started) / time.Duration(r.ran)
		r.cfg.OnTrial(Progress{Trial: rec, Done: r.res.Done, Failed: r.res.Failed, Total: r.res.Total, ETA: perTrial * time.Duration(r.left)})
	}
	return nil
}

// fillTrial copies a load's outcome and metrics into rec.
func fillTrial(rec *results.Trial, m Measured) {
	rec.Status, rec.Error = results.StatusOK, ""
	if !m.OK() {
		rec.Status, rec.Error = results.StatusFailed, m.Failure
	}
	rec.DocumentProto = m.DocumentProtocol
	rec.Wall = results.F(m.WallMs)
	rec.ServerRequests = int(m.ServerRequests.Total())
	rec.Connections = len(m.Connections)
	rec.Handshakes = handshakeList(m.Connections)
	rec.TCPCongestion = tcpCongestion(m.Connections)
	if b, err := json.Marshal(m.Connections); err == nil && m.Connections != nil {
		rec.ConnectionsJSON = string(b)
	}
	if m.OK() {
		rec.PLT, rec.OnLoad, rec.DCL, rec.TTFB = results.F(m.PLTMs), results.F(m.OnLoadMs), results.F(m.DCLMs), results.F(m.TTFBMs)
		rec.Overhead = results.F(m.WallMs - m.PLTMs - m.FirstVisitPLTMs)
		if m.Visit == client.RepeatVisit {
			rec.FirstVisitPLT = results.F(m.FirstVisitPLTMs)
		}
	}
}

// handshakeList is "kind:count" pairs in a fixed order, such as
// "0rtt:1" or "resumed:3,full:3".
func handshakeList(recs []origin.ConnRecord) string {
	counts := origin.HandshakeCounts(recs)
	var parts []string
	for _, kind := range []string{origin.Handshake0RTT, origin.HandshakeResumed, origin.HandshakeFull, origin.HandshakeIncomplete, origin.HandshakeUnknown} {
		if n := counts[kind]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s:%d", kind, n))
		}
	}
	return strings.Join(parts, ",")
}

// startArtifacts starts the pcap and qlog of one attempt, as the spec asks,
// and returns their stop function, their paths relative to the run
// directory, and the path the HAR goes to ("" for none).
func (r *runner) startArtifacts(tb *testbed.Testbed, t plan.Trial, attempt int) (func() error, []string, string, error) {
	var names []string
	stops := []func() error{}
	base := fmt.Sprintf("%s-a%d", t.ID, attempt)
	if err := os.MkdirAll(filepath.Join(r.cfg.Dir, "artifacts"), 0o755); err != nil {
		return nil, nil, "", fmt.Errorf("artifacts: %w", err)
	}
	if r.spec.Artifacts.Pcap {
		name := filepath.Join("artifacts", base+".pcap")
		stop, err := startCapture(tb, filepath.Join(r.cfg.Dir, name))
		if err != nil {
			return nil, nil, "", err
		}
		stops, names = append(stops, stop), append(names, name)
	}
	harPath := ""
	if r.spec.Artifacts.HAR {
		name := filepath.Join("artifacts", base+".har")
		harPath, names = filepath.Join(r.cfg.Dir, name), append(names, name)
	}
	if r.spec.Artifacts.Qlog && t.Cell.Protocol == client.H3 {
		name := filepath.Join("artifacts", base+"-qlog")
		tb.Origin.SetQlogDir(filepath.Join(r.cfg.Dir, name))
		stops, names = append(stops, func() error { tb.Origin.SetQlogDir(""); return nil }), append(names, name)
	}
	return func() error {
		var errs []error
		for _, stop := range stops {
			errs = append(errs, stop())
		}
		return errors.Join(errs...)
	}, names, harPath, nil
}

// NewLoader returns the built-in loader, with fresh Go clients in tb's
// client namespace.
func NewLoader(tb *testbed.Testbed, timeout time.Duration, version string) *loader.Loader {
	return &loader.Loader{Timeout: timeout, Version: version,
		NewClient: func(proto client.Protocol, sessions tls.ClientSessionCache, maxConns int) (*http.Client, func(), error) {
			c, err := tb.NewGoClient(string(proto), testbed.GoClientOptions{Sessions: sessions, MaxConnsPerHost: maxConns})
			if err != nil {
				return nil, nil, err
			}
			return c.Client, c.Close, nil
		}}
}
