// Package cli turns command lines into configurations and runs quicbench's
// subcommands. Flags become config structs here and nothing else: the work
// happens in the packages the subcommands call.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/quicbench/quicbench/internal/rootless"

	"github.com/quicbench/quicbench/internal/trust"
)

// Version is quicbench's version, recorded with every run; the Makefile
// sets it to the git commit at link time.
var Version = "devel"

// Exit statuses.
const (
	exitOK          = 0
	exitFailure     = 1 // the run failed
	exitUsage       = 2 // bad input or a missing prerequisite
	exitInterrupted = 130
)

// command is one subcommand: its name and arguments as the usage shows
// them, what it does in a line, and how it runs.
type command struct {
	name, args, summary string
	// doc is the page of docs/ that documents the command, which its -h
	// names.
	doc string
	run func(ctx context.Context, args []string, stdout, stderr io.Writer) int
	// namespaced commands build namespaces, TUN devices and servers: an
	// ordinary user runs them as root of a user namespace of their own,
	// and each checks its privileges once (checkPrivileges).
	namespaced bool
}

// commands is every subcommand, in the order the usage lists them: the
// one list the usage, the dispatch and the unknown-command error come
// from.
func commands() []command {
	noCtx := func(run func([]string, io.Writer, io.Writer) int) func(context.Context, []string, io.Writer, io.Writer) int {
		return func(_ context.Context, args []string, stdout, stderr io.Writer) int { return run(args, stdout, stderr) }
	}
	shell := func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		return runShell(ctx, args, os.Stdin, stdout, stderr)
	}
	return []command{
		{"compare", "[flags]", "load one page over h1, h2 and h3 and compare them", "docs/compare.md", runCompare, true},
		{"shell", "[flags] -- CMD", "run CMD in the client namespace behind the emulated link", "docs/emulator.md", shell, true},
		{"netcheck", "[flags]", "measure the emulated network against its configuration", "docs/emulator.md", runNetcheck, true},
		{"presets", "", "list the network presets, their numbers and sources", "docs/emulator.md", noCtx(runPresets), false},
		{"corpus", "", "the generated web2024 pages' statistics beside the HTTP Archive's", "docs/recorded.md", noCtx(runCorpus), false},
		{"import", "FORMAT PATH --to DIR", "read a Mahimahi, HAR or WebPageReplay recording into a site archive", "docs/recorded.md", runImport, false},
		{"record", "URL... --to DIR", "load pages in Chromium and save every response as a site archive", "docs/recorded.md", runRecord, false},
		{"stacks", "", "list the servers' transport stacks and their limits here", "docs/emulator.md", noCtx(runStacks), false},
		{"parity", "[flags]", "compare the servers' download times over h1, h2 and h3", "docs/emulator.md", runParity, true},
		{"plan", "SPEC", "print a spec file's plan: trials and estimated duration", "docs/experiments.md", runPlan, false},
		{"run", "SPEC [flags]", "run a spec file's plan into a results database (--resume continues)", "docs/experiments.md", runRun, true},
		{"merge", "OUT DIR...", "merge the run directories of a plan's shards (run --shard I/N)", "docs/cluster.md", runMerge, false},
		{"slurm", "SPEC --shards N --out DIR [--submit]", "a Slurm job array of the shards and a merge job after it", "docs/cluster.md", noCtx(runSlurm), false},
		{"export", "DIR [flags]", "write a run's trials and resources as CSV, JSON lines or Parquet", "docs/report.md", runExport, false},
		{"report", "DIR [flags]", "compare the protocols of a run: statistics, tests, figures, HTML", "docs/report.md", runReport, false},
		{"reproduce", "PAPER [flags]", "run a paper's design and set each of its claims beside our measurement", "docs/reproduce.md", runReproduce, true},
		{"doctor", "[flags]", "what this machine offers a study, and what that means for the results", "docs/troubleshooting.md", runDoctor, true},
		{"cleanup", "", "remove namespaces left by runs that were killed", "docs/troubleshooting.md", noCtx(runCleanup), false},
		{"help", "", "show this text", "README.md", func(_ context.Context, _ []string, stdout, _ io.Writer) int {
			fmt.Fprint(stdout, usage())
			return exitOK
		}, false},
	}
}

// lookup returns the command called name.
func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name || c.name == "help" && (name == "-h" || name == "-help" || name == "--help") {
			return c, true
		}
	}
	return command{}, false
}

// usage is the program's help text, one entry per command: the command
// and its arguments, and what it does (on a line of its own below a long
// command line).
func usage() string {
	var b strings.Builder
	b.WriteString("quicbench measures whether HTTP/3 over QUIC loads pages faster than HTTP/2 and\n" +
		"HTTP/1.1 over TCP+TLS, behind an emulated network, in a real browser.\n\nUsage:\n")
	const column = 30
	for _, c := range commands() {
		line := strings.TrimSpace("quicbench " + c.name + " " + c.args)
		if len(line) > column-4 {
			fmt.Fprintf(&b, "  %s\n%s%s\n", line, strings.Repeat(" ", column), c.summary)
			continue
		}
		fmt.Fprintf(&b, "  %-*s%s\n", column-2, line, c.summary)
	}
	b.WriteString("\nRun 'quicbench COMMAND -h' for the flags of a command and the page of docs/ that\ndocuments it; README.md says where to start.\n")
	return b.String()
}

// Run runs the subcommand in args (without the program name) and returns the
// process exit status.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return exitUsage
	}
	c, ok := lookup(args[0])
	if !ok {
		var names []string
		for _, c := range commands() {
			names = append(names, c.name)
		}
		fmt.Fprintf(stderr, "quicbench: unknown command %.40q: use %s or %s (quicbench help says what each does)\n", args[0],
			strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
		return exitUsage
	}
	if code, done := asRootless(ctx, c, args, stderr); done {
		return code
	}
	code := c.run(ctx, args[1:], stdout, stderr)
	if c.doc != "" && helpAsked(args[1:]) {
		fmt.Fprintf(stdout, "\nDocumentation: %s in quicbench's source tree.\n", c.doc)
	}
	return code
}

// helpAsked reports whether args ask for a command's help (-h, -help or
// --help before a "--" that ends the flags).
func helpAsked(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// checkPrivileges returns a one-line error saying how to fix a missing
// prerequisite of anything that builds namespaces.
func checkPrivileges() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("quicbench needs root in its namespace (it creates network namespaces and TUN devices) and could not get it")
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		return fmt.Errorf("/dev/net/tun is missing: load the TUN module with 'modprobe tun' (in a container, pass --device /dev/net/tun)")
	}
	if _, err := trust.LookPath("ip"); err != nil {
		return fmt.Errorf("the 'ip' command: %v: install iproute2 (apt-get install iproute2)", err)
	}
	return nil
}

func newLogger(w io.Writer, verbose bool) *slog.Logger {
	level := slog.LevelWarn
	if verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// parseFlags parses a subcommand's args. On -h it prints usage and the flags
// to stdout; on a bad flag, or a path flag the ownership rule refuses
// (pathFlags), one line to stderr. done reports whether the command should
// return code now.
func parseFlags(fs *flag.FlagSet, args []string, usage string, stdout, stderr io.Writer) (code int, done bool) {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case err == nil:
		if err := trust.CheckUserPaths(flagPaths(fs)...); err != nil {
			fmt.Fprintf(stderr, "quicbench %s: %v\n", fs.Name(), err)
			return exitUsage, true
		}
		return 0, false
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(stdout, "%s\n\nFlags:\n", usage)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return exitOK, true
	}
	fmt.Fprintf(stderr, "quicbench %s: %v (see quicbench %s -h)\n", fs.Name(), err, fs.Name())
	return exitUsage, true
}

// asRootless runs a namespaced command of an ordinary user again as root
// of a new user, network and mount namespace (package rootless), and
// prepares that namespace in the run inside. done says the command ran
// (with its status) or could not start.
func asRootless(ctx context.Context, c command, args []string, stderr io.Writer) (code int, done bool) {
	switch {
	case rootless.Inside():
		if err := rootless.Prepare(); err != nil {
			fmt.Fprintln(stderr, "quicbench:", err)
			return exitUsage, true
		}
		return 0, false
	case os.Geteuid() == 0 || !c.namespaced || submitsOnly(args):
		return 0, false
	}
	code, err := rootless.Run(ctx, args)
	if err != nil {
		fmt.Fprintln(stderr, "quicbench:", err)
		return exitUsage, true
	}
	return code, true
}

// submitsOnly says whether a namespaced command's args (the command's name
// first) only submit it to Slurm (reproduce --slurm): sbatch must reach
// the cluster's controller from the user's own namespaces, as the user
// (inside a user namespace of its own, munge credentials fail and sbatch
// says "Batch job submission failed: No error").
func submitsOnly(args []string) bool {
	for _, a := range args[min(1, len(args)):] {
		switch a {
		case "--slurm", "-slurm", "--slurm=true", "-slurm=true":
			return true
		case "--":
			return false
		}
	}
	return false
}

// noArgs parses the flags of a command that takes no argument: -h prints
// its usage, a bad flag or an argument is one line and status 2. done
// reports whether the command should return code now.
func noArgs(fs *flag.FlagSet, args []string, usage string, stdout, stderr io.Writer) (code int, done bool) {
	if code, done := parseFlags(fs, args, usage, stdout, stderr); done {
		return code, true
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "quicbench %s: unexpected argument %.40q: it takes none (see quicbench %s -h)\n", fs.Name(), fs.Arg(0), fs.Name())
		return exitUsage, true
	}
	return 0, false
}

// fileOf is the file w writes to: w itself, or what a writer that wraps a
// file (quicbench's standard output, watched for a closed pipe) says its
// file is; false for any other writer.
func fileOf(w io.Writer) (*os.File, bool) {
	switch f := w.(type) {
	case *os.File:
		return f, true
	case interface{ File() *os.File }:
		return f.File(), true
	}
	return nil, false
}

// interruptedOr is exitInterrupted when ctx was canceled (Ctrl-C), else
// code.
func interruptedOr(ctx context.Context, code int) int {
	if ctx.Err() != nil {
		return exitInterrupted
	}
	return code
}
