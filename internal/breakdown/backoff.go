package breakdown

import (
	"slices"
	"time"
)

// Backoff is how a connection's sender answered its first lost data
// packet, as the link's packets show it: the data it had in flight when it
// could first have learned of the loss, and the most it had in flight in
// the round trip after the loss was repaired. A congestion control that
// shrinks its window by a factor β on a loss (CUBIC 0.7, Reno 0.5) holds
// about β times as much in flight after as before (a window-limited sender
// fills its window); one that does not back off (BBR) holds as much or
// more.
type Backoff struct {
	Conn Conn
	// Before is the data in flight, in bytes of payload, when the client's
	// answer to the third data packet after the lost one reached the
	// sender (when TCP's and QUIC's loss detection fire); After the most
	// in flight from a round trip after that to two: the first round
	// after the repair.
	Before, After int
	// Round is the connection's round trip: from the lost packet's
	// departure to that third answer's arrival.
	Round time.Duration
}

// Ratio is After / Before: the share of its flight the sender kept after
// the loss; 0 when Before is 0.
func (b Backoff) Ratio() float64 {
	if b.Before == 0 {
		return 0
	}
	return float64(b.After) / float64(b.Before)
}

// minBackoffFlight is the fewest bytes in flight before a loss for a ratio
// to say anything: about eight full-size packets.
const minBackoffFlight = 8 * 1200

// detectionAfter is how many later data packets must reach the client
// before its acknowledgement of the last of them tells the sender of a
// loss: TCP's three duplicate acknowledgements, QUIC's packet threshold.
const detectionAfter = 3

// Backoffs reads each connection's answer to its first dropped data
// packet from a load's packets (the link's log, in the order it handled
// them). A data packet is in flight from its departure until the client's
// first packet after its arrival reaches the sender (a dropped one, until
// its loss could be learned: for later drops, a round trip). A connection
// counts only on a round trip of at least MinJudgedRTT, where the loss
// stood alone (no other data packet of the connection, nor any of the
// client's, lost from a round trip before it to two after the sender
// learned of it: on a lossy link a second loss shrinks the window again),
// where the sender kept sending for two round trips after it learned of
// the loss (it was not out of data), with at least
// minBackoffFlight in flight before and some in the round after (a sender
// with none for a round was held by something else, such as the
// receiver's window).
func Backoffs(packets []Packet) []Backoff {
	return perConnection(packets, backoffOf)
}

// otherLoss reports whether the link dropped a packet other than
// ps[lost] that left from from to to: the server's data, or any of the
// client's (its answers time the data in flight).
func otherLoss(ps []Packet, lost int, from, to time.Duration) bool {
	for i, p := range ps {
		if i != lost && p.Dropped && (isData(p) || !p.Down) && p.Sent >= from && p.Sent <= to {
			return true
		}
	}
	return false
}

// flightSpan is one data packet's time in flight: from its departure to
// when its acknowledgement (or its loss) reached the sender.
type flightSpan struct {
	from, to time.Duration
	bytes    int
}

// backoffOf is one connection's Backoff, if its packets show one.
func backoffOf(c Conn, ps []Packet) (Backoff, bool) {
	lost := slices.IndexFunc(ps, func(p Packet) bool { return p.Down && p.Dropped && isData(p) })
	if lost < 0 {
		return Backoff{}, false
	}
	learned, ok := lossLearned(ps, lost)
	if !ok {
		return Backoff{}, false
	}
	round := learned - ps[lost].Sent
	if round < MinJudgedRTT {
		return Backoff{}, false // the receiver's window, not the sender's, holds so fast a link
	}
	if otherLoss(ps, lost, ps[lost].Sent-round, learned+2*round) {
		return Backoff{}, false // a second loss would shrink the window again, a lost answer blur it
	}
	spans, last := inFlight(ps, lost, learned, round)
	if last < learned+2*round {
		return Backoff{}, false // out of data, or the log ended: no round after
	}
	b := Backoff{Conn: c, Round: round, Before: peakFlight(spans, learned-round, learned), After: peakFlight(spans, learned+round, learned+2*round)}
	return b, b.Before >= minBackoffFlight && b.After > 0 // nothing in flight for a round: held by something else
}

// peakFlight is the most data in flight from just after from to to: the
// window of a sender that its window limits.
func peakFlight(spans []flightSpan, from, to time.Duration) int {
	peak := flightAt(spans, to)
	for _, s := range spans {
		if s.from > from && s.from <= to {
			peak = max(peak, flightAt(spans, s.from+1))
		}
	}
	return peak
}

// inFlight is the time each data packet of ps spent in flight, the first
// lost one (ps[lost]) until learned, later lost ones a round; and the
// last departure.
func inFlight(ps []Packet, lost int, learned, round time.Duration) ([]flightSpan, time.Duration) {
	var answers []time.Duration // the client's packets: sent, in order
	var arrivals []time.Duration
	for _, p := range ps {
		if !p.Down && !p.Dropped {
			answers, arrivals = append(answers, p.Sent), append(arrivals, p.At)
		}
	}
	var spans []flightSpan
	var last time.Duration
	for i, p := range ps {
		if !p.Down || !isData(p) {
			continue
		}
		last = max(last, p.Sent)
		s := flightSpan{from: p.Sent, to: p.Sent + round, bytes: p.Payload}
		switch {
		case i == lost:
			s.to = learned
		case !p.Dropped:
			if k, _ := slices.BinarySearch(answers, p.At); k < len(answers) {
				s.to = arrivals[k]
			}
		}
		spans = append(spans, s)
	}
	return spans, last
}

// flightAt is the data in flight at t: sent before it, not yet answered.
func flightAt(spans []flightSpan, t time.Duration) int {
	n := 0
	for _, s := range spans {
		if s.from < t && s.to > t {
			n += s.bytes
		}
	}
	return n
}

// lossLearned is when the sender of the lost packet ps[lost] could first
// have learned of its loss: when the client's first packet sent after the
// third later data packet reached it arrived back at the sender.
func lossLearned(ps []Packet, lost int) (time.Duration, bool) {
	after, i := 0, lost
	for after < detectionAfter {
		i = indexAfter(ps, i, func(p Packet) bool { return arrives(p, true) && p.Sent > ps[lost].Sent })
		if i < 0 {
			return 0, false
		}
		after++
	}
	reached := ps[i].At
	ack := slices.IndexFunc(ps, func(p Packet) bool { return !p.Down && !p.Dropped && p.Sent >= reached })
	if ack < 0 {
		return 0, false
	}
	return ps[ack].At, true
}

// QUICLossWaits estimates from a load's packets (the link's log, in the
// order it handled them) how long each QUIC connection's data stood still
// for its lost packets, where the packets are encrypted and no server
// record says: each dropped application-data packet from the server waits
// from its departure to the server's first data packet after it could
// have learned of the loss (the client's answer to the third later packet
// back at the server, as for TCP's duplicate acknowledgements and QUIC's
// packet threshold; where fewer followed, a round trip rtt after the drop,
// near QUIC's time threshold and probe timeout, or never for an rtt of 0), which carries the data
// again for a sender that sends lost data first. Each span is shifted by
// oneWay, the trip the data then takes to the client, so that it covers
// the time the client went without it (as the server records of quic-go
// are placed). A span whose end the log does not hold (the load ended
// first) is left out.
func QUICLossWaits(packets []Packet, rtt, oneWay time.Duration) []ConnSpan {
	waits := perConnection(packets, func(c Conn, ps []Packet) ([]ConnSpan, bool) {
		if !c.UDP {
			return nil, false
		}
		return quicLossWaits(c, ps, rtt, oneWay), true
	})
	return slices.Concat(waits...)
}

// quicLossWaits are one QUIC connection's waits (QUICLossWaits).
func quicLossWaits(c Conn, ps []Packet, rtt, oneWay time.Duration) []ConnSpan {
	var out []ConnSpan
	for i, p := range ps {
		if !p.Down || !p.Dropped || !p.QUICApp || !isData(p) {
			continue
		}
		learned, ok := lossLearned(ps, i)
		if !ok && rtt <= 0 {
			continue // no round trip to wait for
		}
		if !ok {
			learned = p.Sent + rtt
		}
		resent, ok := firstSentFrom(ps, learned)
		if !ok {
			continue
		}
		out = append(out, ConnSpan{Conn: c, Span: Span{From: p.Sent + oneWay, To: resent + oneWay}})
	}
	return out
}

// firstSentFrom is the earliest departure at or after t of a data packet
// from the server (the log holds a dropped packet at its arrival, before
// earlier ones still on their way), and whether there is one.
func firstSentFrom(ps []Packet, t time.Duration) (time.Duration, bool) {
	first, ok := time.Duration(0), false
	for _, q := range ps {
		if q.Down && isData(q) && q.Sent >= t && (!ok || q.Sent < first) {
			first, ok = q.Sent, true
		}
	}
	return first, ok
}
