package reproduce

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/papers"
	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/results"
)

func TestDecideRunsAreNamedAfterTheirSpecAndRound(t *testing.T) {
	if base, ok := BaseName(DecideName("cook2017-quick", 3)); !ok || base != "cook2017-quick" {
		t.Errorf("BaseName(%q) = %q, %v", DecideName("cook2017-quick", 3), base, ok)
	}
	for _, name := range []string{"cook2017-quick", "x-decide-0", "x-decide-", "x-decide-1a"} {
		if _, ok := BaseName(name); ok {
			t.Errorf("%q is no decide run's name", name)
		}
	}
	for _, bad := range []string{"c1-r1", "/c1-r1", "run/c1", "run/c1-rx"} {
		if _, _, err := cellOfRef(bad); err == nil {
			t.Errorf("trial reference %q accepted", bad)
		}
	}
}

// TestExtensionsLoadTheCellsOfTheUndecidedClaims: a round adds loads to
// the cells that the inconclusive claims more loads can decide read, in
// whichever run of the spec they were, as many a cell as the claims that
// read it project within the round's bounds, with a seed of the round's
// own.
func TestExtensionsLoadTheCellsOfTheUndecidedClaims(t *testing.T) {
	rs, err := Resolve("cook", "quick", t.TempDir(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	r := rs[0]
	rows := []papers.Row{
		{Claim: papers.Claim{ID: "C6"}, Verdict: papers.Inconclusive, Need: papers.Need{PerCell: 30, Loads: 120},
			Trials: []string{"cook2017-quick/c1a-r1", "cook2017-servers-quick/c4a-r2", "cook2017-servers-quick-decide-1/c4a-r1"}},
		{Claim: papers.Claim{ID: "C7"}, Verdict: papers.Inconclusive, Need: papers.Need{PerCell: 1, Loads: 4},
			Trials: []string{"cook2017-servers-quick/c8a-r1"}},
		{Claim: papers.Claim{ID: "C1"}, Verdict: papers.Agrees, Trials: []string{"cook2017-quick/cdone-r1"}},
		{Claim: papers.Claim{ID: "C3"}, Verdict: papers.Inconclusive, Need: papers.Need{OnBound: true}, Trials: []string{"cook2017-quick/cbound-r1"}},
	}
	ext, err := r.Extensions(rows, 2)
	if err != nil || len(ext) != 2 {
		t.Fatalf("%d extensions, %v; want one for each spec", len(ext), err)
	}
	quick, servers := ext[0], ext[1]
	if quick.Spec.Name != "cook2017-quick-decide-2" || !maps.Equal(quick.Cells, map[string]int{"c1a": MaxRoundLoads}) || quick.Spec.Repetitions != MaxRoundLoads {
		t.Errorf("the first spec's extension: %s, cells %v, %d loads at most; want cook2017-quick-decide-2, c1a %d times", quick.Spec.Name, quick.Cells, quick.Spec.Repetitions, MaxRoundLoads)
	}
	if want := map[string]int{"c4a": MaxRoundLoads, "c8a": MinRoundLoads}; !maps.Equal(servers.Cells, want) || !slices.Equal(servers.Claims, []string{"C6", "C7"}) || servers.Spec.Repetitions != MaxRoundLoads {
		t.Errorf("the servers' extension: cells %v for %v, %d loads at most; want %v for C6 and C7", servers.Cells, servers.Claims, servers.Spec.Repetitions, want)
	}
	if quick.Spec.Seed == r.Specs[0].Seed || quick.Dir != filepath.Join(r.Dir, "cook2017-quick-decide-2") {
		t.Errorf("seed %d (the spec's %d), dir %s", quick.Spec.Seed, r.Specs[0].Seed, quick.Dir)
	}
	again, _ := r.Extensions(rows, 3)
	if again[0].Spec.Seed == quick.Spec.Seed {
		t.Error("two rounds draw the same losses")
	}
	if got := quick.Spec.LevelsOf(factor.IDNetwork); !slices.Equal(got, r.Specs[0].LevelsOf(factor.IDNetwork)) {
		t.Errorf("the extension's networks %v differ from its spec's", got)
	}
	few, _ := r.Extensions(rows[1:2], 2)
	if few[0].Spec.Repetitions != MinRoundLoads {
		t.Errorf("a need of 1 load a cell gives %d, want the round's least, %d", few[0].Spec.Repetitions, MinRoundLoads)
	}
}

// TestAFarClaimWaitsWhileOthersCanBeDecided: a claim projected to need
// more than FarPerCell loads a cell gets none in a round where another
// can be decided within the round, and is loaded once none can.
func TestAFarClaimWaitsWhileOthersCanBeDecided(t *testing.T) {
	rs, err := Resolve("cook", "quick", t.TempDir(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	far := papers.Row{Claim: papers.Claim{ID: "C6"}, Verdict: papers.Inconclusive, Need: papers.Need{PerCell: FarPerCell + 1, Loads: 400},
		Trials: []string{"cook2017-servers-quick/c4a-r1"}}
	near := papers.Row{Claim: papers.Claim{ID: "C7"}, Verdict: papers.Inconclusive, Need: papers.Need{PerCell: MaxRoundLoads, Loads: 20},
		Trials: []string{"cook2017-servers-quick/c8a-r1"}}
	middling := papers.Row{Claim: papers.Claim{ID: "C5"}, Verdict: papers.Inconclusive, Need: papers.Need{PerCell: FarPerCell, Loads: 80},
		Trials: []string{"cook2017-servers-quick/c9a-r1"}}
	now, later := ThisRound([]papers.Row{far, near, middling})
	if len(now) != 2 || now[0].Claim.ID != "C7" || now[1].Claim.ID != "C5" || len(later) != 1 || later[0].Claim.ID != "C6" {
		t.Errorf("now %v, later %v: want C7 and C5 now, C6 later", now, later)
	}
	ext, err := rs[0].Extensions([]papers.Row{far, near}, 1)
	if err != nil || len(ext) != 1 || !maps.Equal(ext[0].Cells, map[string]int{"c8a": MaxRoundLoads}) {
		t.Fatalf("with C7 decidable: %+v, %v; want only C7's cell", ext, err)
	}
	alone, err := rs[0].Extensions([]papers.Row{far}, 2)
	if err != nil || len(alone) != 1 || !maps.Equal(alone[0].Cells, map[string]int{"c4a": MaxRoundLoads}) {
		t.Fatalf("C6 alone: %+v, %v; want its cell loaded", alone, err)
	}
}

// TestExtensionsBalanceAClaimsCells: a claim's cells end a round with
// the same loads, its fullest cell plus its need, and claims that share
// a cell end with the same loads in all their cells.
func TestExtensionsBalanceAClaimsCells(t *testing.T) {
	rs, err := Resolve("cook", "quick", t.TempDir(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	refs := func(cell string, loads int) []string {
		var out []string
		for k := 1; k <= loads; k++ {
			out = append(out, fmt.Sprintf("cook2017-servers-quick/%s-r%d", cell, k))
		}
		return out
	}
	rows := []papers.Row{
		{Claim: papers.Claim{ID: "C9"}, Verdict: papers.Inconclusive, Need: papers.Need{PerCell: 2, Loads: 4},
			Trials: append(refs("c5a", 5), refs("c5b", 1)...)},
		{Claim: papers.Claim{ID: "C10"}, Verdict: papers.Inconclusive, Need: papers.Need{PerCell: 10, Loads: 20},
			Trials: append(refs("c5b", 1), refs("c6", 1)...)},
	}
	alone, err := rs[0].Extensions(rows[:1], 1)
	if err != nil || len(alone) != 1 || !maps.Equal(alone[0].Cells, map[string]int{"c5a": 2, "c5b": 6}) {
		t.Fatalf("C9 alone: %v, %v; want 2 more loads of c5a (5) and 6 of c5b (1): 7 each", alone, err)
	}
	both, err := rs[0].Extensions(rows, 1)
	if want := map[string]int{"c5a": 6, "c5b": 10, "c6": 10}; err != nil || len(both) != 1 || !maps.Equal(both[0].Cells, want) {
		t.Fatalf("C9 with C10, which shares c5b and needs 10 more: %v, %v; want %v (11 loads in each cell)", both, err, want)
	}
}

// TestClaimsReadTheDecideRuns: the claims of a run, and of its
// reproduction, pool the decide runs beside it for a claim their own loads
// left undecided (C6, whose ratio of about 1.1 straddles its bound).
func TestClaimsReadTheDecideRuns(t *testing.T) {
	root := t.TempDir()
	reproductionRun(t, root, "cook2017-quick", "cook2017-quick", map[int64]map[factor.Protocol]float64{1: {"h2": 200, "h3": 100}})
	altSvcRun(t, root)
	accessRun(t, root)
	reproductionRun(t, root, "cook2017-servers-quick", "cook2017-servers-quick", map[int64]map[factor.Protocol]float64{4: {"h2": 210, "h3": 110}})
	before, err := buildRun(t, filepath.Join(root, "cook2017-quick"))
	if err != nil {
		t.Fatal(err)
	}
	reproductionRun(t, root, "cook2017-servers-quick-decide-1", "cook2017-servers-quick-decide-1", map[int64]map[factor.Protocol]float64{4: {"h3": 104}})
	after, err := buildRun(t, filepath.Join(root, "cook2017-quick"))
	if err != nil {
		t.Fatal(err)
	}
	was, now := rowOf(t, before.Page.Claims, "C6"), rowOf(t, after.Page.Claims, "C6")
	if was.Verdict != "inconclusive" {
		t.Fatalf("C6 before the decide run: %s, %s; the test needs it undecided", was.Verdict, was.Ours)
	}
	const pooled = "9 loads in 1 setting through decide round 1"
	if was.Used != "6 loads in 1 setting" || now.Used != pooled || !slices.Contains(after.Page.Claims.Runs, "cook2017-servers-quick-decide-1") {
		t.Errorf("C6 used %q, then %q with the decide run; runs read %v", was.Used, now.Used, after.Page.Claims.Runs)
	}
	store, err := results.OpenReadOnly(filepath.Join(root, "cook2017-servers-quick-decide-1", results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	own, err := ClaimsOf(context.Background(), store, 1)
	if err != nil || own == nil || rowOf(t, own, "C6").Used != pooled {
		t.Fatalf("the decide run's own claims: %v, %+v", err, own)
	}
	rs, _ := Resolve("cook", "quick", root, time.Now())
	r := rs[0]
	rows, err := r.Rows(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		if row.Claim.ID == "C6" && (row.Loads != 9 || !strings.HasPrefix(row.Trials[0], "cook2017-")) {
			t.Errorf("the reproduction's C6: %d loads, trials %v; want 9, each named by its run", row.Loads, row.Trials)
		}
	}
	if n, err := r.Rounds(); n != 1 || err != nil {
		t.Errorf("rounds %d, %v; want 1", n, err)
	}
}

// TestReseedKeepsTheCellsAndDrawsAnew: a reproduction with another seed
// loads the same cells (the same trial IDs, so that its claims read the
// same settings) with other loss draws.
func TestReseedKeepsTheCellsAndDrawsAnew(t *testing.T) {
	for _, paper := range []string{"wolsing2019", "masri"} {
		rs, err := Resolve(paper, "quick", t.TempDir(), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		was := rs[0]
		was.Specs = slices.Clone(was.Specs)
		again := rs[0]
		if err := again.Reseed(2); err != nil {
			t.Fatal(err)
		}
		for i, s := range again.Specs {
			a, b := plan.Build(was.Specs[i]), plan.Build(s)
			ids := func(p plan.Plan) []string {
				var out []string
				for _, tr := range p.Trials {
					out = append(out, tr.ID)
				}
				slices.Sort(out)
				return out
			}
			if s.Seed != 2 || !slices.Equal(ids(a), ids(b)) || s.Name != was.Specs[i].Name {
				t.Errorf("%s reseeded: seed %d, name %s, same trial IDs %v", was.Specs[i].Name, s.Seed, s.Name, slices.Equal(ids(a), ids(b)))
			}
			if a.Trials[0].Cell.UpSeed == b.Trials[0].Cell.UpSeed && a.Trials[0].Cell.Levels.Network() == b.Trials[0].Cell.Levels.Network() {
				t.Errorf("%s: the same link seed under another spec seed", s.Name)
			}
		}
		if !strings.HasSuffix(again.Command, "--seed 2") {
			t.Errorf("the command to continue: %q", again.Command)
		}
	}
}

// TestTheReportOfADecideRunSaysWhichRunToReport: a decide run that holds
// one protocol has no comparison of its own; its report says which run's
// report reads it.
func TestTheReportOfADecideRunSaysWhichRunToReport(t *testing.T) {
	root := t.TempDir()
	reproductionRun(t, root, "cook2017-servers-quick", "cook2017-servers-quick", map[int64]map[factor.Protocol]float64{4: {"h2": 210, "h3": 104}})
	reproductionRun(t, root, "cook2017-servers-quick-decide-1", "cook2017-servers-quick-decide-1", map[int64]map[factor.Protocol]float64{4: {"h3": 104}})
	_, err := buildRun(t, filepath.Join(root, "cook2017-servers-quick-decide-1"))
	if err == nil || !strings.Contains(err.Error(), "decide run") || !strings.Contains(err.Error(), filepath.Join(root, "cook2017-servers-quick")+",") {
		t.Errorf("report of a one-protocol decide run: %v; want it to name the run to report", err)
	}
	if _, err := buildRun(t, filepath.Join(root, "cook2017-servers-quick")); err != nil {
		t.Errorf("the run it adds to: %v", err)
	}
}

// TestAnInterruptedDecideRoundIsKeptAndNotCountedTwice: a --decide round
// stopped after its h3 loads (Ctrl-C keeps a run's completed loads) is
// read once by the claims, counts as a round, and the rerun's next round
// loads a new run that tops up the cells from what the stopped one left,
// never rewriting or re-reading it.
func TestAnInterruptedDecideRoundIsKeptAndNotCountedTwice(t *testing.T) {
	root := t.TempDir()
	reproductionRun(t, root, "cook2017-quick", "cook2017-quick", map[int64]map[factor.Protocol]float64{1: {"h2": 200, "h3": 100}})
	altSvcRun(t, root)
	accessRun(t, root)
	reproductionRun(t, root, "cook2017-servers-quick", "cook2017-servers-quick", map[int64]map[factor.Protocol]float64{4: {"h2": 210, "h3": 109}})
	// Round 1 stopped after its h3 loads: no h2 load of it was recorded.
	reproductionRun(t, root, "cook2017-servers-quick-decide-1", "cook2017-servers-quick-decide-1", map[int64]map[factor.Protocol]float64{4: {"h3": 107}})
	rs, err := Resolve("cook", "quick", root, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	r := rs[0]
	if n, err := r.Rounds(); n != 1 || err != nil {
		t.Fatalf("rounds %d, %v; want the stopped round counted", n, err)
	}
	rows, err := r.Rows(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	var c6 papers.Row
	for _, row := range rows {
		if row.Claim.ID == "C6" {
			c6 = row
		}
	}
	seen := map[string]bool{}
	for _, ref := range c6.Trials {
		if seen[ref] {
			t.Errorf("trial %s read twice", ref)
		}
		seen[ref] = true
	}
	if c6.Loads != 9 || len(seen) != 9 {
		t.Fatalf("C6 reads %d loads (%d distinct), want the 6 of its run and the 3 the stopped round kept", c6.Loads, len(seen))
	}
	if c6.Verdict != papers.Inconclusive {
		t.Fatalf("C6 is %s with these loads; the test needs it undecided", c6.Verdict)
	}
	exts, err := r.Extensions(rows, 2)
	if err != nil || len(exts) != 2 {
		t.Fatalf("round 2: %+v, %v; want a run for each of C6's two specs", exts, err)
	}
	cells := map[string]int{}
	for _, e := range exts {
		if want := e.Spec.Name; filepath.Base(e.Dir) != want || !strings.HasSuffix(want, "-decide-2") {
			t.Errorf("round 2 loads into %s, want a run of its own (%s) beside the stopped one", e.Dir, want)
		}
		maps.Copy(cells, e.Cells)
	}
	// C6 reads h3 on one server (3 loads, cook2017-quick) and on four (6:
	// 3 of its run, 3 the stopped round kept): the next round gives the
	// first 3 more, so both end alike, the kept loads counted once.
	if cells["o1-h3"]-cells["o4-h3"] != 3 || cells["o1-h3"] == MaxRoundLoads {
		t.Errorf("round 2's loads %v: want one server's cell to get 3 more than four's, below the round's cap", cells)
	}
}
