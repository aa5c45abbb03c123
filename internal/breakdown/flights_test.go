package breakdown

import (
	"net/netip"
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
