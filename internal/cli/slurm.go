package cli

import (
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/spec"

	"github.com/quicbench/quicbench/internal/trust"
)

// slurmJob is what the job scripts are made of.
type slurmJob struct {
	bin, spec, dir, name string
	shards               int
	partition, time      string
	// merged is where the merge job writes the merged run; "": dir/merged.
	merged string
}

// runSlurm writes a Slurm job array that runs a spec's shards, and a merge
// job that waits for it; with --submit it submits both.
func runSlurm(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("slurm", flag.ContinueOnError)
	shards := fs.Int("shards", 0, "the `number` of shards: one array task each (required)")
	out := fs.String("out", "", "the study's `directory`: the job scripts, each shard's run in shard-I/, the merged run in merged/ (required)")
	partition := fs.String("partition", "", "the Slurm `partition` to run in (default: the cluster's)")
	limit := fs.String("time", "", "each array task's time `limit`, as sbatch takes it, such as 12:00:00 (default: the partition's)")
	submit := fs.Bool("submit", false, "submit the array and the merge job (sbatch) and print their job ids")
	bin := fs.String("bin", "", "the quicbench `binary` the nodes run (default: this one)")
	const usage = "Usage: quicbench slurm SPEC --shards N --out DIR [--partition P] [--time T] [--submit]\n\n" +
		"Writes DIR/quicbench-array.sbatch, a job array with one task per shard (quicbench run SPEC\n" +
		"--shard I/N, resumed where a requeued task stopped; one task per node, --exclusive), and\n" +
		"DIR/quicbench-merge.sbatch, which merges the shards once every task succeeded (afterok)."
	path, code, done := argAndFlags(fs, args, usage, "a spec file", stdout, stderr)
	if done {
		return code
	}
	job, err := newSlurmJob(path, *out, *bin, *shards, *partition, *limit)
	if err != nil {
		fmt.Fprintln(stderr, "quicbench slurm:", err)
		return exitUsage
	}
	array, merge, texts, err := job.write()
	if err != nil {
		fmt.Fprintln(stderr, "quicbench slurm:", err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "wrote %s and %s\n", array, merge)
	if !*submit {
		fmt.Fprintf(stdout, "submit them with: sbatch --parsable %s, then sbatch --dependency=afterok:JOBID %s\n", array, merge)
		return exitOK
	}
	arrayID, err := sbatch(array, texts[0])
	if err == nil {
		var mergeID string
		if mergeID, err = sbatch(merge, texts[1], "--dependency=afterok:"+arrayID); err == nil {
			fmt.Fprintf(stdout, "submitted array job %s (%d tasks) and merge job %s\n", arrayID, job.shards, mergeID)
			return exitOK
		}
	}
	fmt.Fprintln(stderr, "quicbench slurm:", err)
	return exitFailure
}

// newSlurmJob checks the arguments and makes every path absolute.
func newSlurmJob(specPath, out, bin string, shards int, partition, limit string) (*slurmJob, error) {
	s, err := spec.Load(specPath)
	if err != nil {
		return nil, err
	}
	switch {
	case shards < 1 || shards > plan.MaxShards:
		return nil, fmt.Errorf("--shards %d is outside 1 to %d", shards, plan.MaxShards)
	case out == "":
		return nil, fmt.Errorf("give --out DIR, the study's directory")
	case checkSlurmWords(partition, limit) != nil:
		return nil, checkSlurmWords(partition, limit)
	case strings.ContainsAny(out, "\"\n\r\t"):
		return nil, fmt.Errorf("--out %.80q has a double quote, a tab or a line break, which a #SBATCH line cannot hold: choose another directory", out)
	}
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	job := &slurmJob{name: s.DirName(), shards: shards, partition: partition, time: limit}
	for _, p := range []struct {
		from string
		to   *string
	}{{specPath, &job.spec}, {out, &job.dir}, {bin, &job.bin}} {
		if *p.to, err = filepath.Abs(p.from); err != nil {
			return nil, err
		}
	}
	return job, nil
}

// checkSlurmWords refuses a partition or time limit a #SBATCH line cannot
// hold.
func checkSlurmWords(partition, limit string) error {
	switch {
	case !slurmWord.MatchString(partition):
		return fmt.Errorf("--partition %.40q is not a Slurm partition name: use letters, digits and . _ - (a comma between several)", partition)
	case !slurmWord.MatchString(limit):
		return fmt.Errorf("--time %.40q is not a Slurm time: use digits with : and -, such as 12:00:00 or 1-00:00:00", limit)
	}
	return nil
}

// slurmWord is what a partition or time may be: no space, quote or
// control character reaches a #SBATCH line (empty: the cluster's default).
var slurmWord = regexp.MustCompile(`^[A-Za-z0-9._:,-]*$`)

// write writes both job scripts into the study's directory, never through
// a link and never into a file that is there (safefs), and returns their
// paths and texts: what is submitted is the text written, never a file
// read back.
func (j *slurmJob) write() (array, merge string, texts [2]string, err error) {
	texts = [2]string{j.arrayScript(), j.mergeScript()}
	names := [2]string{"quicbench-array.sbatch", "quicbench-merge.sbatch"}
	for i, name := range names {
		if err := safefs.WriteFile(j.dir, name, []byte(texts[i]), 0o755); err != nil {
			return "", "", texts, fmt.Errorf("job script: %w", err)
		}
	}
	return filepath.Join(j.dir, names[0]), filepath.Join(j.dir, names[1]), texts, nil
}

// header is the #SBATCH lines both scripts share; the output path is in
// double quotes, which sbatch takes off (newSlurmJob refuses a path
// holding one).
func (j *slurmJob) header(name, output string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/bash\n#SBATCH --job-name=%s\n#SBATCH --output=\"%s\"\n", name, output)
	if j.partition != "" {
		fmt.Fprintf(&b, "#SBATCH --partition=%s\n", j.partition)
	}
	return b.String()
}

// arrayScript runs shard $SLURM_ARRAY_TASK_ID, resuming it if a requeued
// task had started it.
func (j *slurmJob) arrayScript() string {
	var b strings.Builder
	b.WriteString(j.header(j.jobName(), filepath.Join(j.dir, "slurm-%A_%a.out")))
	fmt.Fprintf(&b, "#SBATCH --array=1-%d\n#SBATCH --nodes=1\n#SBATCH --exclusive\n", j.shards)
	if j.time != "" {
		fmt.Fprintf(&b, "#SBATCH --time=%s\n", j.time)
	}
	b.WriteString("# One task per node (--exclusive): two timed loads on one machine disturb each other;\n# quicbench's machine-wide lock makes a second one wait in any case.\nset -eu\n")
	fmt.Fprintf(&b, "out=%s/shard-\"$SLURM_ARRAY_TASK_ID\"\nresume=\nif [ -e \"$out/results.db\" ]; then resume=--resume; fi\n", shellQuote(j.dir))
	fmt.Fprintf(&b, "exec %s run %s --shard \"$SLURM_ARRAY_TASK_ID/%d\" --out \"$out\" $resume\n", shellQuote(j.bin), shellQuote(j.spec), j.shards)
	return b.String()
}

// mergeScript merges the shards' runs into j.merged (merged/ by default).
func (j *slurmJob) mergeScript() string {
	var b strings.Builder
	b.WriteString(j.header(j.jobName()+"-merge", filepath.Join(j.dir, "slurm-merge-%j.out")))
	b.WriteString("set -eu\n")
	merged := j.merged
	if merged == "" {
		merged = filepath.Join(j.dir, "merged")
	}
	fmt.Fprintf(&b, "exec %s merge %s", shellQuote(j.bin), shellQuote(merged))
	for i := 1; i <= j.shards; i++ {
		fmt.Fprintf(&b, " %s", shellQuote(filepath.Join(j.dir, fmt.Sprintf("shard-%d", i))))
	}
	b.WriteString("\n")
	return b.String()
}

// lastLine is text's last line that is not blank: sbatch ends its error
// output with the one that says why.
func lastLine(text string) string {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// jobName is the array job's name: the spec's, and a short hash of the
// study's directory, so that the jobs of one study are told from another
// study's of the same spec (squeue --name).
func (j *slurmJob) jobName() string {
	sum := sha256.Sum256([]byte(j.dir))
	return fmt.Sprintf("quicbench-%s-%x", j.name, sum[:4])
}

// queuedJobs lists the ids of the user's jobs of j (its array and merge
// job) that Slurm still holds, pending or running; none where squeue
// cannot say.
func (j *slurmJob) queuedJobs() []string {
	path, err := trust.LookPath("squeue")
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), sbatchTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--noheader", "--me", "--array", "--format=%A", "--name", j.jobName()+","+j.jobName()+"-merge").Output()
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var ids []string
	for _, id := range strings.Fields(string(out)) {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// sbatchTimeout bounds a submission: a controller that does not answer in
// it is an error, not a command that never ends.
const sbatchTimeout = 2 * time.Minute

// sbatch submits the job script whose text is text (written to the file
// script, which names it in errors) and returns the job id. The text goes
// to sbatch on its standard input: what runs on the cluster is what this
// process wrote, whatever happens to the file after.
func sbatch(script, text string, flags ...string) (string, error) {
	path, err := trust.LookPath("sbatch")
	if err != nil {
		return "", fmt.Errorf("%w: install Slurm's client with 'make slurm' (apt-get install slurm-client), and configure it for your cluster", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), sbatchTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, append([]string{"--parsable"}, flags...)...)
	cmd.WaitDelay = time.Second
	cmd.Stdin = strings.NewReader(text)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("sbatch %s: %v: %s (is Slurm's client configured for your cluster, or SLURM_CONF set?)", filepath.Base(script), err, lastLine(string(ee.Stderr)))
		}
		return "", fmt.Errorf("sbatch %s: %v (is Slurm's client installed and configured?)", filepath.Base(script), err)
	}
	id, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
	return id, nil
}
