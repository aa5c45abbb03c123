package experiment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/cpuuse"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/live"
	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/spec"
	"github.com/quicbench/quicbench/internal/testbed"
)

// runner runs the trials of one invocation: it owns the run's database,
// the trials still to run and the stopping rule.
type runner struct {
	cfg   RunConfig
	spec  *spec.Spec
	store *results.Store
	res   *RunResult
	// todo are the trials not recorded yet, in plan order.
	todo    []plan.Trial
	started time.Time
	ran     int
	// timeLeft estimates the time left (ETA in Progress).
	timeLeft *pace
	// earlier counts the recorded attempts of trials run again.
	earlier map[string]int
	// stop leaves out the trials of settings whose answer is known; nil
	// when the spec repeats every cell equally.
	stop *stopper
	// cpu accounts for the loads' CPU, per party; split says the browsers
	// have CPUs of their own (splitCPUs).
	cpu   *cpuuse.Meter
	split bool
	// held is what the run measures on, once held (holdMachine).
	held *machineHold
	// work is the run's private work directory (safefs.NewWorkDir): the
	// browsers' profiles and templates, never in the run directory.
	work string
	// pacer spaces the loads of live pages (politeness) and caps them.
	pacer live.Pacer
	// lastRecorded is when the last trial of the current testbed was
	// recorded, or when the testbed became ready: a trial's overhead is
	// what it took since, beyond its loads.
	lastRecorded time.Time
	// calibrated holds the stack calibrations made so far, by the
	// network and stacks they measured (calibrationKey): a testbed that
	// differs from an earlier one only in its page reuses its measurement.
	calibrated map[string]flightTally
	// overheads are this run's trials' overheads, for the plan's cache
	// of this machine's (MachineOverheads).
	overheads overheadCollector
}

// newRunner builds the plan, opens or creates the results database, and
// lists the trials not yet recorded (forgetting the failed ones first if
// cfg asks) and the attempts the forgotten ones had, and feeds the
// stopping rule what is recorded: what a resumed run does before its
// first trial.
func newRunner(cfg RunConfig) (_ *runner, err error) {
	p := cfg.plan()
	store, err := openStore(cfg, p)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			store.Close()
		}
	}()
	r := &runner{cfg: cfg, spec: cfg.Spec, store: store, res: &RunResult{Total: len(p.Trials)}, pacer: live.Pacer{MaxLoads: cfg.Spec.Live.MaxLoads}, overheads: overheadCollector{}}
	if cfg.Resume && cfg.RetryFailed {
		if r.earlier, err = store.ForgetFailed(); err != nil {
			return nil, err
		}
	}
	done, err := store.Done()
	if err != nil {
		return nil, err
	}
	if r.res.Done, r.res.Failed, err = store.Counts(); err != nil {
		return nil, err
	}
	if r.stop, err = stopperOf(store, cfg.Spec); err != nil {
		return nil, err
	}
	if err := r.stop.load(store, p.Trials); err != nil {
		return nil, err
	}
	for _, t := range p.Trials {
		if !done[t.ID] {
			r.todo = append(r.todo, t)
		}
	}
	r.timeLeft = newPace(r.todo, plan.TrialEstimates(cfg.Spec, r.todo, plan.Overheads{}))
	return r, nil
}

// run runs the trials to do, a testbed group at a time, holding the
// machine's measurement lock while it loads pages.
func (r *runner) run(ctx context.Context) error {
	if len(r.todo) == 0 {
		return nil
	}
	if r.held == nil {
		held, err := holdMachine(ctx, r.cfg)
		if err != nil {
			return err
		}
		defer held.release()
		r.held = held
	}
	if err := r.store.SetMeta("cores", r.held.describe()); err != nil {
		return err
	}
	removeStale(r.cfg.Log)
	var err error
	if r.work, err = safefs.NewWorkDir(); err != nil {
		return err
	}
	defer os.RemoveAll(r.work)
	if r.cpu, err = cpuuse.Open(r.cfg.Log); err != nil {
		return err
	}
	defer r.cpu.Close()
	if r.held.cores != nil {
		r.cpu.MeasureOwnCPUs(r.held.cores.cpus)
	}
	if err := r.cpu.CanLimit(); err != nil && r.spec.CapsClientCPU() {
		return inputErrorf("client_cpu %v needs a CPU cap on the browser, which this machine cannot give: %v (run as root on a host with the cgroup cpu controller, or leave client_cpu out)", r.spec.LevelsOf(factor.IDClientCPU), err)
	}
	if err := r.splitCPUs(); err != nil {
		return err
	}
	accounting := string(r.cpu.Method())
	if why := r.cpu.Why(); why != "" {
		accounting += " (" + why + ")"
		r.cfg.Log.Info("CPU per load from /proc's process trees, not cgroups", "why", why)
	}
	if err := r.store.SetMeta("cpu_accounting", accounting); err != nil {
		return err
	}
	r.started = time.Now()
	for todo := r.todo; len(todo) > 0; {
		n := 1
		for n < len(todo) && todo[n].Cell.Setup == todo[0].Cell.Setup {
			n++
		}
		if err := r.setup(ctx, todo[:n]); err != nil {
			return err
		}
		todo = todo[n:]
	}
	return nil
}

// splitCPUs gives the browser CPUs of its own when every client_cpu level
// of the spec is a cap that leaves a CPU to the rest: as many as the
// largest cap needs (rounded up), the others to quicbench's emulator and
// harness and the servers, started after it. Where it cannot, the browser
// shares their CPUs (a warning says why); the run's cpu_split says which.
func (r *runner) splitCPUs() error {
	levels := r.spec.LevelsOf(factor.IDClientCPU)
	most := 0.0
	for _, l := range levels {
		cores := factor.ClientCPU(l).Cores()
		if cores == 0 {
			return r.store.SetMeta("cpu_split", "none: a client_cpu level is unlimited")
		}
		most = max(most, cores)
	}
	reserved, err := r.cpu.ReserveCPUs(int(math.Ceil(most)))
	if err != nil {
		r.cfg.Log.Warn("the browser shares the emulator's CPUs", "err", err)
		return r.store.SetMeta("cpu_split", "none: "+err.Error())
	}
	r.split = true
	return r.store.SetMeta("cpu_split", "client on CPUs "+reserved+"; quicbench and the servers on the others")
}

// setup builds the testbed of trials (one setup), checks its network once
// per run directory, runs the trials, records what the testbed's TCP stack
// was, and removes the testbed.
func (r *runner) setup(ctx context.Context, trials []plan.Trial) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if r.allSkipped(trials) {
		return nil
	}
	setup := trials[0].Cell.Setup
	start := r.startTestbed
	if setup.Page.Kind == factor.PageLive {
		start = r.startLiveTestbed
	}
	bed, err := start(ctx, setup)
	if err != nil {
		return err
	}
	runErr := r.trials(ctx, bed, trials)
	if bed.live != nil && ctx.Err() == nil {
		bed.live.measureAfter(ctx, bed.Topo.Servers)
	}
	recErr := r.store.SaveTestbed(bed.record(setup))
	return errors.Join(runErr, recErr, bed.close())
}

// trials runs trials on bed, after calibrating its emulator and after the
// network's netcheck if the spec asks for it and the run has none yet.
func (r *runner) trials(ctx context.Context, bed *bed, trials []plan.Trial) error {
	if err := r.calibrate(ctx, bed, trials[0].Cell.Setup); err != nil {
		return err
	}
	if err := r.netcheck(ctx, bed, trials[0].Cell.Setup); err != nil {
		return err
	}
	if bed.live == nil {
		r.calibrateStacks(ctx, bed, trials[0].Cell.Setup)
	}
	r.lastRecorded = time.Now()
	for _, t := range trials {
		if r.stop.skip(t) {
			r.res.Skipped++
			r.timeLeft.skipped(t.ID)
			continue
		}
		if err := r.trial(ctx, bed, t); err != nil {
			return err
		}
	}
	return nil
}

// allSkipped reports whether every trial of a setup is left out by the
// stopping rule already (a resumed run whose settings were decided), so
// that no testbed is built for them; it counts them. Each setting is
// judged at its first trial still to run: every repetition before it is
// recorded.
func (r *runner) allSkipped(trials []plan.Trial) bool {
	if r.stop == nil {
		return false
	}
	first := map[factor.Setting]plan.Trial{}
	for _, t := range trials {
		if f, ok := first[t.Cell.Levels.Setting()]; !ok || t.Rep < f.Rep {
			first[t.Cell.Levels.Setting()] = t
		}
	}
	for _, t := range first {
		if !r.stop.skip(t) {
			return false
		}
	}
	r.res.Skipped += len(trials)
	for _, t := range trials {
		r.timeLeft.skipped(t.ID)
	}
	return true
}

// trial runs one trial with its retries and records it.
func (r *runner) trial(ctx context.Context, bed *bed, t plan.Trial) error {
	page := bed.page
	if bed.live != nil {
		page = nil // what a live page loads is known only by its loads
	}
	rec, err := newRecord(r.spec, t, page)
	if err != nil {
		return err
	}
	var m Measured
	var artifacts []string
	for attempt := 1; attempt <= 1+r.spec.Retries; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if revived, err := bed.Revive(); err != nil {
			return err
		} else if len(revived) > 0 {
			r.cfg.Log.Warn("a server exited; started again", "servers", revived, "trial", t.ID)
		}
		attemptStart := time.Now()
		if attempt == 1 {
			rec.StartedAt = attemptStart
		}
		var err error
		number := r.earlier[t.ID] + attempt
		m, artifacts, err = r.attempt(ctx, bed, t, number)
		if err != nil {
			return err // canceled, or the servers failed: not recorded
		}
		rec.Attempts = int64(number)
		if m.OK() {
			break
		}
		if err := r.store.AddAttempt(results.Attempt{TrialID: t.ID, Attempt: int64(number), Error: m.Failure, StartedAt: attemptStart}); err != nil {
			return err
		}
		r.cfg.Log.Info("trial failed", "trial", t.ID, "attempt", number, "err", m.Failure)
		if why := t.Cell.OnlyFails(); why != "" {
			r.cfg.Log.Info("trial not retried: it can only fail", "trial", t.ID, "why", why)
			break
		}
	}
	rec.FinishedAt = time.Now()
	bed.flights.add(m.Packets, false)
	losses := fillOutcome(&rec, m, artifacts)
	if m.OK() {
		rec.Overhead = results.F(ms(rec.FinishedAt.Sub(r.lastRecorded).Seconds()) - m.PLTMs - m.FirstVisitPLTMs)
	}
	r.lastRecorded = rec.FinishedAt
	r.overheads.add(r.spec, t, rec.Overhead)
	r.stop.record(t, rec)
	rows := results.LoadRows{Resources: resourcesOf(m), Connections: connectionsOf(m), Samples: m.Samples, Losses: losses}
	if err := r.store.AddLoad(rec, rows); err != nil {
		return err
	}
	r.recorded(rec)
	return nil
}

// setPolicy sets what the servers' responses and the testbed's DNS say
// for a load of levels: cacheable or not, and h3 offered where the
// browser is left to discover it (Alt-Svc, or an HTTPS record).
func setPolicy(bed *bed, levels factor.Levels) error {
	if err := bed.SetCache(levels.Cache().On()); err != nil {
		return err
	}
	if bed.Resolver != nil {
		bed.Resolver.SetHTTPS(offers(levels, factor.DiscoveryHTTPSRR))
	}
	return bed.SetAltSvc(altSvcOf(levels))
}

// offers says whether a load of levels offers h3 by discovery rule d.
func offers(levels factor.Levels, d factor.Discovery) bool {
	return levels.Discovery() == d && levels.Protocol() == factor.H3
}

// altSvcOf is the Alt-Svc field of a load of levels: h3 on the origins'
// port for a day where h3 is offered through Alt-Svc, else none.
func altSvcOf(levels factor.Levels) string {
	if !offers(levels, factor.DiscoveryAltSvc) {
		return ""
	}
	return server.AltSvcH3(testbed.OriginPort, factor.AltSvcMaxAge)
}

// attempt makes one attempt of trial t with its artifacts. The previous
// load's connections close and the link drains while the client starts
// (startQuiesce); the attempt's capture starts once the link is quiet
// again after the earlier browsers are gone, before the load's first
// request.
func (r *runner) attempt(ctx context.Context, bed *bed, t plan.Trial, attempt int) (Measured, []string, error) {
	// once per attempt, its priming load's too, and before the servers
	// close their connections beside the browser's start: nginx sets its
	// cache by a reload too
	if err := setPolicy(bed, t.Cell.Levels); err != nil {
		if reason := bed.Exited(); reason != "" && ctx.Err() == nil {
			return Measured{Result: client.Result{Failure: reason}}, nil, nil // a server died since Revive
		}
		return Measured{}, nil, err
	}
	if err := primeIfNeeded(ctx, bed, t); err != nil {
		return Measured{}, nil, err
	}
	if err := r.pace(ctx, bed); err != nil {
		return Measured{}, nil, err
	}
	quiet := startQuiesce(ctx, bed, t.Cell.Network.RTT, r.cfg.Log)
	defer quiet.wait()
	arts, err := r.prepareArtifacts(bed, t, attempt)
	if err != nil {
		return Measured{}, nil, err
	}
	// The waits are the run's, not the load's: its timeout does not stop
	// them (a drain after a load that timed out on a slow link is long),
	// though what they take is gone from its time.
	m, err := measureLoad(ctx, bed, t, arts.files, func(context.Context) error {
		if err := quiet.wait(); err != nil {
			return err
		}
		// what an earlier browser sent as it ended, if it ended after the drain
		if err := awaitQuiet(ctx, bed, quiesceLimit(t.Cell.Network.RTT), r.cfg.Log); err != nil {
			return err
		}
		return arts.start()
	})
	if serr := arts.stop(); serr != nil && err == nil && bed.Exited() == "" { // a server that died has no qlog to stop
		err = serr
	}
	names := arts.names()
	if err == nil && len(m.Frames) > 0 {
		name := filepath.Join("artifacts", fmt.Sprintf("%s-a%d-frames", t.ID, attempt))
		if err = writeFrames(r.cfg.Dir, name, m.Frames); err == nil {
			names = append(names, name)
		}
	}
	return m, names, err
}

// recorded counts a recorded trial and reports the progress.
func (r *runner) recorded(rec results.Trial) {
	r.ran++
	r.res.Ran, r.res.Done = r.ran, r.res.Done+1
	if rec.Status != results.StatusOK {
		r.res.Failed++
	}
	r.timeLeft.recorded(rec.ID)
	if r.cfg.OnTrial != nil {
		r.cfg.OnTrial(Progress{Trial: rec, Done: r.res.Done, Failed: r.res.Failed, Total: r.res.Total, ETA: r.timeLeft.left(time.Since(r.started))})
	}
}
