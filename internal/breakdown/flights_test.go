package breakdown

import (
	"cmp"
	"net/netip"
	"slices"
	"testing"
	"time"
)

// tcpLoad is a TLS connection's packets over a 100 ms round trip: the
// handshake (3 server packets), a request at 200 ms arriving at 250 ms, a
// response of n packets sent gap apart from 250 ms, the client's first
// acknowledgement of it, and, with more, 10 more packets after that
// acknowledgement arrived.
func tcpLoad(n int, gap time.Duration, more bool) []Packet {
	ms := time.Millisecond
	c := Conn{Client: netip.MustParseAddrPort("10.0.0.2:40000"), Server: netip.MustParseAddrPort("10.0.1.2:443")}
	pk := func(sent time.Duration, down bool, payload int, syn bool) Packet {
		return Packet{Conn: c, Sent: sent, At: sent + 50*ms, Down: down, Payload: payload, SYN: syn}
	}
	ps := []Packet{pk(0, false, 0, true), pk(50*ms, true, 0, true), pk(100*ms, false, 517, false)}
	for i := range 3 {
		ps = append(ps, pk(150*ms+time.Duration(i)*100*time.Microsecond, true, 1448, false))
	}
	ps = append(ps, pk(200*ms, false, 180, false))
	var last time.Duration
	for i := range n {
		last = 250*ms + time.Duration(i)*gap
		ps = append(ps, pk(last, true, 1448, false))
	}
	ps = append(ps, pk(300*ms, false, 0, false)) // the first ACK of the response, at the server at 350 ms
	if more {
		for i := range 10 {
			ps = append(ps, pk(max(350*ms, last)+time.Duration(i)*ms, true, 1448, false))
		}
	}
	// the log's order: by when the link handled each packet
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && ps[j].At < ps[j-1].At; j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
	return ps
}

func TestFirstFlightsReadTheWindowAndThePacing(t *testing.T) {
	for _, c := range []struct {
		name    string
		packets []Packet
		want    int
		paced   string
	}{
		{"IW32 in one burst", tcpLoad(32, 20*time.Microsecond, true), 32, "burst"},
		{"IW32 paced over half the round trip", tcpLoad(32, 1500*time.Microsecond, true), 32, "paced"},
		{"IW10 in one burst", tcpLoad(10, 0, true), 10, "burst"},
		{"a response smaller than the window", tcpLoad(5, 0, false), 5, ""},
	} {
		flights := FirstFlights(c.packets)
		if len(flights) != 1 {
			t.Fatalf("%s: %d flights, want 1", c.name, len(flights))
		}
		f := flights[0]
		if f.Packets != c.want || f.Bytes != c.want*1448 || f.Paced() != c.paced || f.RTT != 100*time.Millisecond {
			t.Errorf("%s: %+v, paced %q; want %d packets, %q, RTT 100 ms", c.name, f, f.Paced(), c.want, c.paced)
		}
	}
	if got := FirstFlights(tcpLoad(0, 0, false)); len(got) != 0 {
		t.Errorf("a connection with no response: %+v, want no flight", got)
	}
}

// TestAFlightThatAnsweredAllItHadIsNotAWindow: a browser's first request
// (the document, 3 packets) is answered whole, and the data after the
// next acknowledgement answers the requests that arrived meanwhile: that
// flight measured no window (it said 4 packets of QUIC's 32 in the demo),
// and the next flights are not read either (the window had grown).
func TestAFlightThatAnsweredAllItHadIsNotAWindow(t *testing.T) {
	ms := time.Millisecond
	ps := tcpLoad(3, 0, false) // the document, 3 packets sent at 250 ms; its ACK arrives at 350 ms
	c := ps[0].Conn
	pk := func(sent time.Duration, down bool, payload int) Packet {
		return Packet{Conn: c, Sent: sent, At: sent + 50*ms, Down: down, Payload: payload}
	}
	ps = append(ps, pk(310*ms, false, 900)) // the page's requests, at the server at 360 ms
	for i := range 10 {
		ps = append(ps, pk(360*ms+time.Duration(i)*10*time.Microsecond, true, 1448)) // the window
	}
	ps = append(ps, pk(410*ms, false, 0)) // its ACK, at the server at 460 ms
	for i := range 10 {
		ps = append(ps, pk(460*ms+time.Duration(i)*10*time.Microsecond, true, 1448))
	}
	flights := FirstFlights(ps)
	if len(flights) != 1 || flights[0].Limited || flights[0].Packets != 3 || flights[0].Paced() != "" {
		t.Errorf("flights %+v; want the document's 3 packets, not a window", flights)
	}
}

// lateAnswer is tcpLoad's exchange with 28 packets 4 ms apart (108 ms of
// a 100 ms round trip) whose first answer the client sent late, at 380
// ms, and the server's data once it arrived.
func lateAnswer() []Packet {
	ms := time.Millisecond
	ps := tcpLoad(28, 4*ms, false)
	for i, p := range ps {
		if !p.Down && p.Sent == 300*ms {
			ps[i].Sent, ps[i].At = 380*ms, 430*ms
		}
	}
	c := ps[0].Conn
	for i := range 10 {
		at := 430*ms + time.Duration(i)*ms
		ps = append(ps, Packet{Conn: c, Sent: at, At: at + 50*ms, Down: true, Payload: 1448})
	}
	slices.SortStableFunc(ps, func(a, b Packet) int { return cmp.Compare(a.At, b.At) })
	return ps
}

// dropFirstOfFlight drops tcpLoad's first response packet (sent at 250
// ms) and has the server send a packet at each time of resent (the
// repair).
func dropFirstOfFlight(ps []Packet, resent []time.Duration) []Packet {
	ms := time.Millisecond
	for i, p := range ps {
		if p.Down && p.Payload > 0 && p.Sent == 250*ms {
			ps[i].Dropped, ps[i].At = true, p.Sent
			break
		}
	}
	for _, at := range resent {
		ps = append(ps, Packet{Conn: ps[0].Conn, Sent: at, At: at + 50*ms, Down: true, Payload: 1448})
	}
	slices.SortStableFunc(ps, func(a, b Packet) int { return cmp.Compare(a.At, b.At) })
	return ps
}

// scaled is ps with every time multiplied by k: the same exchange on a
// round trip k times as long.
func scaled(ps []Packet, k float64) []Packet {
	out := make([]Packet, len(ps))
	for i, p := range ps {
		p.Sent, p.At = time.Duration(float64(p.Sent)*k), time.Duration(float64(p.At)*k)
		out[i] = p
	}
	return out
}

// TestWhatTheWireCannotTellIsNotRead: a flight spread over more than its
// round trip was several flights, and one followed only by the repair of
// its lost packet may have ended with its response: neither measures a
// window. On a 5 ms round trip a flight's size is read, but not its
// pacing: a millisecond of the machine's own jitter is a fifth of it.
func TestWhatTheWireCannotTellIsNotRead(t *testing.T) {
	ms := time.Millisecond
	if f := FirstFlights(lateAnswer()); len(f) != 1 || f[0].Packets != 28 || f[0].Limited {
		t.Errorf("a flight over more than its round trip: %+v, want it not read as a window", f)
	}
	// a window with a lost packet is still a window; a response smaller
	// than the window with a lost packet, followed only by its repair, is
	// not
	for _, c := range []struct {
		name    string
		packets []Packet
		limited bool
	}{
		{"a window of 10 with a lost packet", dropFirstOfFlight(tcpLoad(10, 0, true), nil), true},
		{"a response of 5 with a lost packet, then its repair", dropFirstOfFlight(tcpLoad(5, 0, false), []time.Duration{350 * ms}), false},
	} {
		if f := FirstFlights(c.packets); len(f) != 1 || f[0].Limited != c.limited {
			t.Errorf("%s: %+v, want limited %v", c.name, f, c.limited)
		}
	}
	nextLost := tcpLoad(10, 0, true)
	for i, p := range nextLost {
		if p.Down && p.Sent == 350*ms {
			nextLost[i].Dropped, nextLost[i].At = true, p.Sent // the next flight's first packet, as a calibration drops it
			break
		}
	}
	slices.SortStableFunc(nextLost, func(a, b Packet) int { return cmp.Compare(a.At, b.At) })
	if f := FirstFlights(nextLost); len(f) != 1 || !f[0].Limited || f[0].Packets != 10 {
		t.Errorf("the next flight's first packet lost: %+v, want the window of 10 read", f)
	}
	short := FirstFlights(scaled(tcpLoad(32, 1500*time.Microsecond, true), 0.05)) // paced over half of a 5 ms round trip
	if len(short) != 1 || !short[0].Limited || short[0].Packets != 32 || short[0].Paced() != "" {
		t.Errorf("a 5 ms round trip: %+v, paced %q; want 32 packets read, their pacing not", short, short[0].Paced())
	}
	if f := FirstFlights(scaled(tcpLoad(32, 1500*time.Microsecond, true), 0.2)); len(f) != 1 || f[0].Paced() != "paced" {
		t.Errorf("a 20 ms round trip: %+v, want its pacing read", f)
	}
}
