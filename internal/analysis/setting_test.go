package analysis

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
)

// oldSetting is the struct a setting was before the factor table; its
// printed form seeded the resampling of every report made with it.
type oldSetting struct {
	Network string
	Page    string
	Origins int
	Stack   factor.Stack
	Server  factor.Server
	QUIC    factor.QUIC
	Visit   factor.Visit
	Cache   bool
	Client  factor.Client
	Browser factor.Browser
	Visual  bool
}

// oldSeedText is how a sample's seed text was made from it.
func oldSeedText(s oldSetting, proto factor.Protocol) string {
	text := strings.Replace(fmt.Sprintf("%+v", struct {
		s     oldSetting
		proto factor.Protocol
	}{s, proto}), " Visual:false}", "}", 1)
	return strings.Replace(text, " QUIC:quic-go ", " ", 1)
}

// TestSeedTextIsWhatItWas: the resampling seeds of every setting are
// those of the struct a setting was, so reports keep their intervals.
func TestSeedTextIsWhatItWas(t *testing.T) {
	for _, old := range []oldSetting{
		{"n", "synthetic:32x10KB", 1, "tcp", "go", "quic-go", "first", false, "chromium", "fresh", false},
		{"wolsing2019-lte", "web2024:7", 1, "tcp+bbr", "nginx", "quinn+bbr", "repeat", true, "loader", "warm", true},
		{"rtt100ms-loss1", "synthetic:8x1KB", 4, "tcp+", "go", "quic-go", "first", true, "chromium", "fresh", true},
		{"x", "archive:sites/a b", 1, "tcp", "go", "quinn+cubic", "first", false, "chromium", "warm", false},
	} {
		tr := results.Trial{Levels: results.Levels{Network: old.Network, Page: old.Page, Origins: int64(old.Origins), Stack: old.Stack,
			Server: old.Server, QUIC: old.QUIC, Protocol: "h2", Visit: old.Visit, Cache: old.Cache, Client: old.Client, Browser: old.Browser, Visual: old.Visual}}
		for _, proto := range []factor.Protocol{"h2", "ratio"} {
			got := sampleKey{SettingOf(tr), proto}.seedText()
			if want := oldSeedText(old, proto); got != want {
				t.Errorf("seed text\n got %s\nwant %s", got, want)
			}
		}
	}
}
