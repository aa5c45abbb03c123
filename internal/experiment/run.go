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
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/site/gen"
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
	// ClientBinaries are the clients' executables (browsers'); a client
	// without one: its default.
	ClientBinaries map[factor.Client]string
	// Facts are stored with the run (versions, host); see HostFacts.
	Facts map[string]string
	Log   *slog.Logger
	// OnTrial, if set, is called after each recorded trial.
	OnTrial func(Progress)
	// WaitLock bounds the wait for the machine's measurement lock (or
	// for Cores free CPUs) while another run holds it. Zero:
	// DefaultWaitLock; WaitForever (negative) waits as long as it takes.
	WaitLock time.Duration
	// Cores, if above 0, is how many CPUs the run measures on, its own
	// (claimCores): other runs with cores of their own measure beside it
	// on the others. 0: the whole machine, one run at a time.
	Cores int
	// ReadBack reads the run back from its database when Run returns
	// (RunResult.Recorded): every trial with its resources and
	// connections, the testbeds and the netchecks. For a comparison's
	// summary; a large study leaves it off.
	ReadBack bool
	// Shard, if set, runs only that shard of the plan (plan.Plan.Shard);
	// a resumed run must give the same.
	Shard plan.ShardID
	// Cells, if set, runs only these cells (their IDs), each as many
	// times as given, its first repetitions (plan.Plan.Only): the loads a
	// reproduction adds to the settings of its undecided claims; a
	// resumed run must give the same.
	Cells map[string]int
	// Grow, with Resume and Cells, lets the run go on to Cells and the
	// spec's repetitions where it started with others, the spec being
	// otherwise the same: a sequential reproduction's pilot or round
	// that an earlier version of its design planned. What it loaded
	// stays (growRun).
	Grow bool
	// NoLanes leaves the loads unsampled: no lanes of CPU and link bytes
	// under their waterfalls, and none of the sampling's CPU (a wake-up
	// of quicbench's process every 100 ms, BENCHMARKS.md).
	NoLanes bool
}

// cellsText is how the run stores its chosen cells: "<ID>:<loads>" by
// ID, space-separated ("" for every cell).
func (cfg RunConfig) cellsText() string {
	var parts []string
	for _, id := range slices.Sorted(maps.Keys(cfg.Cells)) {
		parts = append(parts, fmt.Sprintf("%s:%d", id, cfg.Cells[id]))
	}
	return strings.Join(parts, " ")
}

// plan is the part of the spec's plan this run runs.
func (cfg RunConfig) plan() plan.Plan {
	return plan.Build(cfg.Spec).Shard(cfg.Spec, cfg.Shard).Only(cfg.Cells)
}

// Progress is the state of a run after a trial.
type Progress struct {
	Trial results.Trial
	// Done and Failed count recorded trials, this run's and earlier ones';
	// Total is the plan's size.
	Done, Failed, Total int
	// ETA is the time left: the plan's estimate of the trials to run at
	// the pace of this run's trials so far against their estimates.
	ETA time.Duration
}

// InputError is an error the user fixes by changing the command or the
// spec, not a failure of the run: the results package's, so that one
// from the store (an export or merge of a run that lacks a table) is one
// too without translation.
type InputError = results.InputError

func inputErrorf(format string, args ...any) error {
	return &InputError{Err: fmt.Errorf(format, args...)}
}

// RunResult sums up a run.
type RunResult struct {
	Total, Done, Failed int
	// Ran is how many trials this invocation recorded; Skipped how many
	// it left out because their setting's answer was known (spec until).
	Ran, Skipped int
	Interrupted  bool
	Elapsed      time.Duration
	// Recorded is the run as its database holds it when Run returns, if
	// RunConfig.ReadBack asked for it (also after an error, when the
	// database could be read).
	Recorded *results.Recorded
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
	if err := CheckArchives(cfg.Spec); err != nil {
		return nil, err
	}
	// A new run waits for the machine before it writes anything, so that
	// one that gives up leaves its directory as it was.
	var held *machineHold
	if !cfg.Resume {
		if err := checkNewRunDir(cfg.Dir); err != nil {
			return nil, err
		}
		var err error
		if held, err = holdMachine(ctx, cfg); err != nil {
			return nil, err
		}
		defer held.release()
	}
	unlock, err := lockRunDir(cfg)
	if err != nil {
		return nil, err
	}
	defer unlock()
	r, err := newRunner(cfg)
	if err != nil {
		return nil, err
	}
	defer r.store.Close()
	r.held = held
	err = r.run(ctx)
	r.overheads.save(time.Now(), cfg.Log)
	r.res.Interrupted = err != nil
	r.res.Elapsed = time.Since(start)
	if cfg.ReadBack {
		var rerr error
		if r.res.Recorded, rerr = r.store.ReadAll(); rerr != nil && err == nil {
			err = rerr
		}
	}
	return r.res, err
}

// CheckArchives reads every archive page of s (manifest and bodies), so
// that a missing or damaged archive stops a run before its first trial,
// and plan refuses what run would.
func CheckArchives(s *spec.Spec) error {
	for _, p := range s.Pages {
		if p.Kind != factor.PageArchive {
			continue
		}
		if _, err := gen.Build(p, 1, 0, s.ArchiveDir(p)); err != nil {
			return &InputError{Err: fmt.Errorf("page %s: %w", p, err)}
		}
	}
	return nil
}
