package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/experiment"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/spec"
)

// TestExperimentCommandsBadInput: every bad command line gets one line on
// stderr and exit status 2, before anything runs.
func TestExperimentCommandsBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("repetitions: 2\nfactors:\n  networks: [{rtt: 10ms}]\n  pages: [synthetic:1x1KB]\n  protocols: [h2, h9]\n"), 0o644)
	checkUsageErrors(t, []usageCase{
		{[]string{"plan"}, "give a spec file"},
		{[]string{"plan", filepath.Join(dir, "none.yaml")}, "no such file"},
		{[]string{"plan", bad}, `bad.yaml line 5: protocol "h9" is unknown: use h1, h2 or h3`},
		{[]string{"run", bad, "--out", dir}, `line 5: protocol`},
		{[]string{"plan", "../../examples/masri-quick.yaml", "--pilot", dir}, "--pilot: no results database"},
		{[]string{"plan", "../../examples/masri-quick.yaml", "--pilot", dir, "--detect", "0"}, "give a difference above 0 percent"},
		{[]string{"plan", "../../examples/masri-quick.yaml", "--pilot", dir, "--power", "1"}, "a power between 0 and 1"},
		{[]string{"run", "../../examples/masri-quick.yaml", "--resume"}, "--resume needs --out DIR"},
		{[]string{"run", "../../examples/masri-quick.yaml", "--wait-lock", "-1s"}, "--wait-lock -1s is negative: give a duration such as 10m"},
		{[]string{"run", "../../examples/masri-quick.yaml", "--retry-failed"}, "--retry-failed continues a run: add --resume --out DIR"},
		{[]string{"run", "../../examples/masri-quick.yaml", "--parallel", "2", "--shard", "1/2"}, "--cores and --parallel are counts (--parallel 2 or more, and not with --shard"},
		{[]string{"run", "../../examples/masri-quick.yaml", "extra"}, `unexpected argument "extra"`},
		{[]string{"export"}, "give the run directory"},
		{[]string{"export", dir}, "no results database"},
		{[]string{"report", dir}, "no results database"},
		{[]string{"report", dir, "--metric", "si2"}, `metric "si2" is unknown: use plt, onload, dcl, ttfb, fcp, lcp, si, fvc, lvc, vc85, vc95 or vc99`},
		{[]string{"report", dir, "--baseline", "h3", "--compare", "h3"}, "--baseline and --compare are both h3"},
		{[]string{"report", dir, "--until", "0.9"}, "--until: until ci_ratio 0.9 is outside"},
		{[]string{"run", "../../examples/masri-quick.yaml", "--shard", "4/3"}, "--shard: shard \"4/3\" is not I/N"},
		{[]string{"plan", "../../examples/masri-quick.yaml", "--shards", "-1"}, "--shards -1 is outside 1 to 10000"},
		{[]string{"merge", dir}, "give the new run directory and the shards' directories"},
		{[]string{"merge", filepath.Join(dir, "m"), dir}, "no results database"},
	})
}

// usageCase is a command line that must be refused: want is in its error.
type usageCase struct {
	args []string
	want string
}

// checkUsageErrors runs each command line and wants exit 2 with one line
// on stderr that holds the case's text.
func checkUsageErrors(t *testing.T, cases []usageCase) {
	t.Helper()
	for _, c := range cases {
		var out, errOut bytes.Buffer
		code := Run(context.Background(), c.args, &out, &errOut)
		if code != exitUsage || !strings.Contains(errOut.String(), c.want) || strings.Count(strings.TrimSpace(errOut.String()), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", c.args, code, errOut.String(), c.want)
		}
	}
}

func TestPlanOfAnExample(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Run(context.Background(), []string{"plan", "../../examples/masri.yaml"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"6 networks × 12 pages × 1 origins × 1 TCP stacks × 1 server stacks × 1 QUIC stacks × 2 protocols", "144 cells × 30 repetitions = 4320 trials on 72 testbeds", "estimated duration"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("plan output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestPlanWarnsOfLoadsOutlastingTheTimeout: Masri et al.'s 300 KB pages
// at 200 ms with loss take minutes a load, past a 60 s timeout: plan says
// so before a load runs, and not with the example's own 10 min.
func TestPlanWarnsOfLoadsOutlastingTheTimeout(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "heavy.yaml")
	if err := os.WriteFile(file, []byte("repetitions: 2\nfactors:\n  networks: [{rtt: 200ms, loss: 1}]\n  pages: [synthetic:64x300KB]\n  protocols: [h2, h3]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := Run(context.Background(), []string{"plan", file}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if want := "warning: 4 trials' loads are expected to outlast the timeout of 1m0s"; !strings.Contains(out.String(), want) {
		t.Errorf("plan output lacks %q:\n%s", want, out.String())
	}
	out.Reset()
	if code := Run(context.Background(), []string{"plan", "../../examples/masri.yaml"}, &out, &errOut); code != 0 || strings.Contains(out.String(), "warning") {
		t.Errorf("masri.yaml with its 10 min timeout: exit %d, %s", code, out.String())
	}
}

// TestProgressNamesVaryingFactors: a progress line names every factor with
// more than one level, so Nepomuceno et al. 2018's visits and cache levels
// are told apart.
func TestProgressNamesVaryingFactors(t *testing.T) {
	s, err := spec.Load("../../examples/nepomuceno2018-quick.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	p := newProgress(&out, s, 96, false)
	tr := results.Trial{ID: "c1-r1", Levels: results.Levels{Network: "nepomuceno2018-rtt20-loss0", Page: "synthetic:8x20KB", Origins: 4, Protocol: "h3", Visit: "repeat", Cache: true},
		Outcome: results.Outcome{Status: results.StatusOK}, Metrics: results.Metrics{PLT: results.F(31.5)}}
	p.update(experiment.Progress{Trial: tr, Done: 1, Total: 96})
	if want := "c1-r1  nepomuceno2018-rtt20-loss0 synthetic:8x20KB h3 repeat visit cache on: PLT 31.5 ms"; !strings.Contains(out.String(), want) {
		t.Errorf("progress line %q, want %q", out.String(), want)
	}
}

// TestCommandTable: the usage names every command of the table once,
// the unknown-command error lists them all, and each one's -h answers
// with its usage and status 0.
func TestCommandTable(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Run(context.Background(), []string{"help"}, &out, &errOut); code != exitOK {
		t.Fatalf("help: exit %d", code)
	}
	Run(context.Background(), []string{"frobnicate"}, io.Discard, &errOut)
	for _, c := range commands() {
		if n := strings.Count(out.String(), "\n  quicbench "+c.name+" ") + strings.Count(out.String(), "\n  quicbench "+c.name+"\n"); n != 1 {
			t.Errorf("usage names %s %d times:\n%s", c.name, n, out.String())
		}
		if !strings.Contains(errOut.String(), " "+c.name) {
			t.Errorf("unknown-command error does not name %s: %s", c.name, errOut.String())
		}
		if c.name == "help" || c.name == "shell" {
			continue
		}
		var help, helpErr bytes.Buffer
		if code := Run(context.Background(), []string{c.name, "-h"}, &help, &helpErr); code != exitOK || !strings.Contains(help.String(), "quicbench "+c.name) {
			t.Errorf("%s -h: exit %d, %q %q", c.name, code, help.String(), helpErr.String())
		}
	}
}

// TestLoadProgressUpdatesInPlace: on a terminal compare's progress is one
// line rewritten per load, a failed load's line stays, and the line is
// erased at the end; elsewhere it is a line per load.
func TestLoadProgressUpdatesInPlace(t *testing.T) {
	ok := results.Trial{Levels: results.Levels{Protocol: "h3"}, Rep: 2, Outcome: results.Outcome{Status: results.StatusOK}, Metrics: results.Metrics{PLT: results.F(812.5)}}
	failed := results.Trial{Levels: results.Levels{Protocol: "h2"}, Rep: 2, Outcome: results.Outcome{Status: results.StatusFailed, Error: "navigation: net::ERR_TIMED_OUT"}}
	var term bytes.Buffer
	p := &loadProgress{w: &term, total: 6, width: 63, inPlace: true}
	p.update(experiment.Progress{Trial: ok, Done: 1, Total: 6})
	p.update(experiment.Progress{Trial: failed, Done: 2, Total: 6, Failed: 1})
	p.finish()
	want := clearLine + "load 1/6, 0 failed, about 0s left: round 2  h3  PLT    812.5 ms" +
		clearLine + "load   2/6  round 2  h2  FAILED: navigation: net::ERR_TIMED_OUT\n" + "load 2/6, 1 failed, about 0s left: round 2  h2  FAILED: navigat" + clearLine
	if term.String() != want {
		t.Errorf("on a terminal:\n got %q\nwant %q", term.String(), want)
	}
	var file bytes.Buffer
	p = newLoadProgress(&file, 6, false)
	p.update(experiment.Progress{Trial: ok, Done: 1, Total: 6})
	p.finish()
	if got := file.String(); got != "load   1/6  round 2  h3  PLT    812.5 ms\n" {
		t.Errorf("not a terminal: %q", got)
	}
}
