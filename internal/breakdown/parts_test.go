package breakdown

import (
	"testing"
	"time"
)

// pkt is a delivered packet of conn sent at sent and arriving at at.
func pkt(c Conn, down bool, sent, at time.Duration, payload int) Packet {
	return Packet{Conn: c, Down: down, Sent: sent, At: at, Payload: payload}
}

// TestALoadTakenApart: over a 20 ms round trip, a TCP connection's SYN,
// ClientHello and the server's reply take 40 ms, the request 10 ms to
// arrive, the server 30 ms to answer, the response 4 ms at the
// bottleneck and 10 ms on the way, and the browser 6 ms more.
func TestALoadTakenApart(t *testing.T) {
	synUp := pkt(connA, false, 0, 10*ms, 0)
	synUp.SYN = true
	synAck := pkt(connA, true, 10*ms, 20*ms, 0)
	synAck.SYN = true
	response := pkt(connA, true, 80*ms, 94*ms, 1200)
	response.Bottleneck = 4 * ms
	ps := []Packet{synUp, synAck, pkt(connA, false, 20*ms, 30*ms, 300), pkt(connA, true, 30*ms, 40*ms, 3000),
		pkt(connA, false, 40*ms, 50*ms, 200), response}
	got := Apart(ps, 100*ms, nil, []Span{{50 * ms, 80 * ms}})
	want := Parts{Link: 4 * ms, Handshake: 40 * ms, RoundTrips: 20 * ms, Server: 30 * ms, Client: 6 * ms}
	if got != want {
		t.Errorf("parts %+v, want %+v", got, want)
	}
}

// TestTheLinkComesFirstThenLoss: a stall counts as loss where the link was
// not busy, even where packets were in flight, and time past the end
// counts for nothing.
func TestTheLinkComesFirstThenLoss(t *testing.T) {
	busy := pkt(connA, true, 0, 30*ms, 1200)
	busy.Bottleneck = 20 * ms
	got := Apart([]Packet{busy}, 40*ms, []Span{{10 * ms, 25 * ms}, {35 * ms, 90 * ms}}, nil)
	want := Parts{Link: 20 * ms, Loss: 10 * ms, RoundTrips: 5 * ms, Client: 5 * ms}
	if got != want {
		t.Errorf("parts %+v, want %+v", got, want)
	}
}

func TestQUICHandshakes(t *testing.T) {
	quicA := Conn{Client: connA.Client, Server: connA.Server, UDP: true}
	quicB := Conn{Client: connB.Client, Server: connB.Server, UDP: true}
	finished := pkt(quicA, false, 40*ms, 50*ms, 1200)
	finished.QUICApp = true
	early := pkt(quicB, false, 5*ms, 15*ms, 1200)
	early.QUICApp = true
	ps := []Packet{pkt(quicA, false, 0, 10*ms, 1200), pkt(quicA, true, 10*ms, 20*ms, 1200),
		early, pkt(quicA, true, 20*ms, 30*ms, 1200), finished}
	got := handshakes(ps)
	if len(got) != 2 || got[0] != (Span{5 * ms, 5 * ms}) || got[1] != (Span{0, 40 * ms}) {
		t.Errorf("handshakes %v, want 0-RTT's [5 ms, 5 ms) and [0, 40 ms)", got)
	}
}

// TestAConnectionOpenBeforeTheLogHasNoHandshake: its first packet is data.
func TestAConnectionOpenBeforeTheLogHasNoHandshake(t *testing.T) {
	ps := []Packet{pkt(connA, true, 0, 10*ms, 1200), pkt(connA, false, 10*ms, 20*ms, 300)}
	if got := handshakes(ps); len(got) != 0 {
		t.Errorf("handshakes %v, want none", got)
	}
}

// longHeader is a QUIC v1 long-header packet of type typ (0 Initial, 1
// 0-RTT, 2 Handshake) with 8-byte connection IDs and n bytes of payload.
func longHeader(typ byte, n int) []byte {
	b := []byte{0xc0 | typ<<4, 0, 0, 0, 1, 8, 1, 2, 3, 4, 5, 6, 7, 8, 8, 1, 2, 3, 4, 5, 6, 7, 8}
	if typ == 0 {
		b = append(b, 0) // no token
	}
	b = append(b, 0x40|byte(n>>8), byte(n)) // a two-byte length
	return append(b, make([]byte, n)...)
}

func TestQUICAppDataIsFoundBehindCoalescedPackets(t *testing.T) {
	shortHeader := append([]byte{0x43}, make([]byte, 40)...)
	cases := []struct {
		name string
		b    []byte
		want bool
	}{
		{"an Initial", longHeader(0, 1000), false},
		{"a Handshake then a 1-RTT packet", append(longHeader(2, 50), shortHeader...), true},
		{"an Initial then a 0-RTT packet", append(longHeader(0, 1000), longHeader(1, 100)...), true},
		{"an Initial and zero padding", append(longHeader(0, 100), make([]byte, 900)...), false},
		{"a truncated Initial", longHeader(0, 1000)[:500], false},
		{"a 1-RTT packet", shortHeader, true},
		{"version negotiation", []byte{0x80, 0, 0, 0, 0, 0, 0}, false},
	}
	for _, c := range cases {
		if got := quicAppData(c.b); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
