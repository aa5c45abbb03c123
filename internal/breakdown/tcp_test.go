package breakdown

import (
	"net/netip"
	"slices"
	"testing"
	"time"
)

var (
	connA = Conn{Client: netip.MustParseAddrPort("10.0.0.2:40000"), Server: netip.MustParseAddrPort("10.0.1.1:443")}
	connB = Conn{Client: netip.MustParseAddrPort("10.0.0.2:40002"), Server: netip.MustParseAddrPort("10.0.1.1:443")}
)

const ms = time.Millisecond

// data is a downstream segment of 1000 bytes numbered n (from 0) on c,
// after a handshake whose SYN had sequence number isn.
func data(c Conn, isn uint32, n int, at time.Duration, dropped bool) Packet {
	return Packet{At: at, Sent: at, Down: true, Dropped: dropped, Conn: c, Seq: isn + 1 + uint32(n)*1000, Payload: 1000}
}

func syn(c Conn, isn uint32, at time.Duration) Packet {
	return Packet{At: at, Down: true, Conn: c, Seq: isn, SYN: true}
}

func TestSegmentsInOrderNeverStall(t *testing.T) {
	ps := []Packet{syn(connA, 7, 0)}
	for n := range 10 {
		ps = append(ps, data(connA, 7, n, time.Duration(10+n)*ms, false))
	}
	if got := totals(Stalls(ps, 20*ms)); got != totals(TCPStalls{}) {
		t.Errorf("%+v, want no stall", got)
	}
}

// TestALostSegmentHoldsTheBytesBehindIt: segment 1 of 4 is dropped at 11
// ms (due at 31 ms over a 20 ms link), 2 and 3 arrive at 12 and 13 ms and
// wait, and its retransmission arrives at 60 ms: the stream stood still
// 29 ms, and 2,000 bytes waited from 12 ms to 60 ms.
func TestALostSegmentHoldsTheBytesBehindIt(t *testing.T) {
	ps := []Packet{syn(connA, 7, 0),
		data(connA, 7, 0, 10*ms, false), data(connA, 7, 1, 11*ms, true),
		data(connA, 7, 2, 12*ms, false), data(connA, 7, 3, 13*ms, false),
		data(connA, 7, 1, 60*ms, false)}
	want := TCPStalls{Losses: 1, Repaired: 1, LossWait: 29 * ms, HeldBytes: 2000, HeldTime: 48 * ms}
	if got := totals(Stalls(ps, 20*ms)); got != totals(want) {
		t.Errorf("%+v, want %+v", got, want)
	}
}

// TestATailLossWaitsForItsRetransmission: the last segment is dropped and
// nothing follows it to show the gap; its retransmission comes after a
// timeout, 250 ms: the wait runs from when it was due.
func TestATailLossWaitsForItsRetransmission(t *testing.T) {
	ps := []Packet{syn(connA, 7, 0), data(connA, 7, 0, 10*ms, false), data(connA, 7, 1, 11*ms, true), data(connA, 7, 1, 250*ms, false)}
	want := TCPStalls{Losses: 1, Repaired: 1, LossWait: 219 * ms}
	if got := totals(Stalls(ps, 20*ms)); got != totals(want) {
		t.Errorf("%+v, want %+v", got, want)
	}
}

// TestStallsOfTwoConnectionsCountOnce: connection A waits from 31 to 60
// ms, B from 41 to 80 ms; the load waited 49 ms, not 68. A lost
// retransmission is a second loss repaired by the same arrival.
func TestStallsOfTwoConnectionsCountOnce(t *testing.T) {
	ps := []Packet{syn(connA, 7, 0), syn(connB, 1<<20, 0),
		data(connA, 7, 0, 11*ms, true), data(connB, 1<<20, 0, 21*ms, true),
		data(connA, 7, 0, 40*ms, true), data(connA, 7, 0, 60*ms, false),
		data(connB, 1<<20, 0, 80*ms, false)}
	want := TCPStalls{Losses: 3, Repaired: 3, LossWait: 49 * ms}
	if got := totals(Stalls(ps, 20*ms)); got != totals(want) {
		t.Errorf("%+v, want %+v", got, want)
	}
}

// TestSequenceNumbersWrap: a connection whose sequence numbers pass 2³²
// mid-loss reads as any other.
func TestSequenceNumbersWrap(t *testing.T) {
	isn := uint32(1<<32 - 1500)
	ps := []Packet{syn(connA, isn, 0),
		data(connA, isn, 0, 10*ms, false), data(connA, isn, 1, 11*ms, true),
		data(connA, isn, 2, 12*ms, false), data(connA, isn, 1, 60*ms, false)}
	want := TCPStalls{Losses: 1, Repaired: 1, LossWait: 29 * ms, HeldBytes: 1000, HeldTime: 48 * ms}
	if got := totals(Stalls(ps, 20*ms)); got != totals(want) {
		t.Errorf("%+v, want %+v", got, want)
	}
}

// TestWhatIsNotNeededDoesNotStall: a dropped retransmission of bytes the
// client has, QUIC's datagrams and the uplink's segments cost nothing
// here.
func TestWhatIsNotNeededDoesNotStall(t *testing.T) {
	up := data(connA, 7, 3, 12*ms, true)
	up.Down = false
	quic := data(Conn{Client: connA.Client, Server: connA.Server, UDP: true}, 0, 0, 13*ms, true)
	ps := []Packet{syn(connA, 7, 0), data(connA, 7, 0, 10*ms, false), data(connA, 7, 0, 11*ms, true), up, quic, data(connA, 7, 1, 14*ms, false)}
	want := TCPStalls{Losses: 1}
	if got := totals(Stalls(ps, 20*ms)); got != totals(want) {
		t.Errorf("%+v, want %+v", got, want)
	}
}

// stallTotals are TCPStalls without the stalls one by one (which
// TestStallsListTheWaits checks), to compare.
type stallTotals struct {
	losses, repaired   int
	lossWait, heldTime time.Duration
	heldBytes          int64
}

func totals(s TCPStalls) stallTotals {
	return stallTotals{s.Losses, s.Repaired, s.LossWait, s.HeldTime, s.HeldBytes}
}

// TestADroppedSegmentIsDueAfterTheQueue: a segment the full queue dropped
// at 11 ms would have waited 40 ms in it, so it was due at 71 ms over a 20
// ms link; its bytes arrived at 90 ms.
func TestADroppedSegmentIsDueAfterTheQueue(t *testing.T) {
	lost := data(connA, 7, 1, 11*ms, true)
	lost.Bottleneck = 40 * ms
	ps := []Packet{syn(connA, 7, 0), data(connA, 7, 0, 10*ms, false), lost, data(connA, 7, 1, 90*ms, false)}
	if got := Stalls(ps, 20*ms).LossWait; got != 19*ms {
		t.Errorf("loss wait %v, want 19ms", got)
	}
}

func TestStallsListTheWaits(t *testing.T) {
	ps := []Packet{syn(connA, 7, 0), data(connA, 7, 0, 10*ms, false), data(connA, 7, 1, 11*ms, true),
		data(connA, 7, 2, 12*ms, false), data(connA, 7, 1, 60*ms, false)}
	got := Stalls(ps, 20*ms).Waits
	if want := []ConnSpan{{connA, Span{31 * ms, 60 * ms}}}; !slices.Equal(got, want) {
		t.Errorf("waits %v, want %v", got, want)
	}
}
