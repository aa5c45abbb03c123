package firefox

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/client/clienttest"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/proc"
	"github.com/quicbench/quicbench/internal/testbed"
	"github.com/quicbench/quicbench/internal/testenv"
)

// cpuModes are the ways BenchmarkFirefoxCPUByInstrument loads the page:
// bare (a navigation that waits for the complete document, then one
// evaluation of the metrics, nothing subscribed), bare with one of
// quicbench's instruments, and quicbench's load as the runner makes it
// (nil).
var cpuModes = []struct {
	name  string
	setUp func(ctx context.Context, t *tab) error
}{
	{"bare", func(context.Context, *tab) error { return nil }},
	{"setup", func(ctx context.Context, t *tab) error {
		if err := t.AddScript(ctx, client.SetupJS); err != nil {
			return err
		}
		_, err := t.SetViewport(ctx, factor.DefaultViewport())
		return err
	}},
	{"network", func(ctx context.Context, t *tab) error {
		_, err := t.WatchNetwork(ctx, false, &client.UnknownHostLog{})
		return err
	}},
	{"quicbench", nil},
}

// BenchmarkFirefoxCPUByInstrument is issue 45's item 1 for Firefox: a
// fresh Firefox's CPU while it loads the demo's page
// (clienttest.DemoTestbed), per process kind, in each of cpuModes, read
// once the metrics are in. scripts/bench-browser-cpu.sh runs it.
func BenchmarkFirefoxCPUByInstrument(b *testing.B) {
	testenv.RequireRoot(b)
	testenv.RequireFile(b, DefaultPath, "apt-get install firefox-esr libnss3-tools")
	testenv.RequireCommand(b, "certutil")
	tb, req := clienttest.DemoTestbed(b)
	var names []string
	for _, m := range cpuModes {
		names = append(names, m.name)
	}
	clienttest.CPUModes(b, names, []string{"browser", "renderer", "network", "gpu", "utility", "renderers"},
		func(i int) (map[string]float64, error) { return loadInMode(b, tb, req, i) })
}

// loadInMode makes one load in mode i with a fresh browser and returns
// its processes' CPU by kind, in ms, and the load's PLT ("plt").
func loadInMode(b *testing.B, tb *testbed.Testbed, req client.Request, i int) (map[string]float64, error) {
	profiles := b.TempDir()
	f := &Firefox{Namespace: tb.Topo.Client, ProfileDir: profiles, Timeout: 30 * time.Second}
	defer f.Close()
	ctx, cancel := context.WithTimeout(b.Context(), 30*time.Second)
	defer cancel()
	var byKind map[string]float64
	req.Loaded = func() { byKind = cpuByKind(profiles) }
	var res client.Result
	var err error
	if cpuModes[i].setUp == nil {
		res, err = f.Load(ctx, req)
	} else {
		res, err = bareLoad(ctx, f, req, cpuModes[i].setUp)
	}
	if err == nil && res.Failure != "" {
		err = fmt.Errorf("load failed: %s", res.Failure)
	}
	if err == nil && (res.Images != 32 || res.BrokenImages != 0) {
		err = fmt.Errorf("%d images, %d broken", res.Images, res.BrokenImages)
	}
	if byKind != nil {
		byKind["plt"] = res.PLTMs
	}
	return byKind, err
}

// bareLoad loads req in a fresh browser's tab set up by setUp, reading
// the metrics once after the document is complete (and again each 20 ms
// until the load event has ended, which it nearly always has).
func bareLoad(ctx context.Context, f *Firefox, req client.Request, setUp func(context.Context, *tab) error) (client.Result, error) {
	t, err := f.OpenTab(ctx, req)
	if err != nil {
		return client.Result{}, err
	}
	defer t.Close(false)
	if err := setUp(ctx, t.(*tab)); err != nil {
		return client.Result{}, err
	}
	m, failure := client.Navigate(ctx, t, req.URL, 30*time.Second)
	if req.Loaded != nil {
		req.Loaded()
	}
	return client.Result{PageMetrics: m, Failure: failure}, nil
}

// cpuByKind is the CPU by kind of the browsers whose profile is under
// profiles, and of their children.
func cpuByKind(profiles string) map[string]float64 {
	return clienttest.CPUByKind(proc.Using(profiles+"/"), processKind)
}

// processKind is a Firefox process's kind: the browser, or a child
// (-contentproc) by its type, its last argument.
// Children rewrite their command line into one argument (their process
// title), so it is read as words.
func processKind(cmdline []string) string {
	words := strings.Fields(strings.Join(cmdline, " "))
	if !slices.Contains(words, "-contentproc") {
		return "browser"
	}
	switch words[len(words)-1] {
	case "tab":
		return "renderer"
	case "socket":
		return "network"
	case "gpu":
		return "gpu"
	}
	return "utility"
}
