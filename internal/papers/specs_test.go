package papers

import (
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/examples"
	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/spec"
)

// quickBudget is how long a paper's quick reproduction may take by the
// plan's estimate (the target is 30 minutes measured; BENCHMARKS.md
// records the measured times).
const quickBudget = 30 * time.Minute

// loadsOf fakes a successful load of every trial of a scale's specs, each
// metric set where the trial would have it (visual metrics on visual
// trials only), so that a claim without loads is a claim whose cells the
// specs lack.
func loadsOf(t *testing.T, files []string) ([]Source, time.Duration) {
	t.Helper()
	var sources []Source
	var estimate time.Duration
	seen := map[string]string{}
	for _, name := range files {
		s := parseExample(t, name)
		if len(s.Protocols()) < 2 {
			t.Errorf("%s loads %v alone: each run's report compares two protocols, so a paper's spec needs two", name, s.Protocols())
		}
		p := plan.Build(s)
		estimate += p.Estimate(s)
		trials := make([]results.Trial, 0, len(p.Trials))
		for _, pt := range p.Trials {
			key := pt.Cell.Key()
			if other, ok := seen[key]; ok && pt.Rep == 1 {
				t.Errorf("%s and %s share the setting %s: runs of one scale must not", other, name, key)
			}
			seen[key] = name
			trials = append(trials, fakeLoad(t, pt))
		}
		sources = append(sources, Source{Run: strings.TrimSuffix(name, ".yaml"), Trials: trials})
	}
	return sources, estimate
}

func parseExample(t *testing.T, name string) *spec.Spec {
	t.Helper()
	data, err := examples.Read(name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := spec.Parse(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if s.Name != strings.TrimSuffix(name, ".yaml") {
		t.Errorf("%s is named %q: a paper's spec is named as its file, which is how reports find their paper", name, s.Name)
	}
	return s
}

func fakeLoad(t *testing.T, pt plan.Trial) results.Trial {
	t.Helper()
	levels, err := results.LevelsOf(pt.Cell.Levels)
	if err != nil {
		t.Fatal(err)
	}
	tr := results.Trial{ID: pt.ID, Levels: levels}
	tr.Status = results.StatusOK
	tr.RTTMs = 50
	if n := pt.Cell.Network; n != nil {
		if n.RTT > 0 {
			tr.RTTMs = float64(n.RTT) / float64(time.Millisecond)
		}
		tr.LossUpPct, tr.LossDownPct = 100*n.Up.Loss, 100*n.Down.Loss
		if n.Up.GilbertElliott != nil || n.Down.GilbertElliott != nil {
			tr.LossDownPct = max(tr.LossDownPct, 1) // bursty: lossy
		}
	}
	for _, m := range results.MetricList() {
		if results.VisualMetric(m.Name) && !levels.Visual {
			continue
		}
		setMetric(&tr, m.Name, 1000+float64(pt.Rep))
	}
	return tr
}

// setMetric sets a trial's metric of that name.
func setMetric(t *results.Trial, name string, v float64) {
	*metricField(t, name) = results.F(v)
}

// metricField is trial t's field of the metric named name (a switch, not a
// map: the paper-like checks set millions of them).
func metricField(t *results.Trial, name string) **float64 {
	switch name {
	case "plt":
		return &t.PLT
	case "onload":
		return &t.OnLoad
	case "dcl":
		return &t.DCL
	case "ttfb":
		return &t.TTFB
	case "fcp":
		return &t.FCP
	case "lcp":
		return &t.LCP
	case "si":
		return &t.SpeedIndex
	case "fvc":
		return &t.FVC
	case "lvc":
		return &t.LVC
	case "vc85":
		return &t.VC85
	case "vc95":
		return &t.VC95
	case "vc99":
		return &t.VC99
	}
	panic("setMetric: no metric " + name)
}

// TestEveryClaimHasItsCellsAtEveryScale: each paper's specs exist, parse
// and are named as their files; at either scale every testable claim
// finds loads at every level its statistic reads (at quick scale, unless
// it is marked as left out there: Claim.NotAtQuick); and a quick
// reproduction's plan fits the budget.
func TestEveryClaimHasItsCellsAtEveryScale(t *testing.T) {
	for _, p := range All() {
		for _, scale := range []Scale{Quick, Full} {
			sources, estimate := loadsOf(t, p.Specs[scale])
			for _, row := range Evaluate(p, sources, Options{Reps: 20}) {
				if row.Verdict == NotMeasured && (scale == Full || !row.Claim.NotAtQuick) {
					t.Errorf("%s %s at %s scale: no loads at every level the claim reads (%s %s, cells %v)", p.ID, row.Claim.ID, scale, row.Claim.Stat.Kind, row.Claim.Stat.Vary, row.Claim.Cells)
				}
			}
			if scale == Quick && estimate > quickBudget {
				t.Errorf("%s: the quick reproduction's plan takes %v by its estimate, over %v", p.ID, estimate.Round(time.Minute), quickBudget)
			}
			t.Logf("%s at %s scale: %d specs, estimate %v", p.ID, scale, len(p.Specs[scale]), estimate.Round(time.Minute))
		}
	}
}

// TestPapersAreDescribedInFull: the floor of five claims per
// paper, every claim's fields that a reader needs, and a level the
// factor has.
func TestPapersAreDescribedInFull(t *testing.T) {
	if got := len(All()); got != 5 {
		t.Fatalf("%d papers, want the five of ../shared/seeds", got)
	}
	for _, p := range All() {
		testable := 0
		for _, c := range p.Claims {
			if c.Text == "" || c.Source == "" || c.Reported == "" || c.Figure == "" {
				t.Errorf("%s %s: a claim needs its text, source, the paper's figure and what the paper reports", p.ID, c.ID)
			}
			if c.NotReproduced != "" {
				continue
			}
			testable++
			if _, ok := results.MetricNamed(c.Metric); !ok {
				t.Errorf("%s %s: metric %q is none of quicbench's", p.ID, c.ID, c.Metric)
			}
			if c.Location != Mean && c.Location != Median {
				t.Errorf("%s %s: location %q", p.ID, c.ID, c.Location)
			}
			if c.Region.Low >= c.Region.High {
				t.Errorf("%s %s: region %v is empty", p.ID, c.ID, c.Region)
			}
			if c.Stat.Vary.From == c.Stat.Vary.To || (c.Stat.Kind == Interaction && c.Stat.By.From == c.Stat.By.To) {
				t.Errorf("%s %s: a contrast needs two levels", p.ID, c.ID)
			}
			if _, ok := results.MetricNamed(c.Stat.Then); (c.Stat.Kind == Widening) != ok || c.Stat.Then == c.Metric {
				t.Errorf("%s %s: a widening, and only a widening, reads a later metric (Then %q) beside its own", p.ID, c.ID, c.Stat.Then)
			}
			if c.Stat.InEachNetwork && (c.Stat.Kind != Share || !c.Region.lowOpen() || c.PaperN > 0 && c.PaperNetworks < 2) {
				t.Errorf("%s %s: a share in each network tells the highest: it needs an upper bound (Below) and the paper's networks", p.ID, c.ID)
			}
		}
		if testable < 5 {
			t.Errorf("%s: %d claims we can test, want at least 5", p.ID, testable)
		}
		if p.Cite() == "" || p.Title == "" || p.Seed == "" || p.Setup == "" || p.YearFrom == "" {
			t.Errorf("%s: citation, title, seed file, set-up and the year's source are needed", p.ID)
		}
	}
}

func TestLookupTakesTheIDOrTheAuthor(t *testing.T) {
	for _, name := range []string{"cook2017", "Cook", " COOK2017 "} {
		if p, err := Lookup(name); err != nil || p.ID != "cook2017" {
			t.Errorf("Lookup(%q) = %s, %v", name, p.ID, err)
		}
	}
	if p, err := Lookup("masri"); err != nil || p.Year != 0 || p.Cite() != "Masri et al." {
		t.Errorf("masri: %s %q %v", p.ID, p.Cite(), err)
	}
	if _, err := Lookup("seed002"); err == nil || !strings.Contains(err.Error(), "nepomuceno2018, masri, cook2017, wolsing2019, biswal2016") {
		t.Errorf("an unknown paper: %v, want the list of papers", err)
	}
	if p, ok := ForSpec("wolsing2019-mss-quick"); !ok || p.ID != "wolsing2019" {
		t.Errorf("ForSpec(wolsing2019-mss-quick) = %s, %v", p.ID, ok)
	}
	if _, ok := ForSpec("demo"); ok {
		t.Error("the demo's spec is no paper's")
	}
	if got := (Paper{Authors: "Prasenjeet Biswal, Omprakash Gnawali", Year: 2016}).Cite(); got != "Biswal and Gnawali 2016" {
		t.Errorf("Cite %q", got)
	}
}
