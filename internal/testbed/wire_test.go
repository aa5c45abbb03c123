package testbed

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/breakdown"
	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/site/gen"
	"github.com/quicbench/quicbench/internal/stacks"
	"github.com/quicbench/quicbench/internal/testenv"
)

// wireFileBytes is the file the wire test downloads: several windows,
// enough for two round trips after a loss in the second, BBR's too.
const wireFileBytes = 1_200_000

// The link drops the first packet of the download's third flight (the
// handshake's, the response's first, its second), flights beginning after
// a gap of wireFlightGap (a quarter of the round trip, as a calibration
// has it): the start of a round trip; or its 100th packet if no such
// gap comes first.
const (
	wireDropFlight = 3
	wireFlightGap  = 25 * time.Millisecond
	wireDropAfter  = 100
)

// wireReadings is how many downloads firstFlightOver reads at most for
// a first flight that the window ended: one download is one event, and on
// a busy machine a server that waits for its core resumes after the
// acknowledgement later than breakdown's resumeWithin (Caddy's h3 once in
// about five clean-clone runs), so its flight reads as the server's own
// pause, not the window's.
const wireReadings = 3

// firstFlightOver downloads the test file over proto from tb with a fresh
// Go client, with the link's packet log on and the first packet of the
// server's second response flight dropped, and returns the download's first response
// flight that the window ended (breakdown.FirstFlights) and how the
// sender answered the loss (breakdown.Backoffs). Where a download shows
// no such flight it downloads again on a new connection, up to
// wireReadings downloads, and fails the test if none shows one.
func firstFlightOver(t *testing.T, tb *Testbed, proto string) (breakdown.Flight, breakdown.Backoff) {
	t.Helper()
	var counts []int
	for range wireReadings {
		f, b, n, ok := readFirstFlight(t, tb, proto)
		if ok {
			if len(counts) > 0 {
				t.Logf("%s: no first flight that the window ended in %d download(s) of %v packets; read in the next", proto, len(counts), counts)
			}
			return f, b
		}
		counts = append(counts, n)
		if err := tb.CloseConnections(); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatalf("%s: no first flight that the window ended in %d downloads (%v packets)", proto, len(counts), counts)
	return breakdown.Flight{}, breakdown.Backoff{}
}

// readFirstFlight is one download of firstFlightOver: the first flight
// that the window ended and the answer to the loss (the zero Backoff where
// none was read), the number of packets the link logged, and false where
// no flight was window-limited.
func readFirstFlight(t *testing.T, tb *Testbed, proto string) (breakdown.Flight, breakdown.Backoff, int, bool) {
	t.Helper()
	log := emulator.NewPacketLog(time.Now())
	tb.Emulator.SetPacketLog(log)
	defer tb.Emulator.SetPacketLog(nil)
	tb.Emulator.DropFlightStart(wireDropFlight, wireFlightGap, wireDropAfter)
	download(t, tb, proto, wireFileBytes)
	packets := log.Packets()
	var backoff breakdown.Backoff
	if backoffs := breakdown.Backoffs(packets); len(backoffs) == 1 {
		backoff = backoffs[0]
	}
	for _, f := range breakdown.FirstFlights(packets) {
		if f.Limited {
			return f, backoff, len(packets), true
		}
	}
	return breakdown.Flight{}, breakdown.Backoff{}, len(packets), false
}

const wireHost = "www.wire.test"

// TestStacksAreWhatTheySayOnTheWire: each TCP stack profile and each QUIC
// stack, behind a 100 ms round trip, measured from the emulator's packet
// log as a 1.2 MB download's first response flight, its size (the initial
// window) and whether it was paced, and its answer to the loss of its
// second flight's first packet: the kind of share of its window it kept
// (CUBIC most, Reno half, BBR all). tcp+ said "pacing true" and sent its
// 32 packets in one burst (the kernel ignores an all-ones
// SO_MAX_PACING_RATE); it now paces.
func TestStacksAreWhatTheySayOnTheWire(t *testing.T) {
	testenv.RequireRoot(t)
	files, err := gen.Files(wireHost, []int64{wireFileBytes}, 1)
	if err != nil {
		t.Fatal(err)
	}
	oneWay := link.Config{Delay: 50 * time.Millisecond}
	most, half, none := analysis.BackoffClass(0.7), analysis.BackoffClass(0.5), analysis.BackoffClass(1)
	kept := map[factor.QUIC]float64{} // the share kept after the loss, by QUIC stack
	for _, c := range []struct {
		stack  factor.Stack
		server factor.Server
		quic   factor.QUIC
		proto  string
		// paced is "paced" where the stack paces (the flight spread over
		// a fifth of the round trip or more), else "unpaced": a burst,
		// or partly spread by the server's own writes (Caddy's h2 on a
		// busy CI machine stalled 12 ms inside its first flight)
		paced string
		// backoff is the kind of answer to the loss (analysis.BackoffClass)
		// its congestion control gives; "" where it is checked apart
		backoff string
	}{
		{factor.StackTCP, factor.ServerGo, "", "h2", "unpaced", most},
		{factor.StackTCPPlus, factor.ServerGo, "", "h2", "paced", most},
		{factor.StackTCPPlusBBR, factor.ServerGo, "", "h2", "paced", none},
		{factor.StackTCP, factor.ServerGo, factor.QUICGoNewReno, "h3", "paced", most}, // quic-go's NewReno is its CUBIC sender in Reno mode, β 0.7
		// nginx cannot set SO_MAX_PACING_RATE (stacks' Limits); its h2
		// writes leave its window unfilled early on: its share after a loss
		// read 0.70, 1.03 and 1.43 in three runs, so it is not checked
		{factor.StackTCPPlus, factor.ServerNginx, "", "h2", "unpaced", ""},
		{factor.StackTCPPlusBBR, factor.ServerNginx, "", "h2", "paced", none},
		{factor.StackTCPPlus, factor.ServerCaddy, "", "h2", "unpaced", most}, // nor can Caddy
		{factor.StackTCP, factor.ServerCaddy, factor.QUICCaddyNewReno, "h3", "paced", most},
		// quinn's pacer sends in bursts with gaps inside a round trip, so
		// the loss may fall inside its first flight, and its shares read
		// high (0.90 to 0.98 for CUBIC): checked against each other below
		{factor.StackTCP, factor.ServerGo, factor.QUICQuinnCubic, "h3", "paced", ""},
		{factor.StackTCP, factor.ServerGo, factor.QUICQuinnNewReno, "h3", "paced", ""},
		// quinn's BBR (experimental) enters ProbeRTT at its first ACK that
		// is not app-limited: its flight falls to 4 packets, read as 0.11
		// to 0.47, or not at all where nothing was in flight for a round
		{factor.StackTCP, factor.ServerGo, factor.QUICQuinnBBR, "h3", "paced", ""},
		{factor.StackTCP, factor.ServerGo, factor.QUICQuicheCubic, "h3", "unpaced", most}, // quiche paces BBR2 only
		{factor.StackTCP, factor.ServerGo, factor.QUICQuicheReno, "h3", "unpaced", half},
		{factor.StackTCP, factor.ServerGo, factor.QUICQuicheBBR2, "h3", "paced", none},
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
			f, b := firstFlightOver(t, tb, c.proto)
			t.Logf("%s: first flight of %d packets (%d B) over %v, RTT %v: %s; after the loss kept %.2f (%d B of %d B over %v)", name, f.Packets, f.Bytes, f.Spread.Round(10*time.Microsecond), f.RTT.Round(10*time.Microsecond), f.Paced(),
				b.Ratio(), b.After, b.Before, b.Round.Round(100*time.Microsecond))
			if got := f.Paced(); (c.paced == "paced") != (got == "paced") || got == "" {
				t.Errorf("%s: the first flight left %q, want %s", name, got, c.paced)
			}
			if c.backoff != "" && analysis.BackoffClass(b.Ratio()) != c.backoff {
				b = medianBackoff(t, tb, c.proto, b)
			}
			kept[c.quic] = b.Ratio()
			if c.backoff != "" && b.Before == 0 {
				t.Errorf("%s: no answer to the loss read (want one alone, with two round trips after it)", name)
			} else if got := analysis.BackoffClass(b.Ratio()); c.backoff != "" && got != c.backoff {
				t.Errorf("%s: after the loss the sender kept %.2f of its sending (%s), want a stack that %s", name, b.Ratio(), got, c.backoff)
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
	// quinn's shares read high, but its NewReno still keeps less than its
	// CUBIC (by 0.10 to 0.2 in clean-clone CI runs: 0.1 was the edge)
	// (not compared where -run left either out)
	cubic, ranCubic := kept[factor.QUICQuinnCubic]
	reno, ranReno := kept[factor.QUICQuinnNewReno]
	if ranCubic && ranReno && (reno == 0 || reno >= cubic-0.05) {
		t.Errorf("quinn's NewReno kept %.2f after the loss, its CUBIC %.2f: want NewReno's below by over 0.05", reno, cubic)
	}
}

// medianBackoff reads the answer to the loss twice more, beside first,
// and returns the median of the three by the share kept. One answer is one
// event: on a busy machine a sender that waits for its core reads a larger
// flight before the loss (quiche's CUBIC kept 0.59 once in a clean-clone
// CI run, 0.73 in every run alone), so a reading of the wrong kind is
// checked against two more, and a stack that answers wrongly answers so
// in two of three.
func medianBackoff(t *testing.T, tb *Testbed, proto string, first breakdown.Backoff) breakdown.Backoff {
	t.Helper()
	readings := []breakdown.Backoff{first}
	for range 2 {
		if err := tb.CloseConnections(); err != nil {
			t.Fatal(err)
		}
		_, b := firstFlightOver(t, tb, proto)
		readings = append(readings, b)
	}
	slices.SortFunc(readings, func(a, b breakdown.Backoff) int { return cmp.Compare(a.Ratio(), b.Ratio()) })
	t.Logf("the first answer read %.2f; three read %.2f, %.2f, %.2f", first.Ratio(), readings[0].Ratio(), readings[1].Ratio(), readings[2].Ratio())
	return readings[1]
}

// TestQUICLossWaitsFromTheWireMatchQuicGosRecords: over a 100 ms round
// trip that drops 3 % of the server's packets, the waits for lost data
// that breakdown.QUICLossWaits estimates from the link's packets (what
// quicbench records for the QUIC servers that keep no loss records) and
// those quic-go records from its own loss events (placed, as the runner
// places them, a one-way trip after the server's times) cover each about
// the same time: within a quarter of a round trip per loss, over a few
// downloads of 400 KB.
func TestQUICLossWaitsFromTheWireMatchQuicGosRecords(t *testing.T) {
	testenv.RequireRoot(t)
	files, err := gen.Files(wireHost, []int64{lossFileBytes}, 1)
	if err != nil {
		t.Fatal(err)
	}
	oneWay := 50 * time.Millisecond
	tb, err := Start(Config{Stem: netns.RunName(os.Getpid(), fmt.Sprintf("wq%d", time.Now().UnixNano()%1e6)),
		Link: emulator.Config{Up: link.Config{Delay: oneWay}, Down: link.Config{Delay: oneWay, Loss: 0.03, Seed: 7}}, Site: files, RunDir: t.TempDir(),
		Stack: stacks.Of(factor.StackTCP), Server: factor.ServerGo, QUIC: factor.QUICGoNewReno})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	var wire, recorded time.Duration
	losses := 0
	for range 4 {
		if err := tb.CloseConnections(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		log := emulator.NewPacketLog(start)
		tb.Emulator.SetPacketLog(log)
		download(t, tb, "h3", lossFileBytes)
		tb.Emulator.SetPacketLog(nil)
		packets := log.Packets()
		for _, p := range packets {
			if p.Down && p.Dropped && p.QUICApp {
				losses++
			}
		}
		wire += breakdown.Covered(breakdown.Spans(breakdown.QUICLossWaits(packets, 2*oneWay, oneWay)))
		conns, err := tb.Connections()
		if err != nil {
			t.Fatal(err)
		}
		var ws []breakdown.Window
		for _, c := range conns {
			for _, w := range c.Stalls {
				ws = append(ws, breakdown.Window{From: w.From, To: w.To})
			}
		}
		recorded += breakdown.WaitOf(ws)
	}
	t.Logf("%d losses: waits %v from the wire, %v from quic-go's records", losses, wire.Round(time.Millisecond), recorded.Round(time.Millisecond))
	if losses < 5 {
		t.Fatalf("only %d losses in 4 downloads: the link's seed drops too few to compare", losses)
	}
	if diff := (wire - recorded).Abs(); diff > time.Duration(losses)*2*oneWay/4 {
		t.Errorf("waits from the wire %v and from quic-go's records %v differ by %v, over a quarter of a round trip per loss (%d losses)", wire, recorded, diff, losses)
	}
}

// lossFileBytes is the file the loss waits test downloads.
const lossFileBytes = 400_000

// download fetches the test file of size bytes over proto from tb with a
// fresh Go client.
func download(t *testing.T, tb *Testbed, proto string, size int64) {
	t.Helper()
	client, err := tb.NewGoClient(proto)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+wireHost+gen.FilePath(size), nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s download: %v", proto, err)
	}
	defer resp.Body.Close()
	if n, err := io.Copy(io.Discard, resp.Body); err != nil || n != size {
		t.Fatalf("%s download: %d bytes, %v", proto, n, err)
	}
}
