package parity

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/stacks"
	"github.com/quicbench/quicbench/internal/testenv"
)

// TestParityDownloadsOverEveryProtocol runs a small real parity check: every
// download verified (size, status, protocol), no faster than the link allows.
func TestParityDownloadsOverEveryProtocol(t *testing.T) {
	testenv.RequireRoot(t)
	tcp, _ := stacks.Lookup("tcp")
	shaped := link.Config{Delay: 5 * time.Millisecond, RateBitsPerSecond: 50_000_000}
	networks := []Network{{Name: "plain"}, {Name: "shaped", Link: emulator.Config{Up: shaped, Down: shaped}}}
	cells, err := Run(t.Context(), Config{Networks: networks, Sizes: []int64{10_000, 200_000},
		Protocols: []string{"h1", "h2", "h3"}, Reps: 2, Seed: 1, Stack: tcp, RunDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 2*2*3 {
		t.Fatalf("%d cells, want 12", len(cells))
	}
	for _, c := range Sorted(cells, networks) {
		t.Logf("%-7s %7d B %s: median %.1f ms, ratio to h2 %.3f", c.Network, c.Size, c.Protocol, c.Summary.Median, c.RatioToH2)
		if c.Summary.N != 2 || c.Failed != 0 {
			t.Errorf("%+v: want 2 verified downloads", c)
		}
		if c.Protocol == "h2" && c.RatioToH2 != 1 {
			t.Errorf("h2's ratio to itself is %v", c.RatioToH2)
		}
		// A fresh connection needs at least two round trips of 10 ms, and
		// 200 KB at 50 Mbit/s take 32 ms more.
		if c.Network == "shaped" {
			floor := 20.0
			if c.Size == 200_000 {
				floor += 32
			}
			if c.Summary.Min < floor {
				t.Errorf("%s %d B over %s took %.1f ms, below the %.0f ms the link allows", c.Network, c.Size, c.Protocol, c.Summary.Min, floor)
			}
		}
	}
}

// TestParityWarmLeavesOutTheHandshakes times downloads on open connections:
// over a 10 ms RTT a small file then takes one round trip, not two or more.
// TestParityWarmLeavesOutTheHandshakes downloads on open connections, h3
// from quiche with its qlogs written.
func TestParityWarmLeavesOutTheHandshakes(t *testing.T) {
	testenv.RequireRoot(t)
	tcp, _ := stacks.Lookup("tcp")
	shaped := link.Config{Delay: 5 * time.Millisecond, RateBitsPerSecond: 50_000_000}
	dir := t.TempDir()
	cells, err := Run(t.Context(), Config{Networks: []Network{{Name: "shaped", Link: emulator.Config{Up: shaped, Down: shaped}}},
		Sizes: []int64{10_000}, Protocols: []string{"h1", "h2", "h3"}, Reps: 3, Seed: 1, Stack: tcp, Warm: true,
		QUIC: []factor.QUIC{factor.QUICQuicheCubic}, Qlog: true, RunDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	// One qlog per h3 connection, each with its packets.
	qlogs, _ := filepath.Glob(filepath.Join(dir, "qlog", "shaped-quiche+cubic", "*_server.sqlog"))
	for _, q := range qlogs {
		if data, err := os.ReadFile(q); err != nil || !bytes.Contains(data, []byte("packet_sent")) {
			t.Errorf("qlog %s: %d bytes without packets (%v)", q, len(data), err)
		}
	}
	if len(qlogs) != 3 {
		t.Errorf("%d qlogs, want one per h3 download: %q", len(qlogs), qlogs)
	}
	for _, c := range cells {
		t.Logf("%s: median %.1f ms", c.Protocol, c.Summary.Median)
		if c.Failed != 0 || c.Summary.Min < 10 || c.Summary.Median > 19 {
			t.Errorf("%s warm download: %+v, want 3 downloads of one 10 ms round trip (10 to 19 ms)", c.Protocol, c.Summary)
		}
	}
}
