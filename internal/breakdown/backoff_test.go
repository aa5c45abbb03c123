package breakdown

import (
	"math"
	"net/netip"
	"testing"
	"time"
)

// lossyTransfer is a sender's data over a 100 ms round trip, one packet
// a millisecond from 0 until it learns that its packet at 20 ms was lost,
// then one every 1/beta ms until until; the client acknowledges every
// packet as it arrives. The sender learns of the loss at 123 ms: its
// third packet after the lost one left at 23 ms, reached the client at
// 73 ms, whose acknowledgement was back at 123 ms.
func lossyTransfer(beta float64, until time.Duration) []Packet {
	ms := time.Millisecond
	c := Conn{Client: netip.MustParseAddrPort("10.0.0.2:40000"), Server: netip.MustParseAddrPort("10.0.1.2:443")}
	var ps []Packet
	send := func(at time.Duration, dropped bool) {
		if dropped {
			ps = append(ps, Packet{Conn: c, Sent: at, At: at, Down: true, Dropped: true, Payload: 1448})
			return
		}
		ps = append(ps, Packet{Conn: c, Sent: at, At: at + 50*ms, Down: true, Payload: 1448},
			Packet{Conn: c, Sent: at + 50*ms, At: at + 100*ms, Payload: 0})
	}
	for at := time.Duration(0); at < 123*ms; at += ms {
		send(at, at == 20*ms)
	}
	for at := 123 * ms; at < until; at += time.Duration(float64(ms) / beta) {
		send(at, false)
	}
	// the log's order: by when the link handled each packet
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && ps[j].At < ps[j-1].At; j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
	return ps
}

func TestBackoffsReadHowASenderAnsweredItsFirstLoss(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		name    string
		packets []Packet
		ratio   float64 // 0: no backoff can be read
	}{
		{"CUBIC's 0.7", lossyTransfer(0.7, 500*ms), 0.7},
		{"Reno's 0.5", lossyTransfer(0.5, 500*ms), 0.5},
		{"no backoff (BBR)", lossyTransfer(1, 500*ms), 1},
		{"out of data before two rounds after the loss", lossyTransfer(0.7, 300*ms), 0},
		{"no loss", tcpLoad(32, 0, true), 0},
		{"a second loss in the round after", secondLoss(lossyTransfer(0.7, 500*ms), 300*ms), 0},
	} {
		bs := Backoffs(c.packets)
		if c.ratio == 0 {
			if len(bs) != 0 {
				t.Errorf("%s: read %+v, want none", c.name, bs)
			}
			continue
		}
		if len(bs) != 1 {
			t.Fatalf("%s: %d backoffs, want 1", c.name, len(bs))
		}
		b := bs[0]
		// the most in flight in the round trip before the sender learned:
		// a packet a millisecond, each answered about 100 ms after it left
		if b.Round != 103*ms || b.Before != 101*1448 || math.Abs(b.Ratio()-c.ratio) > 0.02 {
			t.Errorf("%s: round %v, before %d B, ratio %.3f; want 103ms, %d B, %.2f", c.name, b.Round, b.Before, b.Ratio(), 101*1448, c.ratio)
		}
	}
}

// TestQUICLossWaitsRunToTheFirstPacketAfterTheSenderLearned: in
// lossyTransfer made QUIC, the packet lost at 20 ms waits until the first
// packet the server sent once the client's answer to its third later
// packet was back (123 ms), shifted by the 50 ms one-way trip; a lost
// tail packet with none after it waits a round trip, to the next packet.
func TestQUICLossWaitsRunToTheFirstPacketAfterTheSenderLearned(t *testing.T) {
	ms := time.Millisecond
	quic := func(ps []Packet) []Packet {
		for i := range ps {
			ps[i].Conn.UDP = true
			ps[i].QUICApp = true
		}
		return ps
	}
	waits := QUICLossWaits(quic(lossyTransfer(0.7, 500*ms)), 100*ms, 50*ms)
	if len(waits) != 1 || waits[0].From != 70*ms || waits[0].To != 173*ms {
		t.Errorf("waits %+v, want one from 70ms to 173ms", waits)
	}
	// a tail: three packets, the last lost, then a probe 150 ms later
	c := Conn{Client: netip.MustParseAddrPort("10.0.0.2:40000"), Server: netip.MustParseAddrPort("10.0.1.2:443"), UDP: true}
	tail := []Packet{
		{Conn: c, Sent: 0, At: 50 * ms, Down: true, Payload: 1200, QUICApp: true},
		{Conn: c, Sent: ms, At: ms, Down: true, Dropped: true, Payload: 1200, QUICApp: true},
		{Conn: c, Sent: 50 * ms, At: 100 * ms, Payload: 40, QUICApp: true},
		{Conn: c, Sent: 151 * ms, At: 201 * ms, Down: true, Payload: 1200, QUICApp: true},
	}
	if waits := QUICLossWaits(tail, 100*ms, 50*ms); len(waits) != 1 || waits[0].From != 51*ms || waits[0].To != 201*ms {
		t.Errorf("tail waits %+v, want one from 51ms to 201ms", waits)
	}
	if waits := QUICLossWaits(tail[:3], 100*ms, 50*ms); len(waits) != 0 {
		t.Errorf("a loss never resent in the log waits %+v, want none", waits)
	}
}

// secondLoss drops the first data packet of ps that left at or after at.
func secondLoss(ps []Packet, at time.Duration) []Packet {
	for i, p := range ps {
		if p.Down && p.Payload > 0 && p.Sent >= at {
			ps[i].Dropped, ps[i].At = true, p.Sent
			return ps
		}
	}
	return ps
}

// TestABackoffIsReadOnlyWhereTheWireCanTell: on a 5 ms round trip the
// receiver's window holds the sender (CUBIC read 1.00 to 1.40 here), so
// no answer to a loss is read; nor is one where a client's answer near
// the loss was lost (the data in flight is timed by the answers).
func TestABackoffIsReadOnlyWhereTheWireCanTell(t *testing.T) {
	ms := time.Millisecond
	if bs := Backoffs(scaled(lossyTransfer(0.7, 500*ms), 0.05)); len(bs) != 0 {
		t.Errorf("a 5 ms round trip: read %+v, want none", bs)
	}
	if bs := Backoffs(scaled(lossyTransfer(0.7, 500*ms), 0.2)); len(bs) != 1 || math.Abs(bs[0].Ratio()-0.7) > 0.02 {
		t.Errorf("a 20 ms round trip: read %+v, want CUBIC's 0.7", bs)
	}
	ps := lossyTransfer(0.7, 500*ms)
	for i, p := range ps {
		if !p.Down && p.Sent == 150*ms {
			ps[i].Dropped, ps[i].At = true, p.Sent // an answer in the round after the loss was learned
		}
	}
	if bs := Backoffs(ps); len(bs) != 0 {
		t.Errorf("a lost answer in the round after: read %+v, want none", bs)
	}
}
