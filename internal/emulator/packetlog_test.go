package emulator

import (
	"encoding/binary"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/pcap"
	"github.com/quicbench/quicbench/internal/tun"
)

// segment is an IPv4 TCP segment from 10.0.1.1:443 to 10.0.0.2:40000
// (down) or back, with seq and payload bytes.
func segment(down bool, seq uint32, payload int) []byte {
	pkt := make([]byte, 40+payload)
	pkt[0], pkt[8], pkt[9] = 0x45, 64, 6
	binary.BigEndian.PutUint16(pkt[2:4], uint16(len(pkt)))
	server, client := []byte{10, 0, 1, 1}, []byte{10, 0, 0, 2}
	sport, dport := uint16(443), uint16(40000)
	if !down {
		server, client, sport, dport = client, server, dport, sport
	}
	copy(pkt[12:16], server)
	copy(pkt[16:20], client)
	binary.BigEndian.PutUint16(pkt[20:22], sport)
	binary.BigEndian.PutUint16(pkt[22:24], dport)
	binary.BigEndian.PutUint32(pkt[24:28], seq)
	pkt[32], pkt[33] = 5<<4, 0x10
	return pkt
}

// TestThePacketLogNotesEveryFate: over a 10 ms downlink that drops every
// packet (100 % loss) and an uplink that drops none, the log holds each
// packet once, with its direction, fate, sequence number, payload and
// time; nothing before it is set or after it is unset.
func TestThePacketLogNotesEveryFate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client, servers := tun.NewFake("c", 8), tun.NewFake("s", 8)
		e, err := Start(client, servers, Config{Up: link.Config{Delay: 10 * time.Millisecond}, Down: link.Config{Delay: 10 * time.Millisecond, Loss: 1}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		servers.Inject(segment(true, 1, 100)) // before the log: not in it
		synctest.Wait()
		start := time.Now()
		log := NewPacketLog(start)
		e.SetPacketLog(log)
		servers.Inject(segment(true, 101, 1000))
		client.Inject(segment(false, 9, 0))
		<-servers.Written
		e.SetPacketLog(nil)
		servers.Inject(segment(true, 1101, 1000)) // after: not in it
		synctest.Wait()
		got := log.Packets()
		if len(got) != 2 {
			t.Fatalf("%d packets logged, want 2: %+v", len(got), got)
		}
		if p := got[0]; !p.Down || !p.Dropped || p.Seq != 101 || p.Payload != 1000 || p.At != 0 {
			t.Errorf("the dropped segment: %+v", p)
		}
		if p := got[1]; p.Down || p.Dropped || p.Seq != 9 || p.At != 10*time.Millisecond || p.Conn != got[0].Conn {
			t.Errorf("the delivered segment: %+v", p)
		}
		client.Close()
		servers.Close()
		e.Wait()
	})
}

// BenchmarkPacketPath is what forwarding one 1,240-byte TCP segment costs
// the direction's loop, with the packet log off and on: the log's cost
// per packet is the difference.
func BenchmarkPacketPath(b *testing.B) {
	for _, logged := range []bool{false, true} {
		name := "log-off"
		if logged {
			name = "log-on"
		}
		b.Run(name, func(b *testing.B) {
			d, err := newDirection(nil, nil, link.Config{Seed: 1}, nil, false, Options{Coalesce: DefaultCoalesce})
			if err != nil {
				b.Fatal(err)
			}
			d.capture = &atomic.Pointer[pcap.Writer]{}
			if logged {
				d.packetLog.Store(NewPacketLog(time.Now()))
			}
			src := &sliceSource{pkt: segment(true, 1, 1200), perWait: 32}
			b.ResetTimer()
			for i := 0; i < b.N; i += 32 {
				src.wait(time.Time{})
				d.readWaiting(src)
				d.deliverDue(src, d.horizon(time.Now()))
				if logged && i%4096 == 0 {
					d.packetLog.Store(NewPacketLog(time.Now())) // a load's worth, not the whole run's
				}
			}
		})
	}
}

// TestAFlightDropTakesTheFirstPacketOfTheThirdFlight: armed for the
// third flight (full-size packets after a gap of 10 ms), the downlink
// passes acknowledgements and the first two flights, drops the first
// packet of the third, and passes the rest of it and every later flight;
// armed for a flight after the 5th packet, it drops the 5th, the second
// packet of the second flight.
func TestAFlightDropTakesTheFirstPacketOfTheThirdFlight(t *testing.T) {
	if dropped, delivered := dropsOfFlights(t, 100); len(dropped) != 1 || dropped[0] != 1+1200*6 || delivered != 11 {
		t.Errorf("dropped %v and delivered %d data packets, want the third flight's first (seq 7201) dropped and 11 delivered", dropped, delivered)
	}
	if dropped, _ := dropsOfFlights(t, 5); len(dropped) != 1 || dropped[0] != 1+1200*4 {
		t.Errorf("dropped %v, want the 5th packet (seq 4801) alone", dropped)
	}
}

// dropsOfFlights sends four flights of three 1,200-byte segments, 1 ms
// apart and 50 ms between flights, each after an acknowledgement, through
// a downlink armed to drop the third flight's first packet or the
// packets-th, and returns the sequence numbers dropped and how many data
// packets were delivered.
func dropsOfFlights(t *testing.T, packets int) (dropped []uint32, delivered int) {
	synctest.Test(t, func(t *testing.T) {
		client, servers := tun.NewFake("c", 16), tun.NewFake("s", 16)
		e, err := Start(client, servers, Config{}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		log := NewPacketLog(time.Now())
		e.SetPacketLog(log)
		e.DropFlightStart(3, 10*time.Millisecond, packets)
		seq := uint32(1)
		for range 4 {
			servers.Inject(segment(true, 1, 0)) // an acknowledgement: not counted
			for range 3 {
				servers.Inject(segment(true, seq, 1200))
				seq += 1200
				time.Sleep(time.Millisecond) // paced within the flight
			}
			time.Sleep(50 * time.Millisecond)
		}
		synctest.Wait()
		client.Close()
		servers.Close()
		e.Wait()
		for _, p := range log.Packets() {
			if p.Dropped {
				dropped = append(dropped, p.Seq)
			} else if p.Payload > 0 {
				delivered++
			}
		}
	})
	return dropped, delivered
}
