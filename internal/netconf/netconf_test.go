package netconf

import (
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/link"
)

// TestResolveDefaultsAndPreset: without a preset, missing keys take the
// defaults; with one, only the given keys change it.
func TestResolveDefaultsAndPreset(t *testing.T) {
	n, err := Resolve(Description{Values: map[string]string{"rtt": "40ms"}}, map[string]string{"loss": "1", "rtt": "100ms"})
	if err != nil {
		t.Fatal(err)
	}
	if n.RTT != 40e6 || n.Link.Up.Loss != 0.01 || n.Link.Down.Loss != 0.01 {
		t.Errorf("got RTT %v, loss %v/%v; want 40ms from the values and 1%% from the defaults", n.RTT, n.Link.Up.Loss, n.Link.Down.Loss)
	}
	p, err := Resolve(Description{Preset: "seed004-us-lte", Values: map[string]string{"loss": "2"}}, map[string]string{"rtt": "1s"})
	if err != nil {
		t.Fatal(err)
	}
	if p.RTT != 32e6 || p.Link.Down.Loss != 0.02 {
		t.Errorf("preset with loss 2: RTT %v, loss %v; want the preset's 32ms and 2%%", p.RTT, p.Link.Down.Loss)
	}
	if _, err := Resolve(Description{Values: map[string]string{"latency": "1ms"}}, nil); err == nil || !strings.Contains(err.Error(), `"latency" is unknown`) {
		t.Errorf("unknown key: %v", err)
	}
}

func FuzzNetworkParameters(f *testing.F) {
	for _, s := range []string{"1,30", "1,30,100,0", "2=40ms,0.5", "200pkt", "64KB", "200ms", "0", "x=y", ",,,", "1=1h,100"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if g, err := parseGilbert(s); err == nil {
			if g.Validate() != nil {
				t.Errorf("parseGilbert(%q) accepted invalid %+v", s, g)
			}
		}
		if _, p, err := parsePath(s); err == nil {
			if (emulator.Config{Paths: []emulator.Path{p}}).Validate() != nil {
				t.Errorf("parsePath(%q) accepted invalid %+v", s, p)
			}
		}
		var dir link.Config
		dir.RateBitsPerSecond = 10_000_000
		if err := setQueue(&dir, s); err == nil && (dir.QueueBytes < 0 || dir.QueuePackets < 0) {
			t.Errorf("setQueue(%q) gave %d bytes, %d packets", s, dir.QueueBytes, dir.QueuePackets)
		}
	})
}
