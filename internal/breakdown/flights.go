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
	// ended it, not the response, so Packets measures the window: the
	// server sent again as soon as the client's answer arrived, with no
	// request between, more than the repair of the flight's lost packets
	// (a response that ended inside a lossy flight is followed by its
	// repair alone), and the flight left within a round trip (a window
	// cannot take longer: one that did was several flights, as a busy
	// machine's 5 ms round trips blur them).
	Limited bool
}

// Paced says how the flight left, for a flight of at least
// minPacedFlight packets that the window ended on a round trip of at
// least MinJudgedRTT: "paced" when it was spread over at least a fifth of
// the round trip, "burst" when over less than a tenth, "partly paced"
// between; "" when it cannot tell.
func (f Flight) Paced() string {
	if !f.Limited || f.Packets < minPacedFlight || f.RTT < MinJudgedRTT {
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

// MinJudgedRTT is the shortest round trip on which the wire tells how a
// stack paces and how it answers a loss. The link's packets are timed to
// about a millisecond on a busy machine, a fifth of a 5 ms round trip (a
// burst then reads as paced), and on so short a round trip the receiver's
// window rather than the sender's holds a download (Linux's CUBIC kept
// 1.00 to 1.40 of its sending after a loss at 5 ms, 0.75 at 100 ms:
// BENCHMARKS.md). A first flight's size is read on any round trip.
const MinJudgedRTT = 20 * time.Millisecond

// minQUICData is the smallest UDP payload counted as a QUIC data packet:
// QUIC's acknowledgement-only packets are smaller.
const minQUICData = 100

// FirstFlights reads each connection's first response flight from a
// load's packets (the link's log, in the order it handled them); a
// connection without a request after its handshake, or without a
// response to it, has none.
func FirstFlights(packets []Packet) []Flight {
	return perConnection(packets, firstFlight)
}

// perConnection applies read to each connection's packets (in the log's
// order), connections in the order they first appear, and keeps what it
// finds.
func perConnection[T any](packets []Packet, read func(Conn, []Packet) (T, bool)) []T {
	byConn := map[Conn][]Packet{}
	var order []Conn
	for _, p := range packets {
		if _, ok := byConn[p.Conn]; !ok {
			order = append(order, p.Conn)
		}
		byConn[p.Conn] = append(byConn[p.Conn], p)
	}
	var out []T
	for _, c := range order {
		if v, ok := read(c, byConn[c]); ok {
			out = append(out, v)
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

// firstFlight finds one connection's first response flight: from the
// arrival of its first request (the client's data after the server's
// first data, its handshake) the server's data until the client's first
// answer to it arrived. Later flights are not read: by then the window
// has grown with what was acknowledged.
func firstFlight(c Conn, ps []Packet) (Flight, bool) {
	hello := slices.IndexFunc(ps, func(p Packet) bool { return arrives(p, true) })
	if hello < 0 {
		return Flight{}, false
	}
	request := indexAfter(ps, hello, func(p Packet) bool { return arrives(p, false) && p.Sent >= ps[hello].At })
	if request < 0 {
		return Flight{}, false
	}
	return flightFrom(c, ps, request, ps[request].At-ps[hello].Sent)
}

// arrives reports whether p is data the link delivered, sent by the
// server (down) or by the client.
func arrives(p Packet, down bool) bool { return p.Down == down && isData(p) && !p.Dropped }

// resumeWithin is how soon after an acknowledgement arrives a server
// that waited on its window sends again.
const resumeWithin = 5 * time.Millisecond

// flightFrom is the flight that answers the request ps[request], on a
// connection whose handshake round trip was rtt; false when the server
// sent nothing after it.
func flightFrom(c Conn, ps []Packet, request int, rtt time.Duration) (Flight, bool) {
	arrived := ps[request].At
	first := indexAfter(ps, request, func(p Packet) bool { return arrives(p, true) && p.Sent >= arrived })
	if first < 0 {
		return Flight{}, false
	}
	answered := time.Duration(1<<63 - 1)
	if ack := indexAfter(ps, first, func(p Packet) bool { return !p.Down && !p.Dropped && p.Sent >= ps[first].At }); ack >= 0 {
		answered = ps[ack].At
	}
	f := Flight{Conn: c, RTT: rtt}
	// In the log a dropped packet comes at its arrival, before packets
	// sent earlier that were still on their way: go by the times sent.
	var firstSent, lastSent time.Duration
	resumed := time.Duration(-1)
	for _, p := range ps[request+1:] {
		switch {
		case !p.Down || !isData(p) || p.Sent < arrived:
		case p.Sent >= answered:
			if resumed < 0 || p.Sent < resumed {
				resumed = p.Sent
			}
		default:
			if f.Packets == 0 || p.Sent < firstSent {
				firstSent = p.Sent
			}
			lastSent = max(lastSent, p.Sent)
			f.Packets++
			f.Bytes += p.Payload
		}
	}
	f.Spread = lastSent - firstSent
	if resumed >= 0 {
		f.Limited = resumed-answered <= resumeWithin && !requestBetween(ps, lastSent, resumed) &&
			f.Spread < rtt && sentAfter(ps, answered, answered+rtt/2) > lostFrom(ps, arrived, answered)
	}
	return f, true
}

// lostFrom counts the server's data packets sent from from until to that
// the link dropped.
func lostFrom(ps []Packet, from, to time.Duration) int {
	n := 0
	for _, p := range ps {
		if p.Down && p.Dropped && isData(p) && p.Sent >= from && p.Sent < to {
			n++
		}
	}
	return n
}

// sentAfter counts the server's data packets sent from from until to.
func sentAfter(ps []Packet, from, to time.Duration) int {
	n := 0
	for _, p := range ps {
		if p.Down && isData(p) && p.Sent >= from && p.Sent < to {
			n++
		}
	}
	return n
}

// requestBetween reports whether a request (client data of at least
// minRequest bytes: not a bare acknowledgement, nor an HTTP/2 window
// update in its TLS record) arrived at the server after from and no later
// than to.
func requestBetween(ps []Packet, from, to time.Duration) bool {
	return slices.ContainsFunc(ps, func(p Packet) bool {
		return arrives(p, false) && p.Payload >= minRequest && p.At > from && p.At <= to
	})
}

// minRequest is the smallest client data taken for a request.
const minRequest = 100

// indexAfter is the index of the first packet after i that match
// accepts, or -1.
func indexAfter(ps []Packet, i int, match func(Packet) bool) int {
	if j := slices.IndexFunc(ps[i+1:], match); j >= 0 {
		return i + 1 + j
	}
	return -1
}
