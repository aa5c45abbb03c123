package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/quicbench/quicbench/internal/experiment"
	"github.com/quicbench/quicbench/internal/spec"
)

// parallelRun is run --parallel: the plan in shards measured side by
// side, each a quicbench run of its own on CPUs of its own, merged once
// all are done.
type parallelRun struct {
	path string // the spec file, as given
	spec *spec.Spec
	// dir holds shard-I/ (each shard's run) and shard-I.log (its
	// output); merged is where the shards are merged (dir/merged if "").
	dir, merged   string
	shards, cores int
	resume        bool
	// flags are what each shard's run is given beside its shard,
	// directory and cores: the user's (userFlags).
	flags []string
	// command is quicbench's command that runs it ("run", "reproduce"),
	// again the command line that continues it.
	command, again string
}

// mergedDir is where the shards are merged.
func (p parallelRun) mergedDir() string {
	if p.merged != "" {
		return p.merged
	}
	return filepath.Join(p.dir, "merged")
}

// userFlags are the flags of fs the user set, as arguments, but those
// named in except.
func userFlags(fs *flag.FlagSet, except ...string) []string {
	var args []string
	fs.Visit(func(f *flag.Flag) {
		if !slices.Contains(except, f.Name) {
			args = append(args, "--"+f.Name+"="+f.Value.String())
		}
	})
	return args
}

// shardDir is shard i's run directory.
func (p parallelRun) shardDir(i int) string { return filepath.Join(p.dir, fmt.Sprintf("shard-%d", i)) }

// runParallel starts the shards, waits for them (Ctrl-C is handed on:
// each keeps its completed trials), and merges them into dir/merged.
func runParallel(ctx context.Context, p parallelRun, stdout, stderr io.Writer) int {
	if err := p.shareCores(); err != nil {
		fmt.Fprintf(stderr, "quicbench %s: %v\n", p.command, err)
		return exitUsage
	}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "quicbench %s: %v\n", p.command, err)
		return exitFailure
	}
	fmt.Fprintf(stderr, "%s in %d shards side by side, %d CPUs each: each shard's output in %s/shard-I.log\n", p.spec.Name, p.shards, p.cores, p.dir)
	start := time.Now()
	failed := p.runShards(ctx, stderr)
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "quicbench %s: interrupted; every shard kept its completed trials: continue with %s\n", p.command, p.again)
		return exitInterrupted
	}
	if failed > 0 {
		fmt.Fprintf(stderr, "quicbench %s: %d of %d shards failed (their logs in %s say why); continue with %s\n", p.command, failed, p.shards, p.dir, p.again)
		return exitFailure
	}
	merged := p.mergedDir()
	res, err := experiment.Merge(ctx, merged, p.shardDirs())
	if err != nil {
		return failedToStart(ctx, p.command, fmt.Errorf("merging the shards: %w", err), stderr)
	}
	fmt.Fprintf(stdout, "%d shards side by side, %d trials, in %s; the run: %s (quicbench report %s)\n", res.Shards, res.Trials, time.Since(start).Round(time.Second), merged, merged)
	return exitOK
}

// shareCores checks the CPUs: p.cores each (if given), or this process's
// CPUs shared out, at least one a shard.
func (p *parallelRun) shareCores() error {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return err
	}
	usable := set.Count()
	if p.cores == 0 {
		p.cores = usable / p.shards
	}
	if p.cores < 1 || p.cores*p.shards > usable {
		return fmt.Errorf("--parallel %d with %d CPUs each needs %d CPUs, and this machine gives quicbench %d: give fewer shards or --cores", p.shards, max(p.cores, 1), p.shards*max(p.cores, 1), usable)
	}
	if _, err := os.Lstat(filepath.Join(p.mergedDir(), "results.db")); err == nil {
		return fmt.Errorf("%s is a merged run already: give a new --out", p.mergedDir())
	}
	return nil
}

// shardDirs are the shards' run directories.
func (p parallelRun) shardDirs() []string {
	dirs := make([]string, p.shards)
	for i := range dirs {
		dirs[i] = p.shardDir(i + 1)
	}
	return dirs
}

// runShards starts every shard and waits for all; it says when each
// ends and returns how many failed.
func (p parallelRun) runShards(ctx context.Context, stderr io.Writer) int {
	type ended struct {
		shard int
		err   error
		log   string
	}
	done := make(chan ended)
	var running []*exec.Cmd
	for i := 1; i <= p.shards; i++ {
		cmd, logPath, err := p.startShard(i)
		if err != nil {
			fmt.Fprintf(stderr, "quicbench %s: shard %d/%d: %v\n", p.command, i, p.shards, err)
			go func(i int) { done <- ended{shard: i, err: err} }(i)
			continue
		}
		running = append(running, cmd)
		go func(i int) { done <- ended{shard: i, err: cmd.Wait(), log: logPath} }(i)
	}
	failed := 0
	stop := ctx.Done()
	for range p.shards {
		select {
		case <-stop:
			for _, cmd := range running {
				cmd.Process.Signal(syscall.SIGINT)
			}
			stop = nil
		case e := <-done:
			if e.err != nil && ctx.Err() == nil {
				failed++
			}
			fmt.Fprintf(stderr, "shard %d/%d: %s\n", e.shard, p.shards, shardEnding(e.err, e.log))
			continue
		}
		e := <-done
		fmt.Fprintf(stderr, "shard %d/%d: %s\n", e.shard, p.shards, shardEnding(e.err, e.log))
	}
	return failed
}

// startShard starts shard i: quicbench run with the user's flags, its
// shard, directory and cores, its output to shard-I.log.
func (p parallelRun) startShard(i int) (*exec.Cmd, string, error) {
	bin, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	args := append([]string{"run", p.path, "--shard", fmt.Sprintf("%d/%d", i, p.shards), "--out", p.shardDir(i), "--cores", strconv.Itoa(p.cores)}, p.flags...)
	if _, err := os.Lstat(filepath.Join(p.shardDir(i), "results.db")); err == nil && p.resume {
		args = append(args, "--resume")
	}
	logPath := filepath.Join(p.dir, fmt.Sprintf("shard-%d.log", i))
	logFile, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, "", err
	}
	defer logFile.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	return cmd, logPath, nil
}

// shardEnding is how a shard ended: its run's last line of output.
func shardEnding(err error, logPath string) string {
	last := logEnding(logPath)
	var exit *exec.ExitError
	switch {
	case err == nil:
		return last
	case errors.As(err, &exit):
		return fmt.Sprintf("exit %d: %s", exit.ExitCode(), last)
	}
	return err.Error()
}

// logEnding is a shard log's last line that is not blank (from its
// last 64 KiB), at most 200 bytes: the shard's own summary or error.
func logEnding(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const tail = 64 << 10
	if info, err := f.Stat(); err == nil && info.Size() > tail {
		f.Seek(info.Size()-tail, io.SeekStart)
	}
	data, _ := io.ReadAll(io.LimitReader(f, tail))
	last := lastLine(string(data))
	if len(last) > 200 {
		last = last[:200] + "…"
	}
	return last
}

// flagGiven reports whether the user set the flag named name in fs.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}
