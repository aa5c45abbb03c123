package breakdown

import (
	"slices"
	"time"
)

// Flight is a connection's first flight of response data as its packets
// show it on the emulated link: what the server's stack sent after the
// client's first request reached it and before the first acknowledgement
// of that data could reach it back. Its size is the congestion window the
// response started with, and its spread says whether the stack paced it
// (spread over a good part of the round trip) or sent it in one burst.
type Flight struct {
	Conn Conn
	// Packets and Bytes are the flight's data packets and their payload.
	Packets, Bytes int
	// Spread is from the flight's first departure into the link to its
	// last; RTT the connection's handshake round trip as the server saw
	// it (from its first data to the client's next flight).
	Spread, RTT time.Duration
	// Limited says the server sent more after the flight: the window
	// ended it, not the response, so Packets measures the window.
	Limited bool
}

// Paced says how the flight left, for a flight of at least
// minPacedFlight packets that the window ended: "paced" when it was
// spread over at least a fifth of the round trip, "burst" when over less
// than a tenth, "partly paced" between; "" when it cannot tell.
func (f Flight) Paced() string {
	if !f.Limited || f.Packets < minPacedFlight || f.RTT <= 0 {
		return ""
	}
	switch share := float64(f.Spread) / float64(f.RTT); {
	case share >= 0.2:
		return "paced"
	case share < 0.1:
		return "burst"
	}
	return "partly paced"
}

// minPacedFlight is the fewest packets a flight needs for its spread to
// tell pacing from a burst.
const minPacedFlight = 8

// minQUICData is the smallest UDP payload counted as a QUIC data packet:
// QUIC's acknowledgement-only packets are smaller.
const minQUICData = 100

// FirstFlights reads each connection's first response flight from a
// load's packets (the link's log, in the order it handled them); a
// connection without a request after its handshake, or without a
// response to it, has none.
func FirstFlights(packets []Packet) []Flight {
	byConn := map[Conn][]Packet{}
	var order []Conn
	for _, p := range packets {
		if _, ok := byConn[p.Conn]; !ok {
			order = append(order, p.Conn)
		}
		byConn[p.Conn] = append(byConn[p.Conn], p)
	}
	var out []Flight
	for _, c := range order {
		if f, ok := firstFlight(c, byConn[c]); ok {
			out = append(out, f)
		}
	}
	return out
}

// isData reports whether p carries data (not a bare acknowledgement or
// a SYN).
func isData(p Packet) bool {
	if p.Conn.UDP {
		return p.Payload >= minQUICData
	}
	return p.Payload > 0 && !p.SYN
}

// firstFlight finds one connection's first response flight in its
// packets: the server's first data (its handshake), the client's next
// data (the request), the server's data sent from the request's arrival
// until the client's first answer to that data arrived.
func firstFlight(c Conn, ps []Packet) (Flight, bool) {
	arrives := func(down bool) func(Packet) bool {
		return func(p Packet) bool { return p.Down == down && isData(p) && !p.Dropped }
	}
	hello := slices.IndexFunc(ps, arrives(true))
	if hello < 0 {
		return Flight{}, false
	}
	request := indexAfter(ps, hello, func(p Packet) bool { return arrives(false)(p) && p.Sent >= ps[hello].At })
	if request < 0 {
		return Flight{}, false
	}
	arrived := ps[request].At
	first := indexAfter(ps, request, func(p Packet) bool { return arrives(true)(p) && p.Sent >= arrived })
	if first < 0 {
		return Flight{}, false
	}
	answered := time.Duration(1<<63 - 1)
	if ack := indexAfter(ps, first, func(p Packet) bool { return !p.Down && !p.Dropped && p.Sent >= ps[first].At }); ack >= 0 {
		answered = ps[ack].At
	}
	f := Flight{Conn: c, RTT: arrived - ps[hello].Sent}
	var firstSent, lastSent time.Duration
	for _, p := range ps[request+1:] {
		if !p.Down || !isData(p) || p.Sent < arrived {
			continue
		}
		if p.Sent >= answered {
			f.Limited = true
			break
		}
		if f.Packets == 0 {
			firstSent = p.Sent
		}
		lastSent = p.Sent
		f.Packets++
		f.Bytes += p.Payload
	}
	f.Spread = lastSent - firstSent
	return f, true
}

// indexAfter is the index of the first packet after i that match
// accepts, or -1.
func indexAfter(ps []Packet, i int, match func(Packet) bool) int {
	if j := slices.IndexFunc(ps[i+1:], match); j >= 0 {
		return i + 1 + j
	}
	return -1
}
