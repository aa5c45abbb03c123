package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
)

// cpuTrials are 5 verified loads per protocol on one setting: h3 from
// quinn in a process of its own, h2 from the Go origin in quicbench's;
// the h3 loads' browser used 0.9 of a core (CPU-bound), h2's 0.5.
func cpuTrials() []results.Trial {
	var trials []results.Trial
	for rep := 1; rep <= 5; rep++ {
		for _, p := range []struct {
			proto          factor.Protocol
			window, client float64
			server         string
			serverMs       *float64
			self           float64
		}{{"h2", 200, 100, "go", nil, 60}, {"h3", 200, 180, "quinn", results.F(50), 30}} {
			c := results.CPU{CPUMethod: "cgroup2", CPUWindowMs: results.F(p.window), ClientCPUUserMs: results.F(p.client - 10 + float64(rep)),
				ClientCPUSystemMs: results.F(10), ServerProcess: p.server, QuicbenchCPUUserMs: results.F(p.self), QuicbenchCPUSystemMs: results.F(0),
				EmulatorBusyMs: results.F(5), IdlePct: results.F(20)}
			if p.serverMs != nil {
				c.ServerCPUUserMs, c.ServerCPUSystemMs = p.serverMs, results.F(0)
			}
			if p.proto == "h3" {
				c.CPUBound = "client"
			}
			trials = append(trials, results.Trial{ID: "t", Rep: int64(rep),
				Levels:  results.Levels{Network: "zero", Page: "synthetic:40x20KB", Origins: 1, Protocol: p.proto, Visit: "first", Client: "chromium"},
				Outcome: results.Outcome{Status: results.StatusOK}, Metrics: results.Metrics{PLT: results.F(p.window - 20)}, CPU: c})
		}
	}
	// A load of a run made before CPU was measured counts in no CPU row.
	trials = append(trials, results.Trial{ID: "old", Rep: 6, Levels: trials[0].Levels, Outcome: results.Outcome{Status: results.StatusOK},
		Metrics: results.Metrics{PLT: results.F(180)}})
	return trials
}

func TestCPUTableRatiosAndWarning(t *testing.T) {
	a, err := analysis.Analyze(cpuTrials(), analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.CPU) != 1 || len(a.CPU[0].Protocols) != 2 {
		t.Fatalf("CPU %+v", a.CPU)
	}
	sc := a.CPU[0]
	h2, h3 := sc.Protocols[0], sc.Protocols[1]
	if h2.Protocol != "h2" || h2.Loads != 5 || *h2.ClientMs != 103 || h2.ServerMs != nil || h2.Server != "go" || h2.TotalMs != 163 || h2.Bound != 0 {
		t.Errorf("h2 %+v", h2)
	}
	if h3.Protocol != "h3" || *h3.ServerMs != 50 || h3.TotalMs != 263 || h3.Bound != 5 || h3.BoundBy != "client 5" {
		t.Errorf("h3 %+v", h3)
	}
	// h3/h2: total 263/163; client 183/103; server not measured for h2.
	if sc.TotalRatio != 263.0/163 || sc.ClientRatio != 183.0/103 || sc.ServerRatio != 0 {
		t.Errorf("ratios %v %v %v", sc.TotalRatio, sc.ClientRatio, sc.ServerRatio)
	}
	var out bytes.Buffer
	WriteText(&out, Page{Name: "run"}, a)
	for _, want := range []string{"CPU per verified load", "in quicbench", "quinn 50.0", "1.61, 1.78, -",
		"WARNING: zero, synthetic:40x20KB: 0 of 5 h2 loads, 5 of 5 h3 loads were CPU-bound"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, out.String())
		}
	}
	rows := cpuTable(a, func(v float64) string { return num(v, 1) })
	if len(rows) != 3 || rows[2][slices.Index(rows[0], "total_ratio")] != "1.6" || rows[2][slices.Index(rows[0], "median_cores_others_ms")] != "" {
		t.Errorf("CSV rows %q", rows)
	}
}

// TestNoCPUTableWithoutCPU: a run that measured no CPU has no CPU section.
func TestNoCPUTableWithoutCPU(t *testing.T) {
	a, err := analysis.Analyze(fakeTrials(), analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	WriteText(&out, Page{Name: "run"}, a)
	if len(a.CPU) != 0 || strings.Contains(out.String(), "CPU per verified load") {
		t.Errorf("a run without CPU got a CPU section: %+v", a.CPU)
	}
}

// TestCoresOthersAreSaid: a run on cores of its own says how much of them
// others used, its largest share over settings and protocols (h3's 30 ms
// of 200 here, against h2's 2 ms), and carries the medians to the table.
func TestCoresOthersAreSaid(t *testing.T) {
	trials := cpuTrials()
	for i := range trials {
		if trials[i].CPUWindowMs == nil {
			continue
		}
		trials[i].CoresOthersMs = results.F(2)
		if trials[i].Protocol == "h3" {
			trials[i].CoresOthersMs = results.F(30)
		}
	}
	a, err := analysis.Analyze(trials, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	WriteText(&out, Page{Name: "run"}, a)
	if want := "other tasks used them for at most 15.0 % of its loads' time"; !strings.Contains(out.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, out.String())
	}
	rows := cpuTable(a, func(v float64) string { return num(v, 2) })
	col := slices.Index(rows[0], "cores_others_share")
	if rows[1][col] != "0.01" || rows[2][col] != "0.15" || rows[2][col-1] != "30.00" {
		t.Errorf("CSV rows %q", rows)
	}
}
