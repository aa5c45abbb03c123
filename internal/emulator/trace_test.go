package emulator

import (
	"bytes"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/netns"
)

// oneSecondTrace cuts the first second of a real cellular trace into a trace
// with a period of exactly one second, so that any window of whole seconds
// offers a known number of opportunities.
func oneSecondTrace(t *testing.T) *link.Trace {
	t.Helper()
	data, err := os.ReadFile("../../../shared/traces/Verizon-LTE-short.down")
	if err != nil {
		t.Skipf("the shared traces are not beside the repository: %v", err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if ms, _ := strconv.Atoi(l); ms < 1000 {
			lines = append(lines, l)
		}
	}
	lines = append(lines, "1000")
	tr, err := link.ParseTrace("Verizon-LTE-short.down, first second", bytes.NewReader([]byte(strings.Join(lines, "\n"))))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestTraceDeliversItsCapacity floods a real trace-driven downlink with
// 1500-byte packets at twice its rate and counts what arrives over whole
// periods: one packet per opportunity, within 2 %. QUICBENCH_TRACE_SECONDS
// sets the window (3 s here, 30 s for the benchmark).
func TestTraceDeliversItsCapacity(t *testing.T) {
	tr := oneSecondTrace(t)
	seconds := 3
	if v := os.Getenv("QUICBENCH_TRACE_SECONDS"); v != "" {
		seconds, _ = strconv.Atoi(v)
	}
	topo := startReal(t, Config{Up: link.Config{Delay: 5 * time.Millisecond},
		Down: link.Config{Delay: 5 * time.Millisecond, Trace: tr, QueuePackets: 1000}})
	sink, err := topo.Client.ListenPacket("udp4", netip.AddrPortFrom(netns.ClientAddr, 9).String())
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	var mu sync.Mutex
	var arrivals []time.Time
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := sink.ReadFrom(buf); err != nil {
				return
			}
			mu.Lock()
			arrivals = append(arrivals, time.Now())
			mu.Unlock()
		}
	}()
	src, err := topo.Servers.DialContext(t.Context(), "udp4", sink.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	perSecond := len(tr.Ms)
	payload := make([]byte, 1472) // a 1500-byte IP packet: one opportunity
	start := time.Now()
	sent := 0
	for time.Since(start) < time.Duration(seconds)*time.Second+500*time.Millisecond {
		// Keep the offered load at twice the trace's rate, sent each ms.
		due := int(time.Since(start).Seconds() * float64(2*perSecond))
		for ; sent < due; sent++ {
			src.Write(payload)
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(arrivals) == 0 {
		t.Fatal("nothing arrived")
	}
	// Count over whole periods from the first arrival, after the queue filled.
	from := arrivals[0].Add(200 * time.Millisecond)
	to := from.Add(time.Duration(seconds-1) * time.Second)
	got := 0
	for _, a := range arrivals {
		if !a.Before(from) && a.Before(to) {
			got++
		}
	}
	want := (seconds - 1) * perSecond
	t.Logf("trace %s: %d packets in %d s, the trace offers %d (%.2f%%)", tr.Name, got, seconds-1, want, 100*float64(got)/float64(want))
	if d := float64(got-want) / float64(want); d < -0.02 || d > 0.02 {
		t.Errorf("%d packets in %d whole periods, want %d ± 2%%", got, seconds-1, want)
	}
}
