package cli

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/reproduce"
	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/spec"
)

// slurmDir is the directory of a reproduction (below its own) that holds
// each spec's job scripts and shard runs, in slurmDir/<spec>/.
const slurmDir = "slurm"

// maxTaskHours is the longest a shard should take by the plan's estimate:
// a spec whose estimate is longer gets more shards than nodes.
const maxTaskHours = 4

// minTaskTime is the shortest a shard should take by the plan's estimate:
// each pays its testbeds' set-up and netchecks, so a short spec gets
// fewer shards than nodes.
const minTaskTime = 15 * time.Minute

// slurmOptions are reproduce --slurm's flags.
type slurmOptions struct {
	nodes           int
	partition, time string
}

// check refuses what --slurm cannot take: a node count out of range, a
// partition or time a #SBATCH line cannot hold, and rounds (the flag
// named rounds, "" for none: --decide or --sequential), which depend on
// the verdicts of the runs.
func (o slurmOptions) check(rounds string) error {
	switch {
	case o.nodes < 1 || o.nodes > plan.MaxShards:
		return fmt.Errorf("--nodes %d is outside 1 to %d", o.nodes, plan.MaxShards)
	case rounds != "":
		return fmt.Errorf("%s cannot go with --slurm: its rounds depend on the runs' verdicts; run the fixed design with --slurm, or %s without it", rounds, rounds)
	}
	return checkSlurmWords(o.partition, o.time)
}

// submitReproductions submits each reproduction's runs to Slurm
// (submitReproduction), after refusing a directory that holds another
// spec's run.
func submitReproductions(repros []reproduce.Reproduction, o slurmOptions, stdout, stderr io.Writer) int {
	for _, r := range repros {
		err := checkOwnOutput(r.Dir, "--out")
		if err == nil {
			err = r.CheckRuns()
		}
		if err != nil {
			fmt.Fprintln(stderr, "quicbench reproduce:", err)
			return exitUsage
		}
	}
	for _, r := range repros {
		if err := submitReproduction(r, o, stdout); err != nil {
			fmt.Fprintln(stderr, "quicbench reproduce:", err)
			return exitFailure
		}
	}
	return exitOK
}

// reproSlurmJob is one spec's job array and merge job.
type reproSlurmJob struct {
	spec     *spec.Spec
	job      *slurmJob
	estimate time.Duration // on one machine, by the plan
}

// submitReproduction submits each of r's specs whose run is not there yet
// as a Slurm job array and a merge job into the run's directory, after
// saying what it submits and the wall time it expects on o.nodes nodes.
func submitReproduction(r reproduce.Reproduction, o slurmOptions, stdout io.Writer) error {
	jobs, err := reproSlurmJobs(r, o)
	if err != nil {
		return err
	}
	writeSlurmExpectation(stdout, r, jobs, o.nodes)
	for _, j := range jobs {
		if queued := j.job.queuedJobs(); len(queued) > 0 {
			fmt.Fprintf(stdout, "%s: its jobs %s are still queued or running: nothing submitted for it (scancel them to submit it again)\n", j.spec.Name, strings.Join(queued, ", "))
			continue
		}
		array, merge, texts, err := j.job.write()
		if err != nil {
			return err
		}
		arrayID, err := sbatch(array, texts[0])
		if err != nil {
			return err
		}
		mergeID, err := sbatch(merge, texts[1], "--dependency=afterok:"+arrayID)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: submitted array job %s (%d tasks) and merge job %s into %s\n", j.spec.Name, arrayID, j.job.shards, mergeID, r.RunDir(j.spec))
	}
	if len(jobs) > 0 {
		fmt.Fprintf(stdout, "Once the merge jobs are done, evaluate the claims with: %s\n(a task that failed resumes where it stopped: run this command with --slurm again)\n", r.Command)
	}
	return nil
}

// reproSlurmJobs are the job arrays of r's specs whose runs are not
// there: a run already in a spec's directory is done (a merge job writes
// it whole), or was started here, and is left to reproduce without
// --slurm.
func reproSlurmJobs(r reproduce.Reproduction, o slurmOptions) ([]reproSlurmJob, error) {
	bin, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var jobs []reproSlurmJob
	for _, s := range r.AllSpecs() {
		held, err := holdsRun(r.RunDir(s))
		if err != nil {
			return nil, err
		}
		if held {
			continue
		}
		p := plan.Build(s)
		est := p.Estimate(s)
		dir := filepath.Join(r.Dir, slurmDir, s.DirName())
		specFile := filepath.Join(dir, "spec.yaml")
		if err := os.MkdirAll(r.Dir, 0o755); err != nil {
			return nil, err
		}
		// the spec as this reproduction runs it (--seed included), replacing
		// an earlier submission's, never through a link
		if err := safefs.WriteFile(r.Dir, filepath.Join(slurmDir, s.DirName(), "spec.yaml"), s.Source, 0o644); err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		job, err := newSlurmJob(specFile, dir, bin, shardsFor(est, len(p.Trials), o.nodes), o.partition, o.time)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		job.merged = r.RunDir(s)
		jobs = append(jobs, reproSlurmJob{spec: s, job: job, estimate: est})
	}
	return jobs, nil
}

// shardsFor is how many shards a spec of trials whose plan estimates est
// on one machine gets: one per node, more where a shard would take over
// maxTaskHours, fewer where it would take under minTaskTime, never more
// than its trials.
func shardsFor(est time.Duration, trials, nodes int) int {
	n := max(nodes, int(math.Ceil(est.Hours()/maxTaskHours)))
	return max(1, min(n, int(est/minTaskTime), trials, plan.MaxShards))
}

// slurmWallTime is the wall time the jobs are expected to take on nodes
// nodes, their shards taken one after another by the first free node
// (longest first): at least the longest shard, at least the whole work
// over the nodes.
func slurmWallTime(jobs []reproSlurmJob, nodes int) time.Duration {
	var shards []time.Duration
	for _, j := range jobs {
		for range j.job.shards {
			shards = append(shards, j.estimate/time.Duration(j.job.shards))
		}
	}
	free := make([]time.Duration, max(nodes, 1))
	slices.Sort(shards)
	slices.Reverse(shards)
	for _, d := range shards {
		i := 0
		for k := range free {
			if free[k] < free[i] {
				i = k
			}
		}
		free[i] += d
	}
	var wall time.Duration
	for _, f := range free {
		wall = max(wall, f)
	}
	return wall
}

// writeSlurmExpectation says, before anything is submitted, each job's
// shards and the wall time expected on nodes nodes against one machine.
func writeSlurmExpectation(w io.Writer, r reproduce.Reproduction, jobs []reproSlurmJob, nodes int) {
	if len(jobs) == 0 {
		fmt.Fprintf(w, "%s: every spec's run is in %s already: nothing to submit; evaluate the claims with %s\n", r.Paper.ID, r.Dir, r.Command)
		return
	}
	var one time.Duration
	for _, j := range jobs {
		one += j.estimate
		fmt.Fprintf(w, "%s: about %s on one machine by the plan, as %d shards of about %s\n", j.spec.Name, j.estimate.Round(time.Minute), j.job.shards,
			(j.estimate / time.Duration(j.job.shards)).Round(time.Minute))
	}
	nodeWord := "nodes"
	if nodes == 1 {
		nodeWord = "node"
	}
	fmt.Fprintf(w, "Expected wall time on %d %s: about %s (one machine: %s), merges aside\n", nodes, nodeWord, slurmWallTime(jobs, nodes).Round(time.Minute), one.Round(time.Minute))
}
