package reproduce

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/papers"
	"github.com/quicbench/quicbench/internal/report"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/testenv"
)

// reproductionRun writes a run of the spec named name into root/<dir>:
// repeat visits without delay or loss, per origins count and protocol
// three loads of the PLT given.
func reproductionRun(t *testing.T, root, dir, name string, plt map[int64]map[factor.Protocol]float64) {
	t.Helper()
	store := newRun(t, root, dir, name)
	defer store.Close()
	for origins, byProto := range plt {
		for proto, ms := range byProto {
			for rep := int64(1); rep <= 3; rep++ {
				tr := results.Trial{ID: fmt.Sprintf("o%d-%s-r%d", origins, proto, rep), Rep: rep,
					Levels:  results.Levels{Network: "delay0-loss0", Page: "synthetic:40x20KB", Origins: origins, Protocol: proto, Visit: "repeat"},
					Outcome: results.Outcome{Status: results.StatusOK}, Metrics: results.Metrics{PLT: results.F(ms + float64(rep))}}
				if err := store.AddTrial(tr, nil, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// altSvcRun writes Cook et al.'s third quick run, Fig. 12's first visits
// with h3 discovered through Alt-Svc on 1 and 4 servers, into root, as
// quicbench reproduce cook2017 lays it out: the claims of the other runs
// do not read it (their cells are forced).
func altSvcRun(t *testing.T, root string) {
	t.Helper()
	store := newRun(t, root, "cook2017-altsvc-quick", "cook2017-altsvc-quick")
	defer store.Close()
	for _, origins := range []int64{1, 4} {
		for rep := int64(1); rep <= 3; rep++ {
			tr := results.Trial{ID: fmt.Sprintf("a%d-h3-r%d", origins, rep), Rep: rep,
				Levels:  results.Levels{Network: "delay0-loss0", Page: "synthetic:40x20KB", Origins: origins, Protocol: "h3", Discovery: factor.DiscoveryAltSvc, Visit: "first"},
				Outcome: results.Outcome{Status: results.StatusOK}, Metrics: results.Metrics{PLT: results.F(300 + float64(rep))}}
			if err := store.AddTrial(tr, nil, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// accessRun creates the run of cook2017-access-quick.yaml in root: three
// repeat visits of each protocol on its two networks.
func accessRun(t *testing.T, root string) {
	t.Helper()
	store := newRun(t, root, "cook2017-access-quick", "cook2017-access-quick")
	defer store.Close()
	for _, network := range []string{"wolsing2019-dsl", "wolsing2019-lte"} {
		for i, protocol := range []factor.Protocol{"h1", "h2", "h3"} {
			for rep := int64(1); rep <= 3; rep++ {
				tr := results.Trial{ID: fmt.Sprintf("%s-%s-r%d", network, protocol, rep), Rep: rep,
					Levels:  results.Levels{Network: network, Page: "web2024:9", Origins: 1, Protocol: protocol, Visit: "repeat"},
					Outcome: results.Outcome{Status: results.StatusOK}, Metrics: results.Metrics{PLT: results.F(1000 - 50*float64(i) + float64(rep))}}
				if err := store.AddTrial(tr, nil, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// newRun creates the store of a run of the spec named name in root/dir.
func newRun(t *testing.T, root, dir, name string) *results.Store {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
		t.Fatal(err)
	}
	store, err := results.Create(filepath.Join(root, dir, results.FileName), map[string]string{"spec_name": name})
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// buildRun builds the report of the run in dir with its claims, as
// quicbench report does.
func buildRun(t *testing.T, dir string) (*report.Report, error) {
	t.Helper()
	store, err := results.OpenReadOnly(filepath.Join(dir, results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	return Report(context.Background(), store, analysis.Options{})
}

func rowOf(t *testing.T, cl *report.Claims, id string) report.ClaimRow {
	t.Helper()
	for _, r := range cl.Rows {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no claim %s", id)
	return report.ClaimRow{}
}

// TestClaimsReadTheReproductionsOtherRuns: the report of one run of Cook
// et al.'s quick reproduction sets the claims beside its loads and those
// of the reproduction's other run beside it (the one-server loads here,
// four and eight servers there), says which runs it read, links its own
// loads, and says what it could not find.
func TestClaimsReadTheReproductionsOtherRuns(t *testing.T) {
	root := t.TempDir()
	reproductionRun(t, root, "cook2017-quick", "cook2017-quick", map[int64]map[factor.Protocol]float64{1: {"h2": 200, "h3": 100}})
	altSvcRun(t, root)
	accessRun(t, root)
	alone, err := buildRun(t, filepath.Join(root, "cook2017-quick"))
	if err != nil {
		t.Fatal(err)
	}
	cl := alone.Page.Claims
	if cl == nil || cl.PaperID != "cook2017" {
		t.Fatalf("claims %+v, want Cook et al.'s", cl)
	}
	if r := rowOf(t, cl, "C6"); r.Verdict != string(papers.NotMeasured) || len(cl.Missing) != 1 {
		t.Errorf("without the servers' run: C6 %s, missing %v; want not measured, the servers' run missing", r.Verdict, cl.Missing)
	}
	var text bytes.Buffer
	report.WriteText(&text, alone.Page, alone.Analysis)
	if !strings.Contains(text.String(), "not found beside it: cook2017-servers-quick (quicbench reproduce cook2017 runs them)") {
		t.Errorf("the text does not say which run is missing:\n%s", text.String())
	}

	reproductionRun(t, root, "cook2017-servers-quick", "cook2017-servers-quick", map[int64]map[factor.Protocol]float64{4: {"h2": 210, "h3": 104}, 8: {"h2": 260, "h3": 130}})
	both, err := buildRun(t, filepath.Join(root, "cook2017-quick"))
	if err != nil {
		t.Fatal(err)
	}
	cl = both.Page.Claims
	c6, c7 := rowOf(t, cl, "C6"), rowOf(t, cl, "C7")
	if c6.Verdict != string(papers.Agrees) || c7.Verdict != string(papers.Agrees) || len(cl.Missing) != 0 {
		t.Errorf("C6 %s %s, C7 %s %s, missing %v; want both agree (4 servers ≈ 1, 8 servers 1.29)", c6.Verdict, c6.Ours, c7.Verdict, c7.Ours, cl.Missing)
	}
	if !strings.Contains(strings.Join(c6.Trials, " "), "cook2017-servers-quick/o4-h3-r1") || !strings.Contains(strings.Join(c6.Trials, " "), "o1-h3-r1") {
		t.Errorf("C6 used %v: want this run's loads by ID and the other run's by run/ID", c6.Trials)
	}
	out := t.TempDir()
	if _, err := report.WriteFiles(out, both.Page, both.Analysis, nil); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(out, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<h2 id="claims">Claims of Cook et al. 2017</h2>`, `href="#load-o1-h3-r1"`, "cook2017-servers-quick/o4-h3-r1 ", "and cook2017-servers-quick, cook2017-altsvc-quick, cook2017-access-quick beside it",
		"<small>paper scale only: its quick scale loads a cell 5 times, too few to bound a ratio near 1"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the HTML lacks %q", want)
		}
	}
	if rows := testenv.ReadCSV(t, filepath.Join(out, "claims.csv")); len(rows) != 1+len(cl.Rows) {
		t.Errorf("claims.csv has %d rows, want a header and %d claims", len(rows), len(cl.Rows))
	}
}

// TestAStrangerBesideTheRunIsRefused: a directory named as the
// reproduction's other run but holding another spec's run is an error,
// not loads read into the claims.
func TestAStrangerBesideTheRunIsRefused(t *testing.T) {
	root := t.TempDir()
	reproductionRun(t, root, "cook2017-quick", "cook2017-quick", map[int64]map[factor.Protocol]float64{1: {"h2": 200, "h3": 100}})
	reproductionRun(t, root, "cook2017-servers-quick", "demo", map[int64]map[factor.Protocol]float64{4: {"h2": 210, "h3": 104}})
	if _, err := buildRun(t, filepath.Join(root, "cook2017-quick")); err == nil || !strings.Contains(err.Error(), `holds a run of the spec "demo", not of cook2017-servers-quick: move it`) {
		t.Errorf("got %v, want the stranger named", err)
	}
}

// TestARunOfNoPaperHasNoClaims: the demo's run has no claims section.
func TestARunOfNoPaperHasNoClaims(t *testing.T) {
	root := t.TempDir()
	reproductionRun(t, root, "demo", "demo", map[int64]map[factor.Protocol]float64{1: {"h2": 200, "h3": 100}})
	r, err := buildRun(t, filepath.Join(root, "demo"))
	if err != nil || r.Page.Claims != nil {
		t.Errorf("claims %+v, %v; want none", r.Page.Claims, err)
	}
}
