package cli

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/experiment"
	"github.com/quicbench/quicbench/internal/netconf"
)

func resolveNet(t *testing.T, args ...string) (*netconf.Network, error) {
	t.Helper()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	nf := addNetworkFlags(fs, networkDefaults{rtt: "0", loss: "0", down: "0", up: "0", queue: "0"})
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return nf.resolve()
}

func TestPresetWithOverrides(t *testing.T) {
	n, err := resolveNet(t, "--net", "wolsing2019-mss", "--rtt", "100ms", "--down", "3mbit")
	if err != nil {
		t.Fatal(err)
	}
	l := n
	if n.Preset != "wolsing2019-mss" || n.RTT != 100*time.Millisecond || l.Down.Delay != 50*time.Millisecond {
		t.Errorf("preset %q RTT %v down delay %v", n.Preset, n.RTT, l.Down.Delay)
	}
	// The preset's 200 ms queue is recomputed at the overridden rate:
	// 200 ms at 3 Mbit/s = 75,000 B; the uplink keeps 1.89 Mbit/s → 47,250 B.
	if l.Down.RateBitsPerSecond != 3e6 || l.Down.QueueBytes != 75_000 || l.Up.QueueBytes != 47_250 {
		t.Errorf("down %d bit/s queue %d B, up queue %d B", l.Down.RateBitsPerSecond, l.Down.QueueBytes, l.Up.QueueBytes)
	}
	if l.Up.Loss < 0.03 || l.Up.Loss > 0.031 {
		t.Errorf("the preset's loss was not kept: %v", l.Up.Loss)
	}
	if !strings.Contains(n.Describe(), "net wolsing2019-mss") {
		t.Errorf("describe() = %q", n.Describe())
	}
}

func TestGilbertAndPerDirectionLoss(t *testing.T) {
	n, err := resolveNet(t, "--gilbert", "1,30", "--loss-down", "2")
	if err != nil {
		t.Fatal(err)
	}
	g := n.Up.GilbertElliott
	if g == nil || g.P != 0.01 || g.R != 0.3 || g.LossBad != 1 || g.LossGood != 0 {
		t.Fatalf("uplink Gilbert-Elliott %+v, want p 1%%, r 30%%, 1-h 100%%, 1-k 0%%", g)
	}
	// --loss-down is applied before --gilbert, which sets both directions.
	if n.Down.GilbertElliott == nil || n.Down.Loss != 0 {
		t.Errorf("downlink %+v", n.Down)
	}
	n, _ = resolveNet(t, "--loss", "1", "--loss-up", "3")
	if n.Down.Loss != 0.01 || n.Up.Loss != 0.03 {
		t.Errorf("loss down %v up %v, want 1%% and 3%%", n.Down.Loss, n.Up.Loss)
	}
}

func TestQueueInPacketsAndTraces(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "one.down")
	os.WriteFile(trace, []byte("1\n"), 0o644) // 12 Mbit/s
	n, err := resolveNet(t, "--down-trace", trace, "--queue", "100ms", "--up", "1mbit")
	if err != nil {
		t.Fatal(err)
	}
	// 100 ms at the trace's mean 12 Mbit/s = 150,000 B; at 1 Mbit/s 12,500 B.
	if n.Down.Trace == nil || n.Down.QueueBytes != 150_000 || n.Up.QueueBytes != 12_500 {
		t.Errorf("down trace %v queue %d, up queue %d", n.Down.Trace, n.Down.QueueBytes, n.Up.QueueBytes)
	}
	n, err = resolveNet(t, "--queue", "64pkt", "--down", "10mbit")
	if err != nil || n.Down.QueuePackets != 64 || n.Down.QueueBytes != 0 || n.Down.DropHead {
		t.Errorf("queue 64pkt: %+v, %v", n.Down, err)
	}
	n, err = resolveNet(t, "--net", "wolsing2019-lte", "--drop-head")
	if err != nil || !n.Down.DropHead || !n.Up.DropHead || !strings.Contains(n.Describe(), "drop-head") {
		t.Errorf("--drop-head on a preset: %+v, %v", n.Down, err)
	}
}

func TestBadNetworkInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.down")
	os.WriteFile(bad, []byte("1\n2\nfast\n"), 0o644)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--net", "5g"}, `unknown network preset "5g"`},
		{[]string{"--gilbert", "1"}, "give p,r[,1-h[,1-k]]"},
		{[]string{"--gilbert", "1,0"}, "the bad state would never end"},
		{[]string{"--gilbert", "1,200"}, "outside 0 to 100 percent"},
		{[]string{"--down-trace", bad}, "bad.down:3: the line is not a whole number"},
		{[]string{"--down-trace", filepath.Join(dir, "missing")}, "missing: no such file"},
		{[]string{"--queue", "0pkt"}, "whole number of packets"},
		{[]string{"--jitter", "-1ms"}, "--jitter"},
		{[]string{"--loss-up", "101"}, "outside 0 to 100 percent"},
	}
	for _, tt := range tests {
		var stderr bytes.Buffer
		code := Run(context.Background(), append([]string{"compare"}, tt.args...), io.Discard, &stderr)
		if code != exitUsage || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want status 2 and one line containing %q", tt.args, code, stderr.String(), tt.want)
		}
	}
}

func TestPresetsCommandListsEveryGroup(t *testing.T) {
	var out bytes.Buffer
	if code := Run(context.Background(), []string{"presets"}, &out, io.Discard); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"wolsing2019-dsl", "25 Mbit/s", "12ms", "wpt-3gfast", "browsertime-3g", "devtools-fast-4g", "nepomuceno2018-rtt200-loss2", "(1−q)² = 1 − p"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("presets output lacks %q", want)
		}
	}
}

func TestPathFlag(t *testing.T) {
	n, err := resolveNet(t, "--rtt", "20ms", "--path", "2=40ms,0.5", "--path", "3=1s")
	if err != nil {
		t.Fatal(err)
	}
	p := n.Paths
	if len(p) != 2 || p[0].Server != 2 || p[0].RTT != 40*time.Millisecond || p[0].Loss != 0.005 ||
		p[1].Server != 3 || p[1].RTT != time.Second || p[1].Loss != 0 {
		t.Errorf("paths %+v", p)
	}
	// The emulator's paths lead to the servers' addresses.
	if l, _ := experiment.SeededLink(n, 1); len(l.Paths) != 2 || l.Paths[0].Server.String() != "198.19.0.11" || l.Paths[1].Server.String() != "198.19.0.12" {
		t.Errorf("emulator paths %+v", l.Paths)
	}
	if err := n.CheckServers(2); err == nil || !strings.Contains(err.Error(), "server 3") {
		t.Errorf("checkServers(2) = %v, want an error naming server 3", err)
	}
	for _, bad := range []string{"x", "0=10ms", "2", "2=fast", "2=10ms,200", "2=-1ms", "2=2m"} {
		if _, err := resolveNet(t, "--path", bad); err == nil || !strings.Contains(err.Error(), "--path") {
			t.Errorf("--path %q: %v", bad, err)
		}
	}
	if _, err := resolveNet(t, "--path", "2=1ms", "--path", "2=5ms"); err == nil {
		t.Error("accepted two paths to server 2")
	}
}

// TestNetcheckRefusesBadFlags: netcheck's own flags are checked before a
// network is built, each in one line with exit status 2.
func TestNetcheckRefusesBadFlags(t *testing.T) {
	checkUsageErrors(t, []usageCase{
		{[]string{"netcheck", "extra"}, `unexpected argument "extra"`},
		{[]string{"netcheck", "--probes", "0"}, "--probes 0 is outside 1 to 100000"},
		{[]string{"netcheck", "--loss-probes", "-1"}, "--loss-probes -1 is outside 0 to 10000000"},
		{[]string{"netcheck", "--confidence", "0.9"}, "--confidence 0.9: use 0.95, 0.99 or 0.999"},
		{[]string{"netcheck", "--transfer", "500ms"}, "--transfer 500ms is outside 1s to 10m"},
		{[]string{"netcheck", "--rtt", "fast"}, `--rtt "fast" is not a duration`},
	})
}
