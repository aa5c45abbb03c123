package breakdown

import "time"

// Parts is a load's time, from its start to its end (its PLT), taken
// apart into what the load waited on. Every instant counts once, for the
// first of these that held at it, so the parts add up to the end:
//   - Link: a packet waited in the bottleneck's queue or was being sent at
//     its rate (bytes that had to cross it, whatever else waited);
//   - Loss: some connection's data stood still for lost data (the stalls
//     Apart is given);
//   - Handshake: a connection was in its handshake, TCP's with TLS's or
//     QUIC's (handshakes), resumed ones and 0-RTT as they went;
//   - RoundTrips: packets were in flight but none at the bottleneck: the
//     trips of requests, responses and acknowledgements, where a
//     congestion window or pacing keeps the link from filling;
//   - Server: nothing was in flight and a server was working on a request
//     (the servers' own records of it);
//   - Client: nothing was in flight and no server was working, as far as
//     the servers record: the browser was.
type Parts struct {
	Loss, Link, Handshake, RoundTrips, Server, Client time.Duration
}

// Apart takes apart the time [0, end) of a load whose link carried and
// dropped packets (in the order the link handled them), given the spans
// in which some connection's data stood still for lost data (Stalls'
// Waits over TCP; the QUIC server's stalls over QUIC) and those in which a
// server worked on a request.
func Apart(packets []Packet, end time.Duration, lossWaits, serving []Span) Parts {
	var link, inFlight []Span
	for _, p := range packets {
		if p.Dropped {
			continue
		}
		link = append(link, Span{p.Sent, p.Sent + p.Bottleneck})
		inFlight = append(inFlight, Span{p.Sent, p.At})
	}
	layers := [][]Span{link, lossWaits, handshakes(packets), inFlight}
	var parts [4]time.Duration
	var taken []Span
	for i, layer := range layers {
		own := minus(within(merged(layer), end), taken)
		parts[i] = total(own)
		taken = merged(append(taken, own...))
	}
	idle := minus([]Span{{0, end}}, taken)
	server := minus(idle, minus(idle, merged(serving)))
	return Parts{Link: parts[0], Loss: parts[1], Handshake: parts[2], RoundTrips: parts[3],
		Server: total(server), Client: total(idle) - total(server)}
}

// handshakes are the connections' handshakes: a TCP connection's from its
// client's SYN to the first data its client sent after the server's first
// data arrived (TLS 1.3's ClientHello and the server's reply, whether
// full or resumed: the client's next data is its Finished with the
// request); a QUIC connection's from its client's first datagram to its
// first datagram with application data, none with 0-RTT.
func handshakes(packets []Packet) []Span {
	type shake struct {
		from, heard time.Duration
		heardAny    bool
	}
	open := map[Conn]*shake{}
	done := map[Conn]bool{}
	var out []Span
	for _, p := range packets {
		if done[p.Conn] {
			continue
		}
		s := open[p.Conn]
		switch {
		case s == nil && !p.Down && (p.SYN || p.Conn.UDP):
			s = &shake{from: p.Sent}
			open[p.Conn] = s
			if p.QUICApp { // 0-RTT: the request went with the first flight
				out, done[p.Conn] = append(out, Span{p.Sent, p.Sent}), true
			}
		case s == nil:
			done[p.Conn] = true // it began before the log
		case p.Conn.UDP && !p.Down && p.QUICApp,
			!p.Conn.UDP && !p.Down && s.heardAny && p.Payload > 0 && p.Sent >= s.heard:
			out, done[p.Conn] = append(out, Span{s.from, p.Sent}), true
		case !p.Conn.UDP && p.Down && !p.Dropped && p.Payload > 0 && !s.heardAny:
			s.heard, s.heardAny = p.At, true
		}
	}
	return out
}
