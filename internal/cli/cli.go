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
	"os/exec"

	"github.com/quicbench/quicbench/internal/rootless"
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

const usage = `quicbench measures whether HTTP/3 over QUIC loads pages faster than HTTP/2 and
HTTP/1.1 over TCP+TLS, behind an emulated network, in a real browser.

Usage:
  quicbench compare [flags]   load one page over h1, h2 and h3 and compare them
  quicbench shell [flags] -- CMD
                              run CMD in the client namespace behind the emulated link
  quicbench netcheck [flags]  measure the emulated network against its configuration
  quicbench presets           list the network presets, their numbers and sources
  quicbench corpus            the generated web2024 pages' statistics beside the HTTP Archive's
  quicbench import FORMAT PATH --to DIR
                              read a Mahimahi, HAR or WebPageReplay recording into a site archive
  quicbench record URL... --to DIR
                              load pages in Chromium and save every response as a site archive
  quicbench stacks            list the servers' transport stacks and their limits here
  quicbench parity [flags]    compare the servers' download times over h1, h2 and h3
  quicbench plan SPEC         print a spec file's plan: trials and estimated duration
  quicbench run SPEC [flags]  run a spec file's plan into a results database (--resume continues)
  quicbench merge OUT DIR...  merge the run directories of a plan's shards (run --shard I/N)
  quicbench slurm SPEC --shards N --out DIR [--submit]
                              a Slurm job array of the shards and a merge job after it
  quicbench export DIR [flags]
                              write a run's trials and resources as CSV, JSON lines or Parquet
  quicbench report DIR [flags]
                              compare the protocols of a run: statistics, tests, figures, HTML
  quicbench cleanup           remove namespaces left by runs that were killed
  quicbench help              show this text

Run 'quicbench COMMAND -h' for the flags of a command.
`

// Run runs the subcommand in args (without the program name) and returns the
// process exit status.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	if code, done := asRootless(ctx, args, stderr); done {
		return code
	}
	switch args[0] {
	case "compare":
		return runCompare(ctx, args[1:], stdout, stderr)
	case "shell":
		return runShell(ctx, args[1:], os.Stdin, stdout, stderr)
	case "netcheck":
		return runNetcheck(ctx, args[1:], stdout, stderr)
	case "presets":
		return runPresets(args[1:], stdout, stderr)
	case "import":
		return runImport(args[1:], stdout, stderr)
	case "record":
		return runRecord(ctx, args[1:], stdout, stderr)
	case "corpus":
		return runCorpus(args[1:], stdout, stderr)
	case "stacks":
		return runStacks(args[1:], stdout, stderr)
	case "parity":
		return runParity(ctx, args[1:], stdout, stderr)
	case "cleanup":
		return runCleanup(args[1:], stdout, stderr)
	case "plan":
		return runPlan(args[1:], stdout, stderr)
	case "run":
		return runRun(ctx, args[1:], stdout, stderr)
	case "merge":
		return runMerge(args[1:], stdout, stderr)
	case "slurm":
		return runSlurm(args[1:], stdout, stderr)
	case "export":
		return runExport(args[1:], stdout, stderr)
	case "report":
		return runReport(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "quicbench: unknown command %q: use compare, shell, netcheck, parity, plan, run, export, report, presets, corpus, stacks or cleanup (quicbench help lists them)\n", args[0])
	return exitUsage
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
	if _, err := exec.LookPath("ip"); err != nil {
		return fmt.Errorf("the 'ip' command is missing: install iproute2 (apt-get install iproute2)")
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
// to stdout; on a bad flag, one line to stderr. done reports whether the
// command should return code now.
func parseFlags(fs *flag.FlagSet, args []string, usage string, stdout, stderr io.Writer) (code int, done bool) {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case err == nil:
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

// namespaced are the commands that build namespaces, TUN devices and
// servers: an ordinary user runs them in a user namespace of their own.
var namespaced = map[string]bool{"compare": true, "shell": true, "netcheck": true, "parity": true, "run": true}

// asRootless runs a namespaced command of an ordinary user again as root
// of a new user, network and mount namespace (package rootless), and
// prepares that namespace in the run inside. done says the command ran
// (with its status) or could not start.
func asRootless(ctx context.Context, args []string, stderr io.Writer) (code int, done bool) {
	switch {
	case rootless.Inside():
		if err := rootless.Prepare(); err != nil {
			fmt.Fprintln(stderr, "quicbench:", err)
			return exitUsage, true
		}
		return 0, false
	case os.Geteuid() == 0 || !namespaced[args[0]]:
		return 0, false
	}
	code, err := rootless.Run(ctx, args)
	if err != nil {
		fmt.Fprintln(stderr, "quicbench:", err)
		return exitUsage, true
	}
	return code, true
}
