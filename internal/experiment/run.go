// Package experiment is quicbench's one experiment path: it runs a spec's
// plan (package plan) trial by trial on testbeds (package testbed), loads
// each page with a client (Chromium or the built-in loader), and commits
// every trial to the run's results database (package results) the moment
// it ends. `quicbench run` runs a spec file this way, and `quicbench
// compare` a one-cell spec made from its flags, so both write the same
// results.db that `report` and `export` read.
package experiment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/spec"
)

// RunConfig is a run of a spec's plan.
type RunConfig struct {
	Spec *spec.Spec
	// Dir is the run directory: results.db, spec.yaml, artifacts.
	Dir string
	// Resume continues the run in Dir; it refuses a changed spec.
	Resume bool
	// RetryFailed, with Resume, runs the failed trials again (their
	// earlier attempts are kept and the new ones numbered after them).
	RetryFailed bool
	// ChromiumPath is the browser; empty: client.DefaultChromiumPath.
	ChromiumPath string
	// Facts are stored with the run (versions, host); see HostFacts.
	Facts map[string]string
	Log   *slog.Logger
	// OnTrial, if set, is called after each recorded trial.
	OnTrial func(Progress)
	// Shard, if set, runs only that shard of the plan (plan.Plan.Shard);
	// a resumed run must give the same.
	Shard plan.ShardID
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
	// Ran is how many trials this invocation recorded; Skipped how many
	// it left out because their setting's answer was known (spec until).
	Ran, Skipped int
	Interrupted  bool
	Elapsed      time.Duration
	stop         *stopper
}

// Run runs the trials of cfg.Spec's plan that are not yet in the results
// database, in plan order, each recorded the moment it ends. A failed trial
// is retried up to Spec.Retries times, its attempts recorded, and recorded
// as failed if every attempt failed. Canceling ctx stops after removing the
// testbed; the trial in progress is not recorded and runs again on resume.
func Run(ctx context.Context, cfg RunConfig) (*RunResult, error) {
	start := time.Now()
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if err := checkArchives(cfg.Spec); err != nil {
		return nil, err
	}
	unlock, err := lockRunDir(cfg)
	if err != nil {
		return nil, err
	}
	defer unlock()
	store, res, todo, earlier, err := prepare(cfg)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	if len(todo) > 0 {
		unlockMachine, err := lockMachine(ctx, cfg.Log)
		if err != nil {
			return res, err
		}
		defer unlockMachine()
		removeStale(cfg.Log)
	}
	r := &runner{cfg: cfg, spec: cfg.Spec, store: store, res: res, started: time.Now(), left: len(todo), earlier: earlier, stop: res.stop}
	for len(todo) > 0 {
		n := 1
		for n < len(todo) && todo[n].Cell.Setup == todo[0].Cell.Setup {
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

// checkArchives reads every archive page of s, so that a missing or
// damaged archive stops the run before its first trial.
func checkArchives(s *spec.Spec) error {
	for _, p := range s.Pages {
		if p.Kind != factor.PageArchive {
			continue
		}
		if _, err := site.Build(p, 1, 0, s.ArchiveDir(p)); err != nil {
			return &InputError{fmt.Errorf("page %s: %w", p, err)}
		}
	}
	return nil
}

// prepare builds the plan, opens or creates the results database, and
// lists the trials not yet recorded (forgetting the failed ones first if
// cfg asks) and the attempts the forgotten ones had: what a resumed run
// does before its first trial.
func prepare(cfg RunConfig) (*results.Store, *RunResult, []plan.Trial, map[string]int, error) {
	p := plan.Build(cfg.Spec).Shard(cfg.Spec, cfg.Shard)
	store, err := openStore(cfg, p)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	var earlier map[string]int
	if cfg.Resume && cfg.RetryFailed {
		earlier, err = store.ForgetFailed()
	}
	var done map[string]bool
	if err == nil {
		done, err = store.Done()
	}
	var total, failed int
	if err == nil {
		total, failed, err = store.Counts()
	}
	if err != nil {
		store.Close()
		return nil, nil, nil, nil, err
	}
	res := &RunResult{Total: len(p.Trials), Done: total, Failed: failed}
	stop, err := newStopper(stopRuleOf(cfg.Spec))
	if err == nil {
		err = stop.load(store, p.Trials)
	}
	if err != nil {
		store.Close()
		return nil, nil, nil, nil, err
	}
	res.stop = stop
	var todo []plan.Trial
	for _, t := range p.Trials {
		if !done[t.ID] {
			todo = append(todo, t)
		}
	}
	return store, res, todo, earlier, nil
}

// openStore creates the run's database, or opens it for a resume and
// checks that the spec is the one the run started with.
func openStore(cfg RunConfig, p plan.Plan) (*results.Store, error) {
	path := filepath.Join(cfg.Dir, results.FileName)
	if cfg.Resume {
		return openToResume(cfg, path)
	}
	meta := map[string]string{
		"spec_sha256": cfg.Spec.SHA256, "spec_name": cfg.Spec.Name, "spec": string(cfg.Spec.Source),
		"plan_trials": fmt.Sprint(len(p.Trials)), "created_at": time.Now().UTC().Format(time.RFC3339),
	}
	if cfg.Shard.N > 0 {
		meta["shard"] = cfg.Shard.String()
	}
	if r := stopRuleOf(cfg.Spec); r != nil {
		k, v := results.StopRuleFact(*r)
		meta[k] = v
	}
	for k, v := range cfg.Facts {
		meta[k] = v
	}
	store, err := results.Create(path, meta)
	if err != nil {
		return nil, err
	}
	if err := safefs.WriteFile(cfg.Dir, "spec.yaml", cfg.Spec.Source, 0o644); err != nil {
		store.Close()
		return nil, fmt.Errorf("run directory: %w", err)
	}
	return store, nil
}

// lockRunDir takes the run directory's lock, for a new run after checking
// that the directory is new or empty (a run never writes among files it
// did not make).
func lockRunDir(cfg RunConfig) (func(), error) {
	if cfg.Resume {
		if _, err := os.Lstat(filepath.Join(cfg.Dir, results.FileName)); err != nil {
			return nil, inputErrorf("no results database in %s: is it the run directory of a quicbench run or compare?", cfg.Dir)
		}
	} else {
		entries, err := os.ReadDir(cfg.Dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, inputErrorf("run directory: %v", err)
		}
		for _, e := range entries {
			if e.Name() == results.FileName {
				return nil, inputErrorf("%s holds a run already: continue it with --resume, or choose another --out", cfg.Dir)
			}
		}
		if len(entries) > 0 {
			return nil, inputErrorf("%s exists and is not empty: a new run starts in a new or empty directory; choose another --out", cfg.Dir)
		}
	}
	unlock, err := safefs.Lock(cfg.Dir)
	var held *safefs.HeldError
	if errors.As(err, &held) {
		return nil, &InputError{err}
	}
	if err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	return unlock, nil
}

// openToResume opens the database at path and checks the spec's hash.
func openToResume(cfg RunConfig, path string) (*results.Store, error) {
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
	if shard, err := store.Meta("shard"); err != nil || shard != cfg.Shard.String() {
		store.Close()
		if err != nil {
			return nil, err
		}
		return nil, inputErrorf("this run is shard %q of its plan, not %q: resume it with the --shard it started with", shard, cfg.Shard.String())
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
	// earlier counts the recorded attempts of trials run again.
	earlier map[string]int
	// stop leaves out the trials of settings whose answer is known; nil
	// when the spec repeats every cell equally.
	stop *stopper
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
	bed, err := r.startTestbed(setup)
	if err != nil {
		return err
	}
	runErr := r.trials(ctx, bed, trials)
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
	for _, t := range trials {
		if r.stop.skip(t) {
			r.res.Skipped++
			r.left--
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
	r.left -= len(trials)
	return true
}

// trial runs one trial with its retries and records it.
func (r *runner) trial(ctx context.Context, bed *bed, t plan.Trial) error {
	rec, err := newRecord(r.spec, t, bed.page)
	if err != nil {
		return err
	}
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
	}
	rec.FinishedAt = time.Now()
	fillOutcome(&rec, m, artifacts)
	if bed.Stack.Congestion == "" { // nginx's sockets: from its connections
		bed.Stack.Congestion = rec.TCPCongestion
	}
	r.stop.record(t, rec)
	if err := r.store.AddTrial(rec, resourcesOf(m), connectionsOf(m)); err != nil {
		return err
	}
	r.recorded(rec)
	return nil
}

// attempt makes one attempt of trial t with its artifacts.
func (r *runner) attempt(ctx context.Context, bed *bed, t plan.Trial, attempt int) (Measured, []string, error) {
	stop, names, harPath, err := r.startArtifacts(bed, t, attempt)
	if err != nil {
		return Measured{}, nil, err
	}
	m, err := measureLoad(ctx, bed, t, harPath)
	if serr := stop(); serr != nil && err == nil {
		err = serr
	}
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
	r.left--
	r.res.Ran, r.res.Done = r.ran, r.res.Done+1
	if rec.Status != results.StatusOK {
		r.res.Failed++
	}
	if r.cfg.OnTrial != nil {
		perTrial := time.Since(r.started) / time.Duration(r.ran)
		r.cfg.OnTrial(Progress{Trial: rec, Done: r.res.Done, Failed: r.res.Failed, Total: r.res.Total, ETA: perTrial * time.Duration(r.left)})
	}
}
