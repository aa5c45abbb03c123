package presets

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestEveryPresetIsValidAndDocumented(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range All() {
		if seen[p.Name] {
			t.Errorf("preset %s listed twice", p.Name)
		}
		seen[p.Name] = true
		up, down := p.Directions()
		if err := errors.Join(up.Validate(), down.Validate()); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
		if p.Source == "" || p.Reading == "" || p.Group == "" {
			t.Errorf("%s lacks its source, reading or group", p.Name)
		}
		if up.Delay+down.Delay != p.RTT {
			t.Errorf("%s: delays %v + %v ≠ RTT %v", p.Name, up.Delay, down.Delay, p.RTT)
		}
	}
	if len(seen) != 4+4+12+9+12+3 {
		t.Errorf("%d presets, want 44", len(seen))
	}
}

func TestWolsing2019Presets(t *testing.T) {
	mss, err := Lookup("wolsing2019-mss")
	if err != nil {
		t.Fatal(err)
	}
	// A request and its response both survive with probability 1 − 6 %.
	q := mss.LossDown
	if got := (1 - q) * (1 - q); math.Abs(got-0.94) > 1e-12 {
		t.Errorf("(1−q)² = %v, want 0.94", got)
	}
	// 200 ms at 1.89 Mbit/s is 47,250 bytes.
	if _, down := mss.Directions(); down.QueueBytes != 47_250 {
		b := down.QueueBytes
		t.Errorf("MSS queue %d B, want 47250", b)
	}
	dsl, _ := Lookup("wolsing2019-dsl")
	// 12 ms at 25 Mbit/s down is 37,500 bytes; at 5 Mbit/s up 7,500.
	up, down := dsl.Directions()
	if down.QueueBytes != 37_500 || up.QueueBytes != 7_500 || down.Loss != 0 {
		t.Errorf("DSL down queue %d, up queue %d, loss %v", down.QueueBytes, up.QueueBytes, down.Loss)
	}
	if dsl.RTT != 24*time.Millisecond || up.Delay != 12*time.Millisecond {
		t.Errorf("DSL RTT %v", dsl.RTT)
	}
}

func TestToolPresetsCarryTheToolsNumbers(t *testing.T) {
	tests := []struct {
		name     string
		down, up int64
		rtt      time.Duration
	}{
		{"wpt-3g", 1_600_000, 768_000, 300 * time.Millisecond},
		{"wpt-cable", 5_000_000, 1_000_000, 28 * time.Millisecond},
		{"browsertime-3g", 1_600_000, 768_000, 150 * time.Millisecond},
		{"devtools-slow-4g", 1_600_000, 750_000, 150 * time.Millisecond},
		{"biswal2016-india-2g", 170_000, 170_000, 334 * time.Millisecond},
		{"nepomuceno2018-rtt200-loss0.5", 0, 0, 200 * time.Millisecond},
	}
	for _, tt := range tests {
		p, err := Lookup(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		if p.DownBitsPerSecond != tt.down || p.UpBitsPerSecond != tt.up || p.RTT != tt.rtt {
			t.Errorf("%s = %d/%d bit/s %v, want %d/%d %v", tt.name, p.DownBitsPerSecond, p.UpBitsPerSecond, p.RTT, tt.down, tt.up, tt.rtt)
		}
	}
	p, _ := Lookup("nepomuceno2018-rtt200-loss0.5")
	if p.LossUp != 0.005 || p.LossDown != 0.005 {
		t.Errorf("nepomuceno2018 loss %v/%v, want 0.5%% each way", p.LossDown, p.LossUp)
	}
}

func TestLookupUnknown(t *testing.T) {
	_, err := Lookup("5g")
	if err == nil || !strings.Contains(err.Error(), "quicbench presets") {
		t.Errorf("error %v", err)
	}
}

// TestOldNamesSayTheirNewNames: a spec or command written before the
// papers' presets were renamed gets the new name in its error.
func TestOldNamesSayTheirNewNames(t *testing.T) {
	for old, now := range map[string]string{"seed003-lte": "wolsing2019-lte", "seed004-india-2g": "biswal2016-india-2g", "seed000-rtt20-loss0.5": "nepomuceno2018-rtt20-loss0.5"} {
		if _, err := Lookup(old); err == nil || !strings.Contains(err.Error(), `now named "`+now+`"`) {
			t.Errorf("Lookup(%q): %v, want it to name %s", old, err, now)
		}
		if _, err := Lookup(now); err != nil {
			t.Errorf("Lookup(%q): %v", now, err)
		}
	}
}
