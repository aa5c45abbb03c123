package experiment

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/chromium"
	"github.com/quicbench/quicbench/internal/cpuuse"
	"github.com/quicbench/quicbench/internal/report"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/testenv"
)

// TestEachLoadsCPUPerParty: Chromium loads 40 × 20 KB with no delay over
// h2 from nginx and h3 from quicbench-h3, each server in processes of its
// own; every trial records the CPU over its measured visit of the
// browser's processes, of the server that served its protocol, of
// quicbench's process and of the emulator, and the machine's idle share,
// counted by cgroups (root, cgroup2 mounted here).
func TestEachLoadsCPUPerParty(t *testing.T) {
	checkRunCPU(t, 2, "servers: [nginx]\n  quic: quinn+cubic\n  ", map[string]string{"h2": "nginx", "h3": "quinn"})
}

// TestTheGoOriginsCPUIsItsOwn: the Go origin serves h2 and h3 from a
// process of its own, so its CPU is the server's (server_process go), not
// quicbench's.
func TestTheGoOriginsCPUIsItsOwn(t *testing.T) {
	checkRunCPU(t, 1, "", map[string]string{"h2": "go", "h3": "go"})
}

// checkRunCPU runs reps repetitions of Chromium loading 40 × 20 KB over
// h2 and h3 at 0 ms from the servers that the factor lines stack give
// (each followed by a line break and the next line's indent; "" for the
// default, the Go origin), and checks each trial's CPU columns, servers
// naming each protocol's server process.
func checkRunCPU(t *testing.T, reps int, stack string, servers map[string]string) {
	t.Helper()
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "apt-get install chromium")
	_, store, _ := runSpec(t, fmt.Sprintf(`repetitions: %d
retries: 1
netcheck: false
factors:
  networks: [{name: zero, rtt: 0ms}]
  pages: [synthetic:40x20KB]
  %sprotocols: [h2, h3]
`, reps, stack))
	method := cpuAccounting(t, store)
	trials := trialsOf(t, store)
	if len(trials) != 2*reps {
		t.Fatalf("%d trials, want %d", len(trials), 2*reps)
	}
	for _, tr := range trials {
		checkCPU(t, tr.Trial, method, servers)
		checkLanes(t, store, tr.Trial, method)
	}
	checkLanesDrawn(t, store)
}

// checkLanesDrawn checks that the run's report draws the sampled lanes
// under each waterfall: the browser's and the server's CPU (each in a
// process of its own) and the link's bytes each way.
func checkLanesDrawn(t *testing.T, store *results.Store) {
	t.Helper()
	rep, err := report.Build(context.Background(), store, "", analysis.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	drawn := 0
	for _, f := range rep.Figures {
		if !strings.HasPrefix(f.Name, "waterfall") {
			continue
		}
		drawn++
		for _, want := range []string{"browser CPU, 0–", "server CPU, 0–", "quicbench CPU, 0–", "link down, 0–", "link up, 0–"} {
			if !bytes.Contains(f.SVG, []byte(want)) {
				t.Errorf("%s has no lane %q", f.Name, want)
			}
		}
	}
	if drawn == 0 {
		t.Error("the report draws no waterfall")
	}
}

// checkLanes checks one verified trial's lanes: read every 100 ms with
// cgroups (250 ms by /proc) over its CPU window, the last when it closed;
// each count grows; the last sample's browser and server CPU are the
// window's (read within a few ms of each other), its downlink bytes at
// least the page's 800 KB.
func checkLanes(t *testing.T, store *results.Store, tr results.Trial, method string) {
	t.Helper()
	samples, err := store.SamplesOf(tr.ID)
	if err != nil {
		t.Fatal(err)
	}
	window, every := *tr.CPU.CPUWindowMs, 100.0
	if method != string(cpuuse.MethodCgroup) {
		every = 250
	}
	if want := int(window/every) - 1; len(samples) < max(1, want) {
		t.Fatalf("trial %s: %d samples over a window of %.0f ms, want at least %d", tr.ID, len(samples), window, want)
	}
	var prev results.Sample
	for _, x := range samples {
		if x.ClientCPUMs == nil || x.ServerCPUMs == nil || x.AtMs <= prev.AtMs || x.QuicbenchCPUMs < prev.QuicbenchCPUMs ||
			x.DownBytes < prev.DownBytes || x.UpBytes < prev.UpBytes || (prev.ClientCPUMs != nil && *x.ClientCPUMs < *prev.ClientCPUMs) {
			t.Fatalf("trial %s: sample %+v after %+v", tr.ID, x, prev)
		}
		prev = x
	}
	last := samples[len(samples)-1]
	client := *tr.CPU.ClientCPUUserMs + *tr.CPU.ClientCPUSystemMs
	server := *tr.CPU.ServerCPUUserMs + *tr.CPU.ServerCPUSystemMs
	if last.AtMs > window || last.AtMs < window-40 || math.Abs(*last.ClientCPUMs-client) > 0.1*client+10 ||
		math.Abs(*last.ServerCPUMs-server) > 0.1*server+10 || last.DownBytes < 800_000 || last.UpBytes <= 0 {
		t.Errorf("trial %s: last sample %+v (browser %.1f, server %.1f ms); the window's %.1f ms: browser %.1f, server %.1f ms",
			tr.ID, last, *last.ClientCPUMs, *last.ServerCPUMs, window, client, server)
	}
}

// cpuAccounting is how the run counted CPU, from its cpu_accounting
// (package cpuuse's tests check that root gets cgroups); every trial
// must say the same.
func cpuAccounting(t *testing.T, store *results.Store) string {
	t.Helper()
	accounting, err := store.Meta("cpu_accounting")
	if err != nil {
		t.Fatal(err)
	}
	method, why, _ := strings.Cut(accounting, " ")
	if method != string(cpuuse.MethodCgroup) && method != string(cpuuse.MethodProc) {
		t.Fatalf("the run's cpu_accounting %q", accounting)
	}
	if why != "" {
		t.Logf("CPU by /proc here: %s", why)
	}
	return method
}

// checkCPU checks one verified trial's CPU columns; servers names the
// server process of each protocol.
func checkCPU(t *testing.T, tr results.Trial, method string, servers map[string]string) {
	t.Helper()
	if tr.Status != results.StatusOK || tr.PLT == nil {
		t.Fatalf("trial %s: %s %s", tr.ID, tr.Status, tr.Error)
	}
	c := tr.CPU
	if c.CPUMethod != method || c.CPUWindowMs == nil || c.ClientCPUUserMs == nil || c.ServerCPUUserMs == nil ||
		c.QuicbenchCPUUserMs == nil || c.EmulatorBusyMs == nil || c.IdlePct == nil {
		t.Fatalf("trial %s (%s): CPU columns %+v", tr.ID, tr.Protocol, c)
	}
	want := servers[string(tr.Protocol)]
	if c.ServerProcess != want {
		t.Errorf("trial %s: server process %q, want %q", tr.ID, c.ServerProcess, want)
	}
	// The window opens before the navigation starts and closes once the
	// load event's end has been read (polled every 20 ms).
	if w, plt := *c.CPUWindowMs, *tr.PLT; w < plt || w > plt+400 {
		t.Errorf("trial %s: CPU window %.1f ms for a PLT of %.1f ms", tr.ID, w, plt)
	}
	window := *c.CPUWindowMs
	client := *c.ClientCPUUserMs + *c.ClientCPUSystemMs
	server := *c.ServerCPUUserMs + *c.ServerCPUSystemMs
	// Rendering 40 images takes the browser real work; serving 800 KB over
	// TLS or QUIC takes the server some; neither can use more than the
	// machine's cores over the window.
	if client < 10 || client > 2*window+5 {
		t.Errorf("trial %s: the browser used %.1f ms of CPU in %.1f ms", tr.ID, client, window)
	}
	if server <= 0 || server > 2*window+5 {
		t.Errorf("trial %s: the server used %.1f ms of CPU in %.1f ms", tr.ID, server, window)
	}
	self := *c.QuicbenchCPUUserMs + *c.QuicbenchCPUSystemMs
	if self <= 0 || *c.EmulatorBusyMs <= 0 || *c.EmulatorBusyMs > 2*window {
		t.Errorf("trial %s: quicbench used %.1f ms, the emulator worked %.1f ms, in %.1f ms", tr.ID, self, *c.EmulatorBusyMs, window)
	}
	if idle := *c.IdlePct; idle < 0 || idle > 100 {
		t.Errorf("trial %s: idle %.1f %%", tr.ID, idle)
	}
	checkWaits(t, tr, method)
	t.Logf("%s %s: PLT %.0f, window %.0f, browser %.0f, %s %.0f, quicbench %.0f (emulator %.0f), idle %.0f %%, bound %q",
		tr.ID, tr.Protocol, *tr.PLT, window, client, c.ServerProcess, server, self, *c.EmulatorBusyMs, *c.IdlePct, c.CPUBound)
}

// checkWaits checks a trial's waiting columns: with cgroups, every party's
// wait is read and none passes what its tasks could have waited (two
// CPUs' worth of the window for a party, more for quicbench's threads
// summed); the machine's pressure is read where the kernel has PSI.
func checkWaits(t *testing.T, tr results.Trial, method string) {
	t.Helper()
	w, window := tr.CPU.CPUWaits, *tr.CPU.CPUWindowMs
	if w.QuicbenchCPUWaitMs == nil || *w.QuicbenchCPUWaitMs < 0 || *w.QuicbenchCPUWaitMs > 20*window {
		t.Errorf("trial %s: quicbench's wait %v in %.0f ms", tr.ID, w.QuicbenchCPUWaitMs, window)
	}
	if method != string(cpuuse.MethodCgroup) {
		return
	}
	for name, wait := range map[string]*float64{"client": w.ClientCPUWaitMs, "server": w.ServerCPUWaitMs} {
		if wait == nil || *wait < 0 || *wait > window+5 {
			t.Errorf("trial %s: the %s's CPU pressure %v in %.0f ms", tr.ID, name, wait, window)
		}
	}
}

// TestAClientCPUCapHoldsTheBrowser: at client_cpu 0.5 the browser loading
// 40 × 20 KB at 0 ms uses at most half a core over the measured visit and
// its cap throttles it; uncapped in the same run it uses more and is not
// throttled; the client_cpu column is null for unlimited (package plan
// checks that only capped trials' IDs change).
func TestAClientCPUCapHoldsTheBrowser(t *testing.T) {
	store := runClientCPU(t, "synthetic:40x20KB", "[unlimited, 0.5]")
	if cpuAccounting(t, store) != string(cpuuse.MethodCgroup) {
		t.Skip("no cgroups, no cap")
	}
	trials := trialsOf(t, store)
	if len(trials) != 2 {
		t.Fatalf("%d trials, want 2", len(trials))
	}
	for _, tr := range trials {
		if tr.Status != results.StatusOK {
			t.Fatalf("trial %s: %s %s", tr.ID, tr.Status, tr.Error)
		}
		c := tr.CPU
		used, window := *c.ClientCPUUserMs+*c.ClientCPUSystemMs, *c.CPUWindowMs
		capped := tr.ClientCPU != nil
		if capped && *tr.ClientCPU != 0.5 {
			t.Errorf("trial %s: client_cpu %v", tr.ID, *tr.ClientCPU)
		}
		throttled := c.ClientCPUThrottledMs
		if throttled == nil {
			t.Fatalf("trial %s: no throttled time read", tr.ID)
		}
		t.Logf("trial %s: browser %.0f ms of CPU in %.0f ms, throttled %.0f, waited %v", tr.ID, used, window, *throttled, *c.ClientCPUWaitMs)
		switch {
		case capped && (used > 0.5*window+cpuuse.LimitPeriod.Seconds()*1000 || *throttled <= 0):
			t.Errorf("trial %s: capped at 0.5 the browser used %.0f ms in %.0f ms, throttled %.0f", tr.ID, used, window, *throttled)
		case !capped && *throttled > 0:
			t.Errorf("trial %s: uncapped, the browser was throttled %.0f ms", tr.ID, *throttled)
		}
	}
}

// TestTheReportStatesTheWaitRuleInForce: the report's words for a
// CPU-bound load give the share the runner judges by.
func TestTheReportStatesTheWaitRuleInForce(t *testing.T) {
	if want := fmt.Sprintf("at least %.0f %% of it", 100*cpuuse.BoundWait); !strings.Contains(report.BoundRule, want) {
		t.Errorf("report.BoundRule %q lacks %q", report.BoundRule, want)
	}
}

// TestACappedClientGetsCPUsOfItsOwn: when every client_cpu level is a cap
// that leaves a CPU, the run gives the browser CPUs of its own (its
// cpu_split says which) and measures what others used there.
func TestACappedClientGetsCPUsOfItsOwn(t *testing.T) {
	store := runClientCPU(t, "synthetic:8x10KB", "[1]")
	split, err := store.Meta("cpu_split")
	if err != nil {
		t.Fatal(err)
	}
	if cpuAccounting(t, store) != string(cpuuse.MethodCgroup) || strings.HasPrefix(split, "none: cpu split:") {
		t.Skipf("no split here: %s", split)
	}
	if !strings.HasPrefix(split, "client on CPUs ") {
		t.Fatalf("cpu_split %q", split)
	}
	for _, tr := range trialsOf(t, store) {
		if tr.Status != results.StatusOK || tr.ClientCPUsOthersMs == nil || *tr.ClientCPUsOthersMs < 0 || *tr.ClientCPUsOthersMs > *tr.CPUWindowMs {
			t.Errorf("trial %s (%s): others on the client's CPUs %v in %v ms", tr.ID, tr.Status, tr.ClientCPUsOthersMs, tr.CPUWindowMs)
		}
	}
}

// runClientCPU runs one h2 load of page at 0 ms per client_cpu level of
// levels (a YAML list) in Chromium, and returns the run's store.
func runClientCPU(t *testing.T, page, levels string) *results.Store {
	t.Helper()
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "apt-get install chromium")
	_, store, _ := runSpec(t, fmt.Sprintf(`repetitions: 1
retries: 1
netcheck: false
factors:
  networks: [{name: zero, rtt: 0ms}]
  pages: [%s]
  protocols: [h2]
  client_cpu: %s
`, page, levels))
	return store
}
