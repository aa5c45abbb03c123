package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/testbed/standin"
	"github.com/quicbench/quicbench/internal/testenv"
	"github.com/quicbench/quicbench/internal/trust"
)

// notPathFlags is every flag of every command that names no path. With
// pathFlags it classifies every flag: a command's new flag fails
// TestEveryPathFlagFollowsTheOwnershipRule until it is in one of them.
var notPathFlags = map[string][]string{
	"compare": {"allow-private", "browser", "cache", "client", "client-cpu", "details", "deterministic", "discovery", "dns", "down", "drop-head", "gilbert",
		"har", "jitter", "json", "lanes", "loss", "loss-down", "loss-up", "max-loads", "max-unmatched", "net", "netcheck", "netlog",
		"origins", "pairing", "path", "pcap", "protocols", "qlog", "queue", "quic-cc", "quic-server", "resolve", "retries", "rtt",
		"runs", "seed", "server", "stack", "timeout", "udp", "until", "unverified", "up", "user-agent-suffix", "verbose", "viewport", "visit",
		"visual", "wait-lock"},
	"shell":     {"down", "drop-head", "gilbert", "jitter", "loss", "loss-down", "loss-up", "net", "path", "queue", "quiet", "rtt", "seed", "server", "server-port", "servers", "udp", "up"},
	"netcheck":  {"confidence", "down", "drop-head", "gilbert", "jitter", "json", "loss", "loss-down", "loss-probes", "loss-up", "net", "path", "probes", "queue", "rtt", "seed", "transfer", "udp", "up"},
	"corpus":    {"archive", "list", "pages", "seed"},
	"import":    {"document", "upgrade-http", "viewport"},
	"record":    {"settle", "timeout"},
	"parity":    {"connection", "json", "net", "qlog", "quic", "reps", "seed", "server", "sizes", "stack"},
	"plan":      {"detect", "list", "measure-overheads", "power", "shards"},
	"run":       {"cores", "lanes", "parallel", "resume", "retry-failed", "shard", "verbose", "wait-lock"},
	"slurm":     {"partition", "shards", "submit", "time"},
	"export":    {"format"},
	"report":    {"baseline", "compare", "metric", "seed", "trial", "until", "until-min"},
	"reproduce": {"budget", "decide", "list", "nodes", "parallel", "partition", "pilot", "replay-sequential", "scale", "seed", "sequential", "slurm", "time", "verbose"},
}

// flagLine is a flag's line in a command's -h.
var flagLine = regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`)

// flagsOf lists command's flags as its -h prints them.
func flagsOf(t *testing.T, command string) []string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	Run(context.Background(), []string{command, "-h"}, &stdout, &stderr)
	var names []string
	for _, m := range flagLine.FindAllStringSubmatch(stdout.String(), -1) {
		names = append(names, m[1])
	}
	return names
}

// hostile is what the enumerating test hands a path: a directory a
// stranger owns (with a file and a program of root's in it), and a link
// the stranger owns, in a sticky directory everyone may write, to a
// directory, a file and a program only root may read.
type hostile struct {
	theirs, sticky string
	rootDir        string // 0700, root's
	rootFile       string // in rootDir
	rootProgram    string // in rootDir
}

func newHostile(t *testing.T) hostile {
	t.Helper()
	h := hostile{theirs: strangersDir(t)}
	base := t.TempDir()
	h.rootDir = filepath.Join(base, "private")
	h.sticky = filepath.Join(base, "sticky")
	for dir, mode := range map[string]os.FileMode{h.rootDir: 0o700, h.sticky: 0o777 | os.ModeSticky} {
		if err := os.Mkdir(dir, mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(dir, mode)
	}
	h.rootFile = filepath.Join(h.rootDir, "secret.yaml")
	h.rootProgram = filepath.Join(h.rootDir, "program")
	os.WriteFile(h.rootFile, []byte("name: secret\n"), 0o600)
	os.WriteFile(h.rootProgram, []byte("#!/bin/sh\n"), 0o700)
	for _, f := range []string{"spec.yaml", "program"} {
		os.WriteFile(filepath.Join(h.theirs, f), []byte("#!/bin/sh\n"), 0o755)
	}
	return h
}

// values are the hostile values of a path of kind k, by scenario.
func (h hostile) values(t *testing.T, k trust.PathKind) map[string]string {
	t.Helper()
	link := func(name, target string) string {
		path := filepath.Join(h.sticky, name)
		os.Remove(path)
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
		if err := os.Lchown(path, strangerUID, strangerUID); err != nil {
			t.Fatal(err)
		}
		return path
	}
	switch k {
	case trust.Output:
		return map[string]string{"their directory": h.theirs, "new in their directory": filepath.Join(h.theirs, "new"), "their link to root's": link("out", h.rootDir)}
	case trust.OutputFile:
		return map[string]string{"in their directory": filepath.Join(h.theirs, "out.pcap"), "their link to root's": link("out.pcap", h.rootFile)}
	case trust.InputDir, trust.Input:
		return map[string]string{"their directory": h.theirs, "their link to root's": link("in", h.rootDir)}
	case trust.InputFile:
		return map[string]string{"in their directory": filepath.Join(h.theirs, "spec.yaml"), "their link to root's": link("in.yaml", h.rootFile)}
	case trust.Program:
		return map[string]string{"in their directory": filepath.Join(h.theirs, "program"), "their link to root's": link("prog", h.rootProgram)}
	}
	t.Fatalf("no hostile values for %v", k)
	return nil
}

// baseArgs are what each command needs beside a path flag to get that
// far; a spec and a run directory of root's.
func baseArgs(t *testing.T, command, specPath, runDir string) []string {
	switch command {
	case "corpus":
		return []string{"--archive", "1"}
	case "import":
		return []string{"har", filepath.Join(t.TempDir(), "absent.har")}
	case "record":
		return []string{"https://a.test/"}
	case "plan", "run":
		return []string{specPath}
	case "slurm":
		return []string{specPath, "--shards", "1"}
	case "export", "report":
		return []string{runDir}
	case "reproduce":
		return []string{"masri"}
	}
	return nil
}

// refusedInOneLine checks that args, run as root, exit with status 2 and
// one line naming the stranger (or, for a file written into the sticky
// directory, that everyone may write it), and leave the stranger's directory as it
// was.
func refusedInOneLine(t *testing.T, h hostile, args []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	before, _ := os.ReadDir(h.theirs)
	var stdout, stderr bytes.Buffer
	code := Run(ctx, args, &stdout, &stderr)
	refused := strings.Contains(stderr.String(), "uid 4242") || strings.Contains(stderr.String(), "can be written by other users")
	if code != exitUsage || strings.Count(stderr.String(), "\n") != 1 || !refused {
		t.Errorf("%q: exit %d, %q; want one line naming uid 4242 (or the directory everyone may write), status 2", args, code, stderr.String())
	}
	if after, _ := os.ReadDir(h.theirs); len(after) != len(before) {
		t.Errorf("%q: root wrote into the stranger's directory (%d entries, %d before)", args, len(after), len(before))
	}
}

// TestEveryPathFlagFollowsTheOwnershipRule enumerates every flag of every
// command from its -h (a new flag fails until it is classified), and
// hands each path flag and each positional path, as root, a directory
// another user owns and that user's link to something only root may
// read: each is refused in one line before the command does anything.
func TestEveryPathFlagFollowsTheOwnershipRule(t *testing.T) {
	h := newHostile(t)
	specPath := filepath.Join(t.TempDir(), "spec.yaml")
	os.WriteFile(specPath, []byte("name: t\nrepetitions: 1\nfactors:\n  networks: [{rtt: 20ms}]\n  pages: [synthetic:2x1KB]\n  protocols: [h2, h3]\n"), 0o644)
	runDir := copyRun(t, "until")
	paths := pathFlags()
	for _, c := range commands() {
		if c.name == "help" {
			continue
		}
		flags := flagsOf(t, c.name)
		for _, f := range flags {
			if _, ok := paths[c.name][f]; !ok && !slices.Contains(notPathFlags[c.name], f) {
				t.Errorf("quicbench %s --%s is not classified: add it to pathFlags (it names a path) or to notPathFlags", c.name, f)
			}
		}
		for f, kind := range paths[c.name] {
			if !slices.Contains(flags, f) {
				t.Errorf("pathFlags names quicbench %s --%s, which -h does not list", c.name, f)
				continue
			}
			for scenario, value := range h.values(t, kind) {
				if f == "page" {
					value = "archive:" + value
				}
				t.Run(c.name+"/"+f+"/"+scenario, func(t *testing.T) {
					refusedInOneLine(t, h, append(append([]string{c.name}, baseArgs(t, c.name, specPath, runDir)...), "--"+f, value))
				})
			}
		}
	}
	for command, kinds := range pathArgs() {
		for i, p := range kinds {
			for scenario, value := range h.values(t, p.Kind) {
				args := []string{command}
				switch {
				case command == "import":
					args = append(args, "har", value, "--to", filepath.Join(t.TempDir(), "s"))
				case command == "merge" && i == 0:
					args = append(args, value, runDir)
				case command == "merge":
					args = append(args, filepath.Join(t.TempDir(), "merged"), runDir, value)
				case command == "slurm":
					args = append(args, value, "--shards", "1", "--out", filepath.Join(t.TempDir(), "study"))
				default:
					args = append(args, value)
				}
				t.Run(command+"/"+p.Name+"/"+scenario, func(t *testing.T) { refusedInOneLine(t, h, args) })
			}
		}
	}
}

// TestARefusedLivePageIsRefusedBeforeTheRun: a live page on a loopback
// address was refused after the run's header, an empty table and
// results.db; one on the host's own address (not loopback) was accepted
// and reached every port of the host. Both are now one line, status 2,
// and no run directory.
func TestARefusedLivePageIsRefusedBeforeTheRun(t *testing.T) {
	testenv.RequireRoot(t)
	standin.Namespace(t) // the host's own address standin.Gateway
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--page", "url:https://127.0.0.1/"}, "127.0.0.1 resolves to 127.0.0.1, a loopback address"},
		{[]string{"--page", "url:https://own.test/", "--resolve", "own.test=" + standin.Gateway.String()}, "one of this machine's own addresses"},
		{[]string{"--page", "url:https://[::1]/"}, "IPv6 address"},
		{[]string{"--page", "url:https://a.test/", "--resolve", "a,MAP=203.0.113.10"}, "is not a DNS name"},
	} {
		out := filepath.Join(t.TempDir(), "c")
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), append(append([]string{"compare"}, c.args...), "--runs", "1", "--out", out), &stdout, &stderr)
		if code != exitUsage || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), c.want) || stdout.Len() > 0 {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want status 2 and one line saying %q", c.args, code, stderr.String(), stdout.String(), c.want)
		}
		if _, err := os.Lstat(out); err == nil {
			t.Errorf("%q: the run directory was made", c.args)
		}
	}
}

// TestHintsQuoteHostileHostNames: compare's hint to pin a host a page
// loads from printed the host as it came ("add --resolve
// 0$(reboot).evil.test"); a name that is not a plain word is quoted for
// the shell.
func TestHintsQuoteHostileHostNames(t *testing.T) {
	for host, want := range map[string]string{
		"static.example.test":  "static.example.test",
		"0$(reboot).evil.test": `'0$(reboot).evil.test'`,
		"a'b.test":             `'a'\''b.test'`,
	} {
		if got := shellWord(host); got != want {
			t.Errorf("shellWord(%q) = %s, want %s", host, got, want)
		}
	}
}

// TestTheStacksLineSaysWhatTheWireShowed: the stacks line prints what was
// applied and what the loads' packets showed, and warns where they differ
// (tcp+ said "pacing true" while its first flights left in one burst).
func TestTheStacksLineSaysWhatTheWireShowed(t *testing.T) {
	f := results.F
	paced := results.Testbed{Stack: "tcp+", Congestion: "cubic", InitCwnd: 32, Pacing: true,
		MeasuredTCPFlight: f(32), MeasuredTCPSpreadMs: f(38.3), MeasuredTCPPacing: "paced", MeasuredTCPConnections: 14,
		QUICServer: "quic-go", QUICCC: "newreno", QUICInitialWindowBytes: 40960, QUICPacing: true,
		MeasuredQUICFlight: f(33), MeasuredQUICFlightBytes: f(41268), MeasuredQUICSpreadMs: f(35.6), MeasuredQUICPacing: "paced", MeasuredQUICConnections: 14,
		MeasuredTCPBackoff: f(0.68), MeasuredTCPBackoffs: 1, MeasuredQUICBackoff: f(0.74), MeasuredQUICBackoffs: 1}
	if got := stackText(paced, 100*time.Millisecond); !strings.Contains(got, "pacing true; measured on the wire: first flight of 32 packets over 38.3 ms, paced (median of 14 connections); after a loss it kept 0.68 of its sending (0.7 applied; one connection)") {
		t.Errorf("stack line %q", got)
	}
	if w := analysis.WireWarnings(paced, 100*time.Millisecond); len(w) != 0 {
		t.Errorf("warnings where applied and measured agree: %q", w)
	}
	burst := paced
	burst.MeasuredTCPPacing, burst.MeasuredTCPFlight = "burst", f(10)
	burst.MeasuredQUICFlightBytes = f(20000)
	burst.MeasuredTCPBackoff = f(0.45)
	burst.QUICServer, burst.QUICCC, burst.MeasuredQUICBackoff = "quiche", "reno", f(0.71)
	w := strings.Join(analysis.WireWarnings(burst, 100*time.Millisecond), "\n")
	for _, want := range []string{"TCP pacing is on as applied, but its first flights left in one burst on the wire",
		"TCP's first flights were 10 packets on the wire, against an initial window of 32 applied",
		"QUIC's first flights were 20000 B on the wire, against an initial window of 40960 B applied",
		"TCP's congestion control cubic keeps 0.7 of its window on a loss as applied (keeps most), but kept 0.45 of its sending on the wire (halves)",
		"QUIC's congestion control reno keeps 0.5 of its window on a loss as applied (halves), but kept 0.71 of its sending on the wire (keeps most)"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings %q lack %q", w, want)
		}
	}
	// quic-go's NewReno keeps 0.7 (its CUBIC sender in Reno mode), and BBR
	// may send more after a loss than before: neither warns
	goReno := paced
	goReno.MeasuredQUICBackoff = f(0.7)
	bbr := paced
	bbr.Congestion, bbr.MeasuredTCPBackoff = "bbr", f(1.6)
	if w := slices.Concat(analysis.WireWarnings(goReno, 100*time.Millisecond), analysis.WireWarnings(bbr, 100*time.Millisecond)); len(w) != 0 {
		t.Errorf("warnings for quic-go's 0.7 and BBR's 1.6: %q", w)
	}
	if got := stackText(paced, 20*time.Millisecond); !strings.Contains(got, "first flight of 32 packets over 38.3 ms, longer than the 20ms round trip: several flights, not a window") {
		t.Errorf("a flight longer than its round trip: stack line %q", got)
	}
	if got := stackText(results.Testbed{Stack: "tcp", Congestion: "cubic"}, 0); !strings.Contains(got, "measured on the wire: no connection sent a whole first window; its answer to a loss not measured") {
		t.Errorf("unmeasured stack line %q", got)
	}
}
