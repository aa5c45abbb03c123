package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/papers"
	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/reproduce"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/spec"
	"github.com/quicbench/quicbench/internal/testenv"
)

// TestReproduceRefusesBadInputInOneLine: a paper, scale or directory that
// is wrong is one line on stderr and exit 2, before anything runs.
func TestReproduceRefusesBadInputInOneLine(t *testing.T) {
	dir := t.TempDir()
	stranger := filepath.Join(dir, "taken", "cook2017-quick")
	os.MkdirAll(stranger, 0o755)
	store, err := results.Create(filepath.Join(stranger, results.FileName), map[string]string{"spec_name": "demo"})
	if err != nil {
		t.Fatal(err)
	}
	store.Close()
	os.MkdirAll(filepath.Join(dir, "recordings"), 0o755)
	os.MkdirAll(filepath.Join(dir, "empty"), 0o755)
	os.WriteFile(filepath.Join(dir, "recordings", "bad.har"), []byte("{"), 0o644)
	os.MkdirAll(filepath.Join(dir, "seq"), 0o755)
	os.WriteFile(filepath.Join(dir, "seq", reproduce.SampleFile), []byte(`{"samples":{}}`), 0o644)
	os.MkdirAll(filepath.Join(dir, "fixed", "masri-quick"), 0o755)
	fixed, err := results.Create(filepath.Join(dir, "fixed", "masri-quick", results.FileName), map[string]string{"spec_name": "masri-quick"})
	if err != nil {
		t.Fatal(err)
	}
	fixed.Close()
	checkUsageErrors(t, []usageCase{
		{[]string{"reproduce"}, "give a paper: nepomuceno2018, masri, cook2017, wolsing2019, biswal2016 or all"},
		{[]string{"reproduce", "seed002"}, `no paper "seed002": give one of nepomuceno2018, masri, cook2017, wolsing2019, biswal2016`},
		{[]string{"reproduce", "cook", "--scale", "huge"}, `--scale: scale "huge" is not quick or paper`},
		{[]string{"reproduce", "cook", "extra"}, `unexpected argument "extra"`},
		{[]string{"reproduce", "cook", "--out", filepath.Join(dir, "taken")}, `holds a run of the spec "demo", not of cook2017-quick: give another --out`},
		{[]string{"reproduce", "nepomuceno2018", "--out", filepath.Join(dir, "n"), "--sites", filepath.Join(dir, "none")}, "--sites: open " + filepath.Join(dir, "none") + ": no such file or directory"},
		{[]string{"reproduce", "nepomuceno2018", "--out", filepath.Join(dir, "n"), "--sites", filepath.Join(dir, "empty")}, "holds no recordings: give a directory of site archives, Mahimahi recording directories, .har or .wprgo files"},
		{[]string{"reproduce", "nepomuceno2018", "--out", filepath.Join(dir, "n"), "--sites", filepath.Join(dir, "recordings")}, "--sites: none of the 1 recordings could be imported (bad.har: "},
		{[]string{"reproduce", "cook", "--out", filepath.Join(dir, "c"), "--sites", filepath.Join(dir, "recordings")}, "--sites: cook2017 makes no claim about pages to test on recorded sites (those that do: nepomuceno2018, wolsing2019, biswal2016)"},
		{[]string{"reproduce", "masri", "--sequential", "--decide"}, "--sequential decides its claims round by round already: leave out --decide and --parallel"},
		{[]string{"reproduce", "masri", "--sequential", "--slurm"}, "--sequential cannot go with --slurm: its rounds depend on the runs' verdicts; run the fixed design with --slurm, or --sequential without it"},
		{[]string{"reproduce", "masri", "--sequential", "--pilot", "1"}, "--pilot 1 is below 2: a cell's comparison needs 2 loads a side"},
		{[]string{"reproduce", "masri", "--out", filepath.Join(dir, "seq")}, "holds a sequential reproduction (its sequential.json): continue it with --sequential, or give another --out"},
		{[]string{"reproduce", "masri", "--out", filepath.Join(dir, "seq"), "--replay-sequential"}, "holds a sequential reproduction (its sequential.json)"},
		{[]string{"reproduce", "masri", "--out", filepath.Join(dir, "fixed"), "--sequential"}, "holds a run of the fixed design (masri-quick): give another --out to reproduce it sequentially, or replay the sequential design on it with --replay-sequential"},
		{[]string{"reproduce", "masri", "--decide", "--budget", "0s"}, "--budget 0s: give a positive duration, such as 2h"},
		{[]string{"reproduce", "masri", "--parallel", "1"}, "--parallel 1: give 2 or more shards, and not with --slurm (whose nodes run the shards)"},
		{[]string{"reproduce", "masri", "--parallel", "2", "--slurm"}, "--parallel 2: give 2 or more shards, and not with --slurm"},
		{[]string{"reproduce", "masri", "--replay-sequential"}, "--replay-sequential reads the fixed runs in --out DIR and loads nothing: give --out"},
		{[]string{"reproduce", "masri", "--scale", "paper", "--replay-sequential", "--out", filepath.Join(dir, "empty")}, "no run of masri's specs in " + filepath.Join(dir, "empty") + ": run it first"},
	})
}

// TestReproduceListNamesEveryPaperAndClaim.
func TestReproduceListNamesEveryPaperAndClaim(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Run(context.Background(), []string{"reproduce", "--list"}, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"nepomuceno2018  Nepomuceno et al. 2018", "masri  Masri et al.", "cook2017  Cook et al. 2017", "wolsing2019  Wolsing et al. 2019",
		"biswal2016  Biswal and Gnawali 2016", "quick: cook2017-quick.yaml, cook2017-servers-quick.yaml", "C8  On DSL and LTE", "not reproduced: SPDY 3.1",
		"counts pages: the paper's 34 % of 91 pages; ours a page in several networks counted as one cluster", "too few recorded sites: the shared recordings give 7 sites on Caddy, whose share cannot be bounded near the paper's; a share like the paper's 24 % agrees from 76 sites",
		"beyond the paper's design: the first visual change on the MSS link spreads by about 20 %",
		"counts pages in each network: the paper's highest, 40 % of 91 pages, of its 12 networks", "C28  On MSS, TCP+BBR's lead over TCP+ widens", "C18  On 4G, QUIC loads a complex site faster than HTTP/2"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--list lacks %q", want)
		}
	}
}

// TestARoundSaysWhichClaimsWait: the round's line names the claims it
// loads, and a second line those that wait for a later one.
func TestARoundSaysWhichClaimsWait(t *testing.T) {
	rows := []papers.Row{
		{Claim: papers.Claim{ID: "C6"}, Verdict: papers.Inconclusive, Need: papers.Need{PerCell: 80, Loads: 320}},
		{Claim: papers.Claim{ID: "C7"}, Verdict: papers.Inconclusive, Need: papers.Need{PerCell: 2, Loads: 4}},
	}
	var out bytes.Buffer
	printRound(&out, 1, rows)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "Deciding, round 1: C7 (") || strings.Contains(lines[0], "C6") ||
		!strings.Contains(lines[1], "waiting while a round can decide others (more than 40 loads a cell): C6 (") {
		t.Errorf("round lines:\n%s", out.String())
	}
}

// TestAnInterruptedReproductionSaysHowToContinueItsRounds: the command an
// interrupted reproduction prints keeps the rounds it was asked for, so
// that continuing a sequential one does not load the fixed design.
func TestAnInterruptedReproductionSaysHowToContinueItsRounds(t *testing.T) {
	base := "quicbench reproduce masri --scale paper --out runs/m"
	for _, tc := range []struct {
		budget time.Duration
		seq    *sequentialOptions
		want   string
	}{
		{0, nil, base},
		{time.Hour, nil, base + " --decide --budget 1h0m0s"},
		{0, &sequentialOptions{}, base + " --sequential"},
		{0, &sequentialOptions{pilot: 3, budget: 90 * time.Minute}, base + " --sequential --pilot 3 --budget 1h30m0s"},
	} {
		if got := continueCommand(base, tc.budget, tc.seq); got != tc.want {
			t.Errorf("continueCommand(%v, %+v) = %q, want %q", tc.budget, tc.seq, got, tc.want)
		}
	}
}

// TestASequentialRoundResumesItsDecideRun: a round's decide run that is
// there already (an interrupted round, or one an earlier version of the
// design planned) is continued to the round's cells, not refused as a
// run that exists, and shows its loads as they are made.
func TestASequentialRoundResumesItsDecideRun(t *testing.T) {
	testenv.RequireRoot(t)
	const text = `name: rounds-decide-1
seed: 7
repetitions: 1
client: loader
netcheck: false
factors:
  networks: [{name: a, rtt: 10ms}]
  pages: [synthetic:2x5KB]
  protocols: [h2, h3]
`
	first, grown := map[string]int{}, map[string]int{}
	oneRep, err := spec.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range plan.Build(oneRep).Trials {
		first[tr.Cell.ID()], grown[tr.Cell.ID()] = 1, 2
	}
	twoReps, err := spec.Parse([]byte(strings.Replace(text, "repetitions: 1", "repetitions: 2", 1)))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "rounds-decide-1")
	r := reproduce.Reproduction{Command: "quicbench reproduce test"}
	for _, e := range []reproduce.Extension{{Spec: oneRep, Dir: dir, Round: 1, Cells: first}, {Spec: twoReps, Dir: dir, Round: 1, Cells: grown}} {
		var stdout, stderr strings.Builder
		if code := runExtension(context.Background(), context.Background(), r, e, nil, false, &stdout, &stderr); code != exitOK {
			t.Fatalf("round of %v: exit %d: %s", e.Cells, code, stderr.String())
		}
		if want := fmt.Sprintf(": %d loads in 2 cells", 2*e.Spec.Repetitions); !strings.Contains(stdout.String(), want) {
			t.Errorf("round of %v said %q, want %q", e.Cells, stdout.String(), want)
		}
		if want := fmt.Sprintf("trial %d/%d ", 2*e.Spec.Repetitions, 2*e.Spec.Repetitions); !strings.Contains(stderr.String(), want) {
			t.Errorf("round of %v showed its progress as %q, want a line of %q", e.Cells, stderr.String(), want)
		}
	}
	levels, err := results.RunLevels(dir)
	if err != nil || len(levels) != 4 {
		t.Errorf("the decide run holds %d loads (%v), want the 2 of its start and 2 more", len(levels), err)
	}
}
