package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/chromium"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/firefox"
	"github.com/quicbench/quicbench/internal/netcheck"
	"github.com/quicbench/quicbench/internal/netconf"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/spec"
	"github.com/quicbench/quicbench/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestBadInputIsOneLineAndStatus2 runs the real command with each bad input
// of the issue: the answer is one line naming the problem, exit status 2.
func TestBadInputIsOneLineAndStatus2(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--loss", "150"}, `--loss "150" is outside 0 to 100 percent`},
		{[]string{"--rtt", "-5ms"}, "--rtt -5ms is outside 0 to 1m"},
		{[]string{"--rtt", "fast"}, `--rtt "fast" is not a duration`},
		{[]string{"--page", "synthetic:0x10KB"}, "object count 0 is outside 1 to 10000"},
		{[]string{"--page", "cnn.com"}, "use synthetic:NxSIZE"},
		{[]string{"--protocols", "h4"}, `--protocols: protocol "h4" is unknown: use h1, h2 or h3`},
		{[]string{"--runs", "0"}, "--runs: runs 0 is outside 1 to 10000"},
		{[]string{"--origins", "0"}, "--origins: origins 0 is outside 1 to 64"},
		{[]string{"--stack", "quic"}, `--stack: stack "quic" is unknown: use tcp, tcp+ or tcp+bbr`},
		{[]string{"--origins", "2", "--path", "3=10ms"}, "--path names server 3, but there are 2 servers"},
		{[]string{"--visit", "second"}, `--visit: visit "second" is unknown: use first or repeat`},
		{[]string{"--cache", "yes"}, `--cache: cache "yes" is unknown: use off or on`},
		{[]string{"--server", "apache"}, `--server: server "apache" is unknown: use go, nginx or caddy`},
		{[]string{"--quic-server", "msquic"}, `--quic-server: QUIC server "msquic" is unknown: use quic-go, quinn, quiche or caddy`},
		{[]string{"--quic-cc", "vegas"}, `--quic-cc: QUIC congestion control "vegas" is unknown: use newreno, cubic, bbr, reno or bbr2`},
		{[]string{"--quic-server", "quinn", "--quic-cc", "bbr2"}, `--quic-server: QUIC server quinn has no congestion control "bbr2": use cubic, newreno or bbr`},
		{[]string{"--quic-cc", "bbr"}, `--quic-server: QUIC server quic-go has no congestion control "bbr": use newreno`},
		{[]string{"--down", "10mbps"}, "ambiguous"},
		{[]string{"--queue", "lots"}, `--queue "lots" is neither bytes`},
		{[]string{"--retries", "11"}, "--retries: retries 11 is outside 0 to 10"},
		{[]string{"--client", "curl"}, `--client: client "curl" is unknown: use chromium, chromium-shell, firefox or loader`},
		{[]string{"--client", "chromium,firefox"}, `--client takes one client: to compare clients, list them in a spec (factors: {clients: [chromium, firefox]}) and run it with quicbench run`},
		{[]string{"--browser", "hot"}, `--browser: browser "hot" is unknown: use fresh or warm`},
		{[]string{"--timeout", "0s"}, "--timeout: 0s must be positive"},
		{[]string{"--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--down", "10"}, `--down rate "10" has no unit`},
		{[]string{"--down", "1bit"}, "--down 1bit is below 8 kbit/s"},
		{[]string{"--up", "0.4bit"}, "below 1 bit/s"},
		{[]string{"--queue", "10"}, `--queue "10" has no unit`},
		{[]string{"--page", "synthetic:10000x1GiB"}, "above the limit of 256 MiB"},
		{[]string{"--down-trace", "/etc/passwd"}, "/etc/passwd:1: the line is not a whole number of milliseconds"},
		{[]string{"--down-trace", "/dev/zero"}, "/dev/zero is not a regular file (a device)"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Run(context.Background(), append([]string{"compare"}, tt.args...), &stdout, &stderr)
			if code != exitUsage {
				t.Errorf("exit status %d, want %d", code, exitUsage)
			}
			msg := stderr.String()
			if strings.Count(msg, "\n") != 1 || !strings.Contains(msg, tt.want) || strings.Count(msg, "compare:") != 1 || strings.Contains(msg, "root:") {
				t.Errorf("stderr %q, want one line containing %q, prefixed once, quoting no file", msg, tt.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q, want nothing", stdout.String())
			}
		})
	}
}

func TestParityRefusesBadFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--sizes", "10KB,10000B"}, "10000B is listed twice"},
		{[]string{"--sizes", "0B"}, `--sizes: "0B" is not a size from 1 B to 1 GiB`},
		{[]string{"--reps", "0"}, "--reps 0 is outside 1 to 10000"},
		{[]string{"--stack", "tcp9"}, "--stack: "},
		{[]string{"--quic", "go-newreno,nope"}, "--quic: "},
		{[]string{"--connection", "reused"}, `--connection "reused": use fresh or warm`},
		{[]string{"--net", "wolsing2019-mss,wolsing2019-mss"}, "--net: wolsing2019-mss is listed twice"},
		{[]string{"--net", "wolsing2019-mars"}, `--net: unknown network preset "wolsing2019-mars"`},
	} {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), append([]string{"parity"}, tt.args...), &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), tt.want) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("parity %q: exit %d, %q; want one line with %q", tt.args, code, stderr.String(), tt.want)
		}
	}
}

func TestParityNetworksFromPresets(t *testing.T) {
	nets, err := parityNetworks("wolsing2019-mss, wolsing2019-lte", 1)
	if err != nil || len(nets) != 2 || nets[0].Name != "wolsing2019-mss" || nets[1].Name != "wolsing2019-lte" {
		t.Fatalf("networks %+v, %v", nets, err)
	}
	mss := nets[0].Link
	if mss.Down.RateBitsPerSecond != 1_890_000 || mss.Up.Delay+mss.Down.Delay != 760*time.Millisecond || mss.Down.Loss == 0 || mss.Down.Seed == 0 {
		t.Errorf("wolsing2019-mss link %+v", mss)
	}
}

func TestUnknownCommand(t *testing.T) {
	var stderr bytes.Buffer
	if code := Run(context.Background(), []string{"compair"}, io.Discard, &stderr); code != exitUsage {
		t.Errorf("exit %d", code)
	}
	if !strings.Contains(stderr.String(), `unknown command "compair"`) {
		t.Errorf("stderr %q", stderr.String())
	}
}

func TestCompareHelpListsEveryFlag(t *testing.T) {
	var stdout bytes.Buffer
	if code := Run(context.Background(), []string{"compare", "-h"}, &stdout, io.Discard); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, f := range []string{"-rtt", "-loss", "-down", "-up", "-queue", "-page", "-protocols", "-runs", "-seed", "-json", "-out", "-timeout", "-chromium", "-verbose"} {
		if !strings.Contains(stdout.String(), f) {
			t.Errorf("help lacks %s", f)
		}
	}
}

// TestDefaultsAreTheDemoScenario: compare's defaults are the demo's
// network and page, as a one-cell spec that a spec file would give.
func TestDefaultsAreTheDemoScenario(t *testing.T) {
	now := time.Date(2026, 11, 22, 3, 4, 5, 0, time.UTC)
	o, err := parseCompare(nil, now, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	autoCPU := "unlimited" // --client-cpu auto on this machine
	if runtime.NumCPU() < autoCPUCores {
		autoCPU = "1"
	}
	want, err := spec.Parse([]byte(`name: compare
seed: 1
repetitions: 10
retries: 0
netcheck: true
factors:
  networks: [{name: rtt100ms-loss1-down10mbit-up5mbit-queue200ms, rtt: 100ms, loss: 1, down: 10mbit, up: 5mbit, queue: 200ms}]
  pages: [synthetic:32x10KB]
  protocols: [h1, h2, h3]
  stacks: [tcp]
  servers: [go]
  visits: [first]
  cache: [off]
  origins: [1]
  client_cpu: [` + autoCPU + `]
`))
	if err != nil {
		t.Fatal(err)
	}
	o.spec.Source, o.spec.SHA256, want.Source, want.SHA256 = nil, "", nil, ""
	if diff := cmp.Diff(want, o.spec, cmp.AllowUnexported(netconf.Network{})); diff != "" {
		t.Errorf("defaults differ (-want +got):\n%s", diff)
	}
	n := o.spec.Networks[0]
	// 200 ms of queue at 5 and 10 Mbit/s: 125,000 and 250,000 bytes.
	if n.Up.Delay != 50*time.Millisecond || n.Down.RateBitsPerSecond != 10e6 || n.Down.QueueBytes != 250_000 || n.Up.QueueBytes != 125_000 {
		t.Errorf("network %+v", n)
	}
	if o.dir != filepath.Join("runs", "compare-20261122-030405") || o.binaries[factor.ClientChromium] != chromium.DefaultChromiumPath || o.binaries[factor.ClientFirefox] != firefox.DefaultPath || o.json {
		t.Errorf("options %+v", o)
	}
}

// TestCompareKeepsWhatItIsAskedTo: --har, --pcap, --qlog and --netlog
// reach the spec's artifacts, each alone.
func TestCompareKeepsWhatItIsAskedTo(t *testing.T) {
	for flag, want := range map[string]spec.Artifacts{"--har": {HAR: true}, "--pcap": {Pcap: true}, "--qlog": {Qlog: true}, "--netlog": {NetLog: true}} {
		o, err := parseCompare([]string{flag}, time.Now(), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if o.spec.Artifacts != want {
			t.Errorf("%s: artifacts %+v, want %+v", flag, o.spec.Artifacts, want)
		}
	}
}

// TestCompareSamplesLanesUnlessTold: the loads are sampled for the lanes
// by default; --lanes=false leaves them unwatched.
func TestCompareSamplesLanesUnlessTold(t *testing.T) {
	for args, noLanes := range map[string]bool{"": false, "--lanes=false": true, "--lanes": false} {
		o, err := parseCompare(strings.Fields(args), time.Now(), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if o.noLanes != noLanes {
			t.Errorf("compare %s: noLanes %v, want %v", args, o.noLanes, noLanes)
		}
	}
}

func TestOddRTTSplitsExactly(t *testing.T) {
	o, err := parseCompare([]string{"--rtt", "101ms", "--queue", "64KB", "--down", "0"}, time.Now(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	n := o.spec.Networks[0]
	if up, down := n.Up.Delay, n.Down.Delay; up+down != 101*time.Millisecond {
		t.Errorf("delays %v + %v ≠ 101ms", up, down)
	}
	if n.Up.QueueBytes != 64_000 || n.Down.RateBitsPerSecond != 0 {
		t.Errorf("queue %d, down rate %d", n.Up.QueueBytes, n.Down.RateBitsPerSecond)
	}
}

// TestSummaryGolden checks the terminal table against testdata; run with
// -update to rewrite it after an intended change.
func TestSummaryGolden(t *testing.T) {
	oneCore := 1.0
	mk := func(rep int64, p factor.Protocol, plt, dcl, ttfb float64, failure string) results.Trial {
		tr := results.Trial{ID: fmt.Sprintf("c-%s-r%d", p, rep), Rep: rep,
			Levels:        results.Levels{Network: "demo", Page: "synthetic:32x10KB", Protocol: p, ClientCPU: &oneCore},
			NetworkValues: results.NetworkValues{DirectionValues: results.DirectionValues{LossUpPct: 1, LossDownPct: 1}},
			Outcome:       results.Outcome{Status: results.StatusOK, DocumentProtocol: p.NextHop()},
			Link:          results.Link{UpPackets: 111, UpLost: 1, UpPeakQueueBytes: 3000, DownPackets: 222, DownLost: 2, DownQueueDrops: 1, DownPeakQueueBytes: 250000 - 10*rep}}
		if failure != "" {
			tr.Status, tr.Error = results.StatusFailed, failure
			return tr
		}
		tr.PLT, tr.DCL, tr.TTFB = results.F(plt), results.F(dcl), results.F(ttfb)
		tr.Overhead, tr.BrowserStart = results.F(600), results.F(450)
		return tr
	}
	trials := []results.Trial{
		mk(1, "h2", 1000, 400, 300, ""), mk(1, "h3", 900, 350, 200, ""), mk(1, "h1", 1500, 410, 310, ""),
		mk(2, "h3", 950, 340, 210, ""), mk(2, "h1", 1400, 420, 320, ""), mk(2, "h2", 1100, 410, 305, ""),
		mk(3, "h1", 0, 0, 0, "navigation: net::ERR_TIMED_OUT"), mk(3, "h2", 1050, 405, 302, ""), mk(3, "h3", 1200, 360, 220, ""),
	}
	var conns []results.Connection
	for _, tr := range trials {
		kind := map[factor.Protocol]string{"h1": server.HandshakeFull, "h2": server.HandshakeResumed, "h3": server.Handshake0RTT}[tr.Protocol]
		conns = append(conns, results.Connection{TrialID: tr.ID, Handshake: kind})
		if tr.Protocol == "h1" {
			conns = append(conns, results.Connection{TrialID: tr.ID, Handshake: server.HandshakeResumed})
		}
	}
	r := &compareRun{WallSeconds: 21.5, Dir: "runs/x",
		Testbeds: []results.Testbed{{Stack: "tcp+", Congestion: "cubic", InitCwnd: 32, InitRwnd: 32, SlowStartAfterIdle: "0",
			TCPWmem: "4096 16384 33554432", Pacing: true}}}
	// The network's netcheck failed twice on goodput: the answer says so,
	// beside the failed h1 load.
	cals := []analysis.Calibration{calibrationOf("demo", &netcheck.Report{Lines: []netcheck.Line{
		{Check: "rtt", Configured: "40 ms", Measured: "40.2 ms", Result: netcheck.Pass},
		{Check: "goodput down", Configured: "10.000 Mbit/s", Measured: "8.612 Mbit/s", Result: netcheck.Fail}}})}
	r.summarize(trials, conns, cals, nil)
	if answer := strings.Join(r.Answer, " "); !strings.Contains(answer, "1 of its 9 loads failed (h1 1)") || !strings.Contains(answer, "goodput down configured 10.000 Mbit/s, measured 8.612 Mbit/s") {
		t.Errorf("the answer does not state the failed load and the network's netcheck: %q", answer)
	}
	if got := r.Summary.Protocols[2].RatioToH2; math.Abs(got-950.0/1050) > 1e-12 {
		t.Errorf("h3 ratio %v, want 950/1050", got)
	}
	var got bytes.Buffer
	printSummary(&got, r, 100*time.Millisecond)
	testenv.Golden(t, filepath.Join("testdata", "compare_summary.golden"), got.Bytes(), *update)
}

// TestClientCPUAuto: --client-cpu auto gives a browser one core on a
// machine of fewer than 4 cores where the run can cap it, and none where
// it cannot (an ordinary user without a delegated cgroup) or on 4 cores
// or more; it says so and why in the first line, and leaves the built-in
// loader (which cannot be capped) unlimited; a named level stays as named.
func TestClientCPUAuto(t *testing.T) {
	flags := func(client, cpu string) *compareFlags { return &compareFlags{clientName: &client, clientCPU: &cpu} }
	canCap := func() error { return nil }
	f := flags("chromium", "auto")
	if got := f.resolvedClientCPU(2, canCap); got != "1" || !strings.Contains(f.cpuNote, "fewer than 4 cores (this one has 2)") {
		t.Errorf("2 cores: %q, note %q", got, f.cpuNote)
	}
	f = flags("chromium", "auto")
	cannot := func() error { return errors.New("cpu limit: no cgroup for this run (not root)") }
	if got := f.resolvedClientCPU(2, cannot); got != "unlimited" || !strings.Contains(f.cpuNote, "this run cannot cap the browser (cpu limit: no cgroup for this run (not root))") {
		t.Errorf("2 cores, no cap possible: %q, note %q", got, f.cpuNote)
	}
	f = flags("firefox", "auto")
	if got := f.resolvedClientCPU(8, cannot); got != "unlimited" || !strings.Contains(f.cpuNote, "4 cores or more (this one has 8)") {
		t.Errorf("8 cores: %q, note %q", got, f.cpuNote)
	}
	f = flags("loader", "auto")
	if got := f.resolvedClientCPU(2, canCap); got != "unlimited" || f.cpuNote != "" {
		t.Errorf("the loader: %q, note %q", got, f.cpuNote)
	}
	f = flags("chromium", "0.5")
	if got := f.resolvedClientCPU(2, cannot); got != "0.5" || f.cpuNote != "" {
		t.Errorf("named: %q, note %q", got, f.cpuNote)
	}
	o, err := parseCompare(nil, time.Now(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s := o.spec
	if line := header(s, "client CPU 1 by default"); !strings.HasSuffix(line, "(client CPU 1 by default)") {
		t.Errorf("first line %q lacks the note", line)
	}
}
