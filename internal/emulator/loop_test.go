package emulator

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/pcap"
	"github.com/quicbench/quicbench/internal/tun"
)

func TestFIFOKeepsOrderAcrossGrowth(t *testing.T) {
	var q fifo
	next := 0
	for round := range 5 {
		for range 7 + round*11 { // pushes outrun pops: the ring wraps and grows
			q.push(packet{n: next})
			next++
		}
		for range 5 {
			q.pop()
		}
	}
	want := next - q.len()
	for q.len() > 0 {
		p, _ := q.peek()
		if p.n != want {
			t.Fatalf("popped packet %d, want %d", p.n, want)
		}
		q.pop()
		want++
	}
	if _, ok := q.peek(); ok || want != next {
		t.Errorf("empty queue peeks a packet or lost some: %d of %d", want, next)
	}
}

func TestLatenessFollowsTheMedian(t *testing.T) {
	l := lateness{est: initialLateness}
	// Wake-ups 40 µs late three times in four and 500 µs late once: the
	// median is 40 µs, and the estimate settles there, not at the mean.
	for i := range 4000 {
		late := 40 * time.Microsecond
		if i%4 == 3 {
			late = 500 * time.Microsecond
		}
		l.observe(late)
	}
	if got := l.early(); got < 38*time.Microsecond || got > 42*time.Microsecond {
		t.Errorf("estimate %v, want about 40µs", got)
	}
	for range 1000 {
		l.observe(time.Second)
	}
	if l.early() != maxLateness {
		t.Errorf("a stalled machine moved the estimate to %v, want the cap %v", l.early(), maxLateness)
	}
}

// TestCoalescingTakesAlongOnlyWhatIsClose sends a train of packets 100 µs
// apart over a 1 ms window: the first is due at 0.6 ms and takes the next
// ten along, so all eleven arrive at 0.6 ms and the twelfth at its own time;
// a lone packet, due within the window of the read that took it, is still
// delivered at its own time, never early.
func TestCoalescingTakesAlongOnlyWhatIsClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client, servers := tun.NewFake("c", 64), tun.NewFake("s", 64)
		// 1250-byte packets at 100 Mbit/s: one every 100 µs.
		e, err := Start(client, servers, Config{Up: link.Config{Delay: 500 * time.Microsecond, RateBitsPerSecond: 100_000_000}},
			Options{Coalesce: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for range 12 {
			client.Inject(make([]byte, 1250))
		}
		for i := range 12 {
			<-servers.Written
			want := 600 * time.Microsecond // the first one's time
			if i == 11 {
				want = 1700 * time.Microsecond // beyond the window: its own
			}
			if got := time.Since(start); got != want {
				t.Errorf("packet %d arrived after %v, want %v", i, got, want)
			}
		}
		time.Sleep(50 * time.Millisecond)
		start = time.Now()
		client.Inject(make([]byte, 1250))
		<-servers.Written
		if got := time.Since(start); got != 600*time.Microsecond {
			t.Errorf("a lone packet arrived after %v, want its own time 600µs", got)
		}
		client.Close()
		servers.Close()
		e.Wait()
	})
}

func TestStartRejectsAWideCoalescingWindow(t *testing.T) {
	if _, err := Start(tun.NewFake("c", 1), tun.NewFake("s", 1), Config{}, Options{Coalesce: 2 * MaxCoalesce}); err == nil {
		t.Error("Start accepted a coalescing window of 2 ms")
	}
}

// TestCompensationTakesOffTheForwardingLatency: with 300 µs taken off a
// 10 ms uplink, a packet leaves after 9.7 ms; on a 100 µs downlink, 300 µs
// cannot be taken off, and a packet leaves as soon as it is read.
func TestCompensationTakesOffTheForwardingLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client, servers := tun.NewFake("c", 4), tun.NewFake("s", 4)
		e, err := Start(client, servers, Config{Up: link.Config{Delay: 10 * time.Millisecond}, Down: link.Config{Delay: 100 * time.Microsecond}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		e.Compensate(300*time.Microsecond, 300*time.Microsecond)
		if up, down := e.Compensation(); up != 300*time.Microsecond || down != up {
			t.Errorf("compensation %v, %v, want 300µs both", up, down)
		}
		start := time.Now()
		client.Inject([]byte{1})
		<-servers.Written
		if got := time.Since(start); got != 9700*time.Microsecond {
			t.Errorf("uplink delivered after %v, want 9.7ms", got)
		}
		start = time.Now()
		servers.Inject([]byte{2})
		<-client.Written
		if got := time.Since(start); got != 0 {
			t.Errorf("downlink delivered after %v, want at once", got)
		}
		client.Close()
		servers.Close()
		e.Wait()
	})
}

// sliceSource is a source for allocation tests: it offers the same packet
// a fixed number of times per wait and counts deliveries.
type sliceSource struct {
	pkt       []byte
	perWait   int
	left      int
	delivered int
}

func (s *sliceSource) wait(time.Time) bool { s.left = s.perWait; return true }
func (s *sliceSource) read(buf []byte) (int, bool) {
	if s.left == 0 {
		return 0, false
	}
	s.left--
	return copy(buf, s.pkt), true
}
func (s *sliceSource) write([]byte) error   { s.delivered++; return nil }
func (s *sliceSource) early() time.Duration { return 0 }

// TestPacketPathDoesNotAllocate: once its buffers and queue have grown,
// reading, judging, queueing and delivering a packet allocates nothing, so
// the garbage collector never runs because of traffic.
func TestPacketPathDoesNotAllocate(t *testing.T) {
	d, err := newDirection(nil, nil, link.Config{Loss: 0.01, Seed: 1}, nil, true, Options{Coalesce: DefaultCoalesce})
	if err != nil {
		t.Fatal(err)
	}
	var capture atomic.Pointer[pcap.Writer]
	d.capture = &capture
	src := &sliceSource{pkt: make([]byte, 1200), perWait: 32}
	step := func() {
		src.wait(time.Time{})
		d.readWaiting(src)
		d.deliverDue(src, d.horizon(time.Now()))
	}
	for range 100 { // grow the free list and the queue
		step()
	}
	if allocs := testing.AllocsPerRun(1000, step); allocs != 0 {
		t.Errorf("%.2f allocations per 32 packets, want none", allocs)
	}
	if src.delivered < 100*32*9/10 {
		t.Errorf("delivered %d packets, want about all of %d", src.delivered, 1100*32)
	}
}
