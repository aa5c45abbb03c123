package units

import (
	"strings"
	"testing"
)

func TestParseBytes(t *testing.T) {
	good := map[string]int64{"1500": 1500, "100B": 100, "10KB": 10_000, "10kb": 10_000, "1KiB": 1024,
		"300KB": 300_000, "1.5MB": 1_500_000, "2MiB": 2 << 20, "1GB": 1e9, " 64 KB ": 64_000}
	for in, want := range good {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "KB", "-1KB", "ten", "1.5B", "10XB", "NaN", "1e300GB"} {
		if got, err := ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) = %d, want an error", in, got)
		}
	}
}

func TestParseRate(t *testing.T) {
	good := map[string]int64{"10mbit": 10e6, "10Mbit/s": 10e6, "170kbit": 170e3, "7.78mbit": 7_780_000,
		"1gbit": 1e9, "5000bit": 5000, "0.468mbit": 468_000}
	for in, want := range good {
		if got, err := ParseRate(in); err != nil || got != want {
			t.Errorf("ParseRate(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "10mbps", "10MB/s", "fast", "-1mbit", "10 furlongs", "10", "0", "0.4bit", "0.001bit"} {
		if got, err := ParseRate(in); err == nil {
			t.Errorf("ParseRate(%q) = %d, want an error", in, got)
		}
	}
	if _, err := ParseRate("10"); err == nil || !strings.Contains(err.Error(), "has no unit") {
		t.Errorf("ParseRate(10) error %v, want one that says it has no unit", err)
	}
	if _, err := ParseRate("10mbps"); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("ParseRate(10mbps) error %v, want one that calls it ambiguous", err)
	}
}

func TestParsePercent(t *testing.T) {
	good := map[string]float64{"0": 0, "1": 0.01, "1%": 0.01, "0.5%": 0.005, "100": 1}
	for in, want := range good {
		if got, err := ParsePercent(in); err != nil || got != want {
			t.Errorf("ParsePercent(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"150", "-1", "x", "", "Inf", "NaN"} {
		if got, err := ParsePercent(in); err == nil {
			t.Errorf("ParsePercent(%q) = %v, want an error", in, got)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"10KB", "10mbit", "1%", "-0", "1e9GiB", "mbps"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := ParseBytes(s); err == nil && v < 0 {
			t.Errorf("ParseBytes(%q) = %d < 0", s, v)
		}
		if v, err := ParseRate(s); err == nil && v < 0 {
			t.Errorf("ParseRate(%q) = %d < 0", s, v)
		}
		if v, err := ParsePercent(s); err == nil && (v < 0 || v > 1) {
			t.Errorf("ParsePercent(%q) = %v outside [0,1]", s, v)
		}
	})
}
