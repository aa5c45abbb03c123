package emulator

import (
	"bytes"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/pcap"
	"github.com/quicbench/quicbench/internal/tun"
)

// ipv4 makes a minimal IPv4 header from src to dst, with id as a marker.
func ipv4(src, dst string, id byte) []byte {
	pkt := make([]byte, 28)
	pkt[0] = 0x45
	pkt[5] = id
	s, d := netip.MustParseAddr(src).As4(), netip.MustParseAddr(dst).As4()
	copy(pkt[12:16], s[:])
	copy(pkt[16:20], d[:])
	return pkt
}

func TestPathsAddDelayPerServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client, servers := tun.NewFake("c", 16), tun.NewFake("s", 16)
		far := netip.MustParseAddr("198.19.0.11")
		e, err := Start(client, servers, Config{
			Up:    link.Config{Delay: 10 * time.Millisecond},
			Down:  link.Config{Delay: 10 * time.Millisecond},
			Paths: []Path{{Server: far, RTT: 40 * time.Millisecond}},
		}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		// Uplink: by destination.
		start := time.Now()
		client.Inject(ipv4("198.18.0.1", "198.19.0.11", 1))
		client.Inject(ipv4("198.18.0.1", "198.19.0.10", 2))
		for _, want := range []struct {
			id    byte
			after time.Duration
		}{{2, 10 * time.Millisecond}, {1, 30 * time.Millisecond}} {
			got := <-servers.Written
			if got[5] != want.id || time.Since(start) != want.after {
				t.Errorf("uplink: packet %d after %v, want packet %d after %v", got[5], time.Since(start), want.id, want.after)
			}
		}
		// Downlink: by source.
		start = time.Now()
		servers.Inject(ipv4("198.19.0.11", "198.18.0.1", 3))
		if got := <-client.Written; got[5] != 3 || time.Since(start) != 30*time.Millisecond {
			t.Errorf("downlink from the far server after %v, want 30ms", time.Since(start))
		}
		client.Close()
		servers.Close()
		e.Wait()
	})
}

func TestPathLossOnlyHitsItsServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client, servers := tun.NewFake("c", 256), tun.NewFake("s", 256)
		e, err := Start(client, servers, Config{
			Paths: []Path{{Server: netip.MustParseAddr("198.19.0.12"), Loss: 1}},
		}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for range 50 {
			client.Inject(ipv4("198.18.0.1", "198.19.0.12", 1))
			client.Inject(ipv4("198.18.0.1", "198.19.0.10", 2))
		}
		synctest.Wait()
		client.Close()
		servers.Close()
		e.Wait()
		if n := len(servers.Written); n != 50 {
			t.Errorf("%d packets arrived, want the 50 to the lossless server", n)
		}
		for len(servers.Written) > 0 {
			if p := <-servers.Written; p[5] != 2 {
				t.Fatal("a packet crossed the path with 100% loss")
			}
		}
		if up, _ := e.Stats(); up.DroppedPath != 50 || up.DroppedLoss != 0 {
			t.Errorf("counted %d path losses and %d link losses, want 50 and 0", up.DroppedPath, up.DroppedLoss)
		}
	})
}

func TestPathsValidate(t *testing.T) {
	a := netip.MustParseAddr("198.19.0.10")
	for _, paths := range [][]Path{
		{{Server: a}, {Server: a}},
		{{Server: a, RTT: -time.Millisecond}},
		{{Server: a, Loss: 2}},
		{{Server: netip.MustParseAddr("::1")}},
	} {
		if err := (Config{Paths: paths}).Validate(); err == nil {
			t.Errorf("accepted %+v", paths)
		}
	}
}

// TestDropHeadThroughTheEmulator sends four packets into a 3-packet
// drop-head queue at 1 ms per packet: the second is dropped, the third and
// fourth arrive 1 ms earlier than drop-tail would send them.
func TestDropHeadThroughTheEmulator(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client, servers := tun.NewFake("c", 16), tun.NewFake("s", 16)
		e, err := Start(client, servers, Config{
			Up: link.Config{Delay: 10 * time.Millisecond, RateBitsPerSecond: 8_000_000, QueuePackets: 3, DropHead: true},
		}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for id := range byte(4) {
			pkt := ipv4("198.18.0.1", "198.19.0.10", id)
			pkt = append(pkt, make([]byte, 1000-len(pkt))...) // 1 ms at 8 Mbit/s
			client.Inject(pkt)
		}
		for _, want := range []struct {
			id    byte
			after time.Duration
		}{{0, 11 * time.Millisecond}, {2, 12 * time.Millisecond}, {3, 13 * time.Millisecond}} {
			got := <-servers.Written
			if got[5] != want.id || time.Since(start) != want.after {
				t.Errorf("packet %d after %v, want packet %d after %v", got[5], time.Since(start), want.id, want.after)
			}
		}
		client.Close()
		servers.Close()
		e.Wait()
		if up, _ := e.Stats(); up.DroppedQueue != 1 || up.Delivered != 3 {
			t.Errorf("stats %+v, want 1 queue drop and 3 delivered", up.Stats)
		}
	})
}

// TestCaptureSeesWhatTheClientSees records a capture while packets cross both
// ways with loss on the uplink: the capture holds every packet the client
// sent (lost ones too) and every one it received, at the client's times.
func TestCaptureSeesWhatTheClientSees(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client, servers := tun.NewFake("c", 16), tun.NewFake("s", 16)
		e, err := Start(client, servers, Config{
			Up:   link.Config{Delay: 10 * time.Millisecond, Loss: 1},
			Down: link.Config{Delay: 10 * time.Millisecond},
		}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		w, err := pcap.NewWriter(&buf)
		if err != nil {
			t.Fatal(err)
		}
		e.SetCapture(w)
		start := time.Now()
		client.Inject(ipv4("198.18.0.1", "198.19.0.10", 1)) // lost on the uplink
		servers.Inject(ipv4("198.19.0.10", "198.18.0.1", 2))
		<-client.Written
		e.SetCapture(nil)
		client.Inject(ipv4("198.18.0.1", "198.19.0.10", 3)) // not recorded
		synctest.Wait()
		client.Close()
		servers.Close()
		e.Wait()
		w.Flush()
		pkts, err := pcap.Read(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if len(pkts) != 2 || pkts[0].Data[5] != 1 || pkts[1].Data[5] != 2 {
			t.Fatalf("captured %d packets %v, want the sent 1 and the received 2", len(pkts), pkts)
		}
		if !pkts[0].Time.Equal(start) || pkts[1].Time.Sub(start) != 10*time.Millisecond {
			t.Errorf("times %v and %v after start, want 0 and 10ms", pkts[0].Time.Sub(start), pkts[1].Time.Sub(start))
		}
	})
}

// TestSuspendedLossLetsEverythingThrough: with the link's and a path's
// loss at 100 %, nothing crosses until the loss is suspended (as for a
// stack's calibration), then everything does, both ways; restored, the
// losses drop again.
func TestSuspendedLossLetsEverythingThrough(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client, servers := tun.NewFake("c", 64), tun.NewFake("s", 64)
		e, err := Start(client, servers, Config{
			Up:    link.Config{Loss: 1},
			Down:  link.Config{Loss: 1},
			Paths: []Path{{Server: netip.MustParseAddr("198.19.0.12"), Loss: 1}},
		}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		send := func() {
			client.Inject(ipv4("198.18.0.1", "198.19.0.10", 1))
			client.Inject(ipv4("198.18.0.1", "198.19.0.12", 2))
			servers.Inject(ipv4("198.19.0.10", "198.18.0.1", 3))
			synctest.Wait()
		}
		send()
		if len(servers.Written)+len(client.Written) != 0 {
			t.Fatal("a packet crossed a link losing every packet")
		}
		e.SuspendLoss(true)
		send()
		if len(servers.Written) != 2 || len(client.Written) != 1 {
			t.Errorf("with the loss suspended %d packets went up and %d down, want 2 and 1", len(servers.Written), len(client.Written))
		}
		for len(servers.Written) > 0 {
			<-servers.Written
		}
		<-client.Written
		e.SuspendLoss(false)
		send()
		if len(servers.Written)+len(client.Written) != 0 {
			t.Error("a packet crossed once the loss was back")
		}
		client.Close()
		servers.Close()
		e.Wait()
	})
}
