package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/testenv"
)

func TestShellBadInput(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "no command"},
		{[]string{"--rtt", "x", "--", "true"}, "--rtt"},
		{[]string{"--server-port", "70000", "--", "true"}, "not a port"},
		{[]string{"--net", "nope", "--", "true"}, "unknown network preset"},
	} {
		var stderr bytes.Buffer
		if code := Run(context.Background(), append([]string{"shell"}, tt.args...), io.Discard, &stderr); code != exitUsage ||
			!strings.Contains(stderr.String(), tt.want) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q, want status 2 and one line with %q", tt.args, code, stderr.String(), tt.want)
		}
	}
}

// TestShellRunsBehindTheLink runs real commands through the real emulator:
// the exit status comes back, the addresses are in the environment, and an
// iperf3 server in the servers namespace measures the configured rate.
func TestShellRunsBehindTheLink(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireCommand(t, "iperf3")
	var out, errOut bytes.Buffer
	code := Run(context.Background(), []string{"shell", "--quiet", "--rtt", "30ms", "--", "sh", "-c",
		"echo $QUICBENCH_CLIENT_ADDR $QUICBENCH_SERVER_ADDR; ping -c 1 -W 2 $QUICBENCH_SERVER_ADDR >/dev/null && exit 7"}, &out, &errOut)
	if code != 7 {
		t.Fatalf("exit %d, want the command's 7; stderr %s", code, errOut.String())
	}
	if got := strings.TrimSpace(out.String()); got != "198.18.0.1 198.19.0.10" {
		t.Errorf("addresses %q", got)
	}

	for _, dir := range []struct {
		name, flag string
	}{{"down", "-R"}, {"up", ""}} {
		out.Reset()
		errOut.Reset()
		code = Run(context.Background(), []string{"shell", "--rtt", "20ms", "--down", "8mbit", "--up", "4mbit", "--queue", "100ms",
			"--server", "iperf3 -s >/dev/null 2>&1", "--server-port", "5201", "--",
			"sh", "-c", "iperf3 -J -t 3 " + dir.flag + " -c $QUICBENCH_SERVER_ADDR"}, &out, &errOut)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", dir.name, code, errOut.String())
		}
		var report struct {
			End struct {
				SumReceived struct {
					BitsPerSecond float64 `json:"bits_per_second"`
				} `json:"sum_received"`
			} `json:"end"`
		}
		if err := json.Unmarshal(out.Bytes(), &report); err != nil {
			t.Fatalf("iperf3 output: %v", err)
		}
		rate := map[string]float64{"down": 8e6, "up": 4e6}[dir.name]
		ideal := rate * 1448 / 1500 // TCP payload per 1500-byte packet
		got := report.End.SumReceived.BitsPerSecond
		t.Logf("%s: TCP goodput %.3f Mbit/s, %.1f%% of the ideal %.3f", dir.name, got/1e6, 100*got/ideal, ideal/1e6)
		if got < 0.85*ideal || got > 1.02*ideal {
			t.Errorf("%s goodput %.3f Mbit/s, want 85%% to 102%% of %.3f", dir.name, got/1e6, ideal/1e6)
		}
		if !strings.Contains(errOut.String(), "link down:") {
			t.Errorf("no link counters on stderr: %s", errOut.String())
		}
	}
}

// TestShellPathsGiveServersTheirDistance pings two servers, the second
// behind a path with 40 ms more RTT. It compares minimum RTTs, which a
// pause of the VM cannot move, where one would move an average.
func TestShellPathsGiveServersTheirDistance(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireCommand(t, "ping")
	var out, errOut bytes.Buffer
	code := Run(context.Background(), []string{"shell", "--quiet", "--servers", "2", "--rtt", "20ms", "--path", "2=40ms", "--",
		"sh", "-c", `for a in $QUICBENCH_SERVER_ADDRS; do ping -n -q -c 10 -i 0.05 $a | sed -n 's|.*= \([0-9.]*\)/.*|\1|p'; done`}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var near, far float64
	if _, err := fmt.Sscan(out.String(), &near, &far); err != nil {
		t.Fatalf("ping minimums %q: %v", out.String(), err)
	}
	t.Logf("server 1: %.3f ms, server 2 (+40 ms path): %.3f ms", near, far)
	// Deliveries straddle their deadlines (the delivery thread wakes early
	// by the median of its lateness), so a minimum can be a few µs short.
	if near < 19.8 || near > 21.5 || far-near < 39 || far-near > 41 {
		t.Errorf("server 1 at %.3f ms, server 2 at %.3f ms: want 20 ms and 40 ms more", near, far)
	}
}

// TestShellSeedReproducesLoss sends the same 60 pings through a 30 % loss
// link twice with one seed: the same pings must be lost. A third run with
// another seed loses others.
func TestShellSeedReproducesLoss(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireCommand(t, "ping")
	answered := func(seed string) string {
		var out, errOut bytes.Buffer
		Run(context.Background(), []string{"shell", "--quiet", "--seed", seed, "--loss", "30", "--",
			"sh", "-c", "ping -n -c 60 -i 0.01 -W 1 $QUICBENCH_SERVER_ADDR | grep -o 'icmp_seq=[0-9]*' | tr '\\n' ' '"}, &out, &errOut)
		return out.String()
	}
	a, b, c := answered("42"), answered("42"), answered("43")
	if a == "" || a != b {
		t.Errorf("seed 42 answered\n%s\nthen\n%s", a, b)
	}
	if a == c {
		t.Errorf("seeds 42 and 43 lost the same pings: %s", a)
	}
}
