package netconf

import (
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/link"
)

// TestResolveDefaultsAndPreset: without a preset, missing keys take the
// defaults; with one, only the given keys change it.
func TestResolveDefaultsAndPreset(t *testing.T) {
	n, err := Resolve(Description{Values: map[string]string{"rtt": "40ms"}}, map[string]string{"loss": "1", "rtt": "100ms"})
	if err != nil {
		t.Fatal(err)
	}
	if n.RTT != 40e6 || n.Up.Loss != 0.01 || n.Down.Loss != 0.01 {
		t.Errorf("got RTT %v, loss %v/%v; want 40ms from the values and 1%% from the defaults", n.RTT, n.Up.Loss, n.Down.Loss)
	}
	p, err := Resolve(Description{Preset: "biswal2016-us-lte", Values: map[string]string{"loss": "2"}}, map[string]string{"rtt": "1s"})
	if err != nil {
		t.Fatal(err)
	}
	if p.RTT != 32e6 || p.Down.Loss != 0.02 {
		t.Errorf("preset with loss 2: RTT %v, loss %v; want the preset's 32ms and 2%%", p.RTT, p.Down.Loss)
	}
	if _, err := Resolve(Description{Values: map[string]string{"latency": "1ms"}}, nil); err == nil || !strings.Contains(err.Error(), `"latency" is unknown`) {
		t.Errorf("unknown key: %v", err)
	}
}

// TestNamesAndKeys: a network is named by its preset and values unless
// named; its key is its content, whatever its name.
func TestNamesAndKeys(t *testing.T) {
	a, err := Resolve(Description{Values: map[string]string{"rtt": "100ms", "loss": "1", "loss-up": ""}, Paths: []string{"2=40ms,0.5"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != "rtt100ms-loss1-path2-40ms-0.5" {
		t.Errorf("name %q", a.Name)
	}
	b, _ := Resolve(Description{Name: "far", Values: map[string]string{"rtt": "100ms", "loss": "1%"}, Paths: []string{"2=40ms,0.5"}}, nil)
	if b.Name != "far" || a.Key() != b.Key() {
		t.Errorf("name %q; keys differ for the same values:\n%s\n%s", b.Name, a.Key(), b.Key())
	}
	c, _ := Resolve(Description{Values: map[string]string{"rtt": "100ms", "loss": "2"}}, nil)
	if c.Key() == a.Key() {
		t.Error("different networks have the same key")
	}
	if p, _ := Resolve(Description{Preset: "wolsing2019-lte"}, nil); p.Name != "wolsing2019-lte" {
		t.Errorf("preset network named %q", p.Name)
	}
	if u, _ := Resolve(Description{}, nil); u.Name != "unshaped" {
		t.Errorf("empty network named %q", u.Name)
	}
	if _, err := Resolve(Description{Paths: []string{"2=1ms", "2=3ms"}}, nil); err == nil || !strings.Contains(err.Error(), "server 2 has a path already") {
		t.Errorf("two paths to one server: %v", err)
	}
	if err := a.CheckServers(1); err == nil || !strings.Contains(err.Error(), "names server 2, but there are 1 servers") {
		t.Errorf("CheckServers: %v", err)
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
		if p, err := parsePath(s); err == nil {
			if p.Server < 1 || p.RTT < 0 || !(p.Loss >= 0 && p.Loss <= 1) {
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

// TestRatesAndQueuesNeedUnitsAndSaneValues: a rate without a unit, one that
// rounds to nothing or lies below MinRate, and a queue without a unit are
// refused with what to write instead; 0 and unlimited mean no limit.
func TestRatesAndQueuesNeedUnitsAndSaneValues(t *testing.T) {
	for values, want := range map[[2]string]string{
		{"down", "10"}:         `rate "10" has no unit`,
		{"down", "0.4bit"}:     "below 1 bit/s",
		{"up", "0.001bit"}:     "below 1 bit/s",
		{"down", "1bit"}:       "--down 1bit is below 8 kbit/s",
		{"up", "7.9kbit"}:      "--up 7.9kbit is below 8 kbit/s",
		{"queue", "10"}:        `--queue "10" has no unit`,
		{"queue", "1.5"}:       `--queue "1.5" has no unit`,
		{"down", "10mbps"}:     "ambiguous",
		{"down", "fastest"}:    "not a number with a unit",
		{"queue", "10parcels"}: "neither bytes",
	} {
		_, err := Resolve(Description{Values: map[string]string{values[0]: values[1]}}, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s %s: %v, want an error with %q", values[0], values[1], err, want)
		}
	}
	for values, want := range map[[2]string]int64{{"down", "0"}: 0, {"down", "unlimited"}: 0, {"down", "8kbit"}: 8000} {
		n, err := Resolve(Description{Values: map[string]string{values[0]: values[1]}}, nil)
		if err != nil || n.Down.RateBitsPerSecond != want {
			t.Errorf("%s %s: %v, %v; want %d bit/s", values[0], values[1], n, err, want)
		}
	}
	if n, err := Resolve(Description{Values: map[string]string{"queue": "0"}}, nil); err != nil || n.Down.QueueBytes != 0 {
		t.Errorf("queue 0: %v", err)
	}
}

// TestUDPPolicyIsANetworkSetting: udp reads into the network, names it,
// says itself in the description, and leaves the key of a network that
// passes UDP what it was.
func TestUDPPolicyIsANetworkSetting(t *testing.T) {
	open, err := Resolve(Description{Values: map[string]string{"rtt": "20ms"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	blocked, err := Resolve(Description{Values: map[string]string{"rtt": "20ms", "udp": "block-after-8"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if blocked.Name != "rtt20ms-udpblock-after-8" || !blocked.UDP.Block || blocked.UDP.After != 8 {
		t.Errorf("name %q, policy %+v", blocked.Name, blocked.UDP)
	}
	if !strings.Contains(blocked.Describe(), "UDP blocked after the first 8 packets of each flow") {
		t.Errorf("description %q", blocked.Describe())
	}
	if strings.Contains(open.Key(), "UDP") || open.Key() == blocked.Key() {
		t.Errorf("keys %s and %s", open.Key(), blocked.Key())
	}
	if _, err := Resolve(Description{Values: map[string]string{"udp": "sometimes"}}, nil); err == nil || !strings.Contains(err.Error(), "--udp") {
		t.Errorf("error %v", err)
	}
}
