package cli

import (
	"bytes"
	"context"
	"flag"
	"io"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/experiment"
	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/origin"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/stacks"
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
		{[]string{"--protocols", "h4"}, `protocol "h4" is unknown: use h1, h2 or h3`},
		{[]string{"--runs", "0"}, "--runs 0 is outside 1 to 10000"},
		{[]string{"--origins", "0"}, "--origins 0 is outside 1 to 64"},
		{[]string{"--stack", "quic"}, `--stack "quic": use tcp, tcp+ or tcp+bbr`},
		{[]string{"--origins", "2", "--path", "3=10ms"}, "--path names server 3, but there are 2 servers"},
		{[]string{"--visit", "second"}, `--visit: visit "second" is unknown: use first or repeat`},
		{[]string{"--cache", "yes"}, `--cache "yes": use on or off`},
		{[]string{"--server", "caddy"}, `--server: server "caddy" is unknown: use go or nginx`},
		{[]string{"--down", "10mbps"}, "ambiguous"},
		{[]string{"--queue", "lots"}, `--queue "lots" is neither bytes`},
		{[]string{"--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Run(context.Background(), append([]string{"compare"}, tt.args...), &stdout, &stderr)
			if code != exitUsage {
				t.Errorf("exit status %d, want %d", code, exitUsage)
			}
			msg := stderr.String()
			if strings.Count(msg, "\n") != 1 || !strings.Contains(msg, tt.want) {
				t.Errorf("stderr %q, want one line containing %q", msg, tt.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q, want nothing", stdout.String())
			}
		})
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

func TestDefaultsAreTheDemoScenario(t *testing.T) {
	now := time.Date(2026, 11, 22, 3, 4, 5, 0, time.UTC)
	o, err := parseCompare(nil, now, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := experiment.CompareConfig{
		Link: emulator.Config{
			// 200 ms of queue at 5 and 10 Mbit/s: 125,000 and 250,000 bytes.
			Up:   link.Config{Delay: 50 * time.Millisecond, Loss: 0.01, RateBitsPerSecond: 5e6, QueueBytes: 125_000},
			Down: link.Config{Delay: 50 * time.Millisecond, Loss: 0.01, RateBitsPerSecond: 10e6, QueueBytes: 250_000},
		},
		RTT:          100 * time.Millisecond,
		Netcheck:     true,
		Page:         site.SyntheticSpec{Objects: 32, ObjectBytes: 10_000},
		Origins:      1,
		Stack:        mustStack(t, "tcp"),
		Server:       "go",
		Visit:        client.FirstVisit,
		Protocols:    []client.Protocol{"h1", "h2", "h3"},
		Runs:         5,
		Seed:         1,
		RunDir:       "runs/compare-20261122-030405",
		ChromiumPath: client.DefaultChromiumPath,
		LoadTimeout:  time.Minute,
	}
	if diff := cmp.Diff(want, o.cfg, cmp.Comparer(func(a, b func(experiment.Load)) bool { return a == nil && b == nil })); diff != "" {
		t.Errorf("defaults differ (-want +got):\n%s", diff)
	}
}

func TestOddRTTSplitsExactly(t *testing.T) {
	o, err := parseCompare([]string{"--rtt", "101ms", "--queue", "64KB", "--down", "0"}, time.Now(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if up, down := o.cfg.Link.Up.Delay, o.cfg.Link.Down.Delay; up+down != 101*time.Millisecond {
		t.Errorf("delays %v + %v ≠ 101ms", up, down)
	}
	if o.cfg.Link.Up.QueueBytes != 64_000 || o.cfg.Link.Down.RateBitsPerSecond != 0 {
		t.Errorf("queue %d, down rate %d", o.cfg.Link.Up.QueueBytes, o.cfg.Link.Down.RateBitsPerSecond)
	}
}

// TestSummaryGolden checks the terminal table against testdata; run with
// -update to rewrite it after an intended change.
func TestSummaryGolden(t *testing.T) {
	mk := func(round int, p client.Protocol, plt, dcl, ttfb float64, failure string) experiment.Load {
		l := experiment.Load{Round: round, Result: client.Result{Requested: p, Failure: failure}}
		l.DocumentProtocol, l.PLTMs, l.DCLMs, l.TTFBMs = p.NextHop(), plt, dcl, ttfb
		l.WallMs, l.BrowserStartMs = plt+600, 450
		l.ServerRequests = origin.Counts{H2: 33}
		kind := map[client.Protocol]string{"h1": origin.HandshakeFull, "h2": origin.HandshakeResumed, "h3": origin.Handshake0RTT}[p]
		l.Connections = []origin.ConnRecord{{Handshake: kind}}
		if p == "h1" {
			l.Connections = append(l.Connections, origin.ConnRecord{Handshake: origin.HandshakeResumed})
		}
		return l
	}
	loads := []experiment.Load{
		mk(1, "h2", 1000, 400, 300, ""), mk(1, "h3", 900, 350, 200, ""), mk(1, "h1", 1500, 410, 310, ""),
		mk(2, "h3", 950, 340, 210, ""), mk(2, "h1", 1400, 420, 320, ""), mk(2, "h2", 1100, 410, 305, ""),
		mk(3, "h1", 0, 0, 0, "navigation: net::ERR_TIMED_OUT"), mk(3, "h2", 1050, 405, 302, ""), mk(3, "h3", 1200, 360, 220, ""),
	}
	protos := []client.Protocol{"h1", "h2", "h3"}
	res := &experiment.CompareResult{
		Loads: loads, Summaries: experiment.Summarize(protos, loads), Overhead: experiment.MeasureOverhead(loads),
		WallSeconds: 21.5, RunDir: "runs/x",
		Uplink:       emulator.Stats{Stats: link.Stats{Packets: 1000, DroppedLoss: 10, PeakQueueBytes: 3000}},
		Downlink:     emulator.Stats{Stats: link.Stats{Packets: 2000, DroppedLoss: 19, DroppedQueue: 2, PeakQueueBytes: 250000}},
		UplinkConfig: link.Config{Loss: 0.01}, DownlinkConfig: link.Config{Loss: 0.01},
		Stack: stacks.Applied{Profile: "tcp+", Congestion: "cubic", InitCwnd: 32, InitRwnd: 32, SlowStartAfterIdle: "0",
			TCPWmem: "4096 16384 33554432", Pacing: true},
	}
	if math.Abs(res.Summaries[2].RatioToH2-950.0/1050) > 1e-12 {
		t.Errorf("h3 ratio %v, want 950/1050", res.Summaries[2].RatioToH2)
	}
	var got bytes.Buffer
	printSummary(&got, res)
	testenv.Golden(t, filepath.Join("testdata", "compare_summary.golden"), got.Bytes(), *update)
}

func mustStack(t *testing.T, name string) stacks.Profile {
	t.Helper()
	p, err := stacks.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
