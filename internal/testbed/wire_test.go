package testbed

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/breakdown"
	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/site/gen"
	"github.com/quicbench/quicbench/internal/stacks"
	"github.com/quicbench/quicbench/internal/testenv"
)

// wireFileBytes is the file the wire test downloads: several windows.
const wireFileBytes = 400_000

// firstFlightOver downloads the test file over proto from tb with a fresh
// Go client, with the link's packet log on, and returns the download's
// first response flight that the window ended (breakdown.FirstFlights).
func firstFlightOver(t *testing.T, tb *Testbed, proto string) breakdown.Flight {
	t.Helper()
	client, err := tb.NewGoClient(proto)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	log := emulator.NewPacketLog(time.Now())
	tb.Emulator.SetPacketLog(log)
	defer tb.Emulator.SetPacketLog(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+wireHost+gen.FilePath(wireFileBytes), nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s download: %v", proto, err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || n != wireFileBytes {
		t.Fatalf("%s download: %d bytes, %v", proto, n, err)
	}
	for _, f := range breakdown.FirstFlights(log.Packets()) {
		if f.Limited {
			return f
		}
	}
	t.Fatalf("%s: no first flight that the window ended among %d packets", proto, len(log.Packets()))
	return breakdown.Flight{}
}

const wireHost = "www.wire.test"

// TestStacksAreWhatTheySayOnTheWire: each TCP stack profile and each QUIC
// stack, behind a 100 ms round trip, measured from the emulator's packet
// log as a 400 KB download's first response flight: its size (the
// initial window) and whether it was paced. tcp+ said "pacing true" and
// sent its 32 packets in one burst (the kernel ignores an all-ones
// SO_MAX_PACING_RATE); it now paces.
func TestStacksAreWhatTheySayOnTheWire(t *testing.T) {
	testenv.RequireRoot(t)
	files, err := gen.Files(wireHost, []int64{wireFileBytes}, 1)
	if err != nil {
		t.Fatal(err)
	}
	oneWay := link.Config{Delay: 50 * time.Millisecond}
	for _, c := range []struct {
		stack  factor.Stack
		server factor.Server
		quic   factor.QUIC
		proto  string
		paced  string
	}{
		{factor.StackTCP, factor.ServerGo, "", "h2", "burst"},
		{factor.StackTCPPlus, factor.ServerGo, "", "h2", "paced"},
		{factor.StackTCPPlusBBR, factor.ServerGo, "", "h2", "paced"},
		{factor.StackTCP, factor.ServerGo, factor.QUICGoNewReno, "h3", "paced"},
		{factor.StackTCPPlus, factor.ServerNginx, "", "h2", "burst"}, // nginx cannot set SO_MAX_PACING_RATE (stacks' Limits)
		{factor.StackTCPPlusBBR, factor.ServerNginx, "", "h2", "paced"},
		{factor.StackTCPPlus, factor.ServerCaddy, "", "h2", "burst"}, // nor can Caddy
		{factor.StackTCP, factor.ServerCaddy, factor.QUICCaddyNewReno, "h3", "paced"},
		{factor.StackTCP, factor.ServerGo, factor.QUICQuinnCubic, "h3", "paced"},
		{factor.StackTCP, factor.ServerGo, factor.QUICQuicheCubic, "h3", "burst"}, // quiche paces BBR2 only
	} {
		name := fmt.Sprintf("%s-%s-%s-%s", c.stack, c.server, c.quic, c.proto)
		t.Run(name, func(t *testing.T) {
			tb, err := Start(Config{Stem: netns.RunName(os.Getpid(), fmt.Sprintf("wi%d", time.Now().UnixNano()%1e6)),
				Link: emulator.Config{Up: oneWay, Down: oneWay}, Site: files, RunDir: t.TempDir(),
				Stack: stacks.Of(c.stack), Server: c.server, QUIC: c.quic})
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			f := firstFlightOver(t, tb, c.proto)
			t.Logf("%s: first flight of %d packets (%d B) over %v, RTT %v: %s", name, f.Packets, f.Bytes, f.Spread.Round(10*time.Microsecond), f.RTT.Round(10*time.Microsecond), f.Paced())
			if f.Paced() != c.paced {
				t.Errorf("%s: the first flight left %s, want %s", name, f.Paced(), c.paced)
			}
			// the initial window applied: the route's (10 packets where it
			// sets none; the handshake's last packets may share the
			// flight), or the QUIC server's in bytes
			if c.proto == "h3" {
				if want := tb.QUICTransport.InitialWindowBytes; f.Bytes < want*85/100 || f.Bytes > want*115/100 {
					t.Errorf("%s: first flight of %d B, against an initial window of %d B applied", name, f.Bytes, want)
				}
			} else if want := cmp.Or(tb.Stack.InitCwnd, 10); f.Packets < want-2 || f.Packets > want+2 {
				t.Errorf("%s: first flight of %d packets, against an initial window of %d applied", name, f.Packets, want)
			}
		})
	}
}
