package breakdown

import (
	"cmp"
	"slices"
	"time"
)

// TCPStalls is what loss cost a load's TCP connections, from the server's
// data segments on the downlink.
type TCPStalls struct {
	// Losses counts data segments the link dropped; Repaired those whose
	// bytes arrived again later in the load.
	Losses, Repaired int
	// LossWait is the time some connection's byte stream stood still for
	// a lost segment: from when the segment would have arrived (when the
	// link took it in, plus the time it would have waited at the
	// bottleneck and the link's one-way delay) to when its bytes did, every
	// connection's stalls together with overlaps counted once.
	LossWait time.Duration
	// HeldBytes counts bytes that arrived behind a missing segment and
	// waited in the client's receive buffer for it; HeldTime is the time
	// any such bytes waited, overlaps counted once. Over HTTP/2 they may
	// belong to other streams than the lost one: head-of-line blocking.
	HeldBytes int64
	HeldTime  time.Duration
	// Waits are the stalls one by one, each with its connection
	// (LossWait counts their union).
	Waits []ConnSpan
}

// ConnSpan is a span of one connection.
type ConnSpan struct {
	Conn Conn
	Span
}

// Spans are the spans of cs without their connections.
func Spans(cs []ConnSpan) []Span {
	out := make([]Span, len(cs))
	for i, c := range cs {
		out[i] = c.Span
	}
	return out
}

// Stalls reads the TCP stalls of a load's packets, in the order the link
// handled them; oneWay is the link's one-way delay downstream (the time a
// dropped segment would have taken to arrive).
func Stalls(packets []Packet, oneWay time.Duration) TCPStalls {
	streams := map[Conn]*stream{}
	var out TCPStalls
	var waits []ConnSpan
	var held []Span
	for _, p := range packets {
		if !p.Down || p.Conn.UDP {
			continue
		}
		s := streams[p.Conn]
		if s == nil {
			s = &stream{}
			streams[p.Conn] = s
		}
		switch {
		case p.SYN:
			s.start(p.Seq + 1)
		case p.Payload == 0:
		case p.Dropped:
			out.Losses++
			s.drop(p, oneWay)
		default:
			r := s.deliver(p)
			out.Repaired += r.repaired
			out.HeldBytes += r.heldBytes
			for _, w := range r.waits {
				waits = append(waits, ConnSpan{p.Conn, w})
			}
			held = append(held, r.held...)
		}
	}
	out.LossWait, out.HeldTime, out.Waits = unionLength(Spans(waits)), unionLength(held), waits
	return out
}

// stream is the client's view of one connection's downstream bytes.
type stream struct {
	started bool
	next    uint32        // the next byte the client can pass on
	ahead   []segment     // arrived beyond next, waiting for it
	lost    []lostSegment // dropped, not yet arrived again
}

type segment struct {
	seq, end uint32
	at       time.Duration
}

type lostSegment struct {
	end uint32        // its last byte + 1
	due time.Duration // when it would have arrived
}

// delivery is what one arriving segment released.
type delivery struct {
	repaired  int
	heldBytes int64
	waits     []Span // stalls it ended
	held      []Span // waits of the bytes it released
}

func (s *stream) start(next uint32) {
	s.started, s.next = true, next
}

// drop notes a dropped data segment the client still needs: not one whose
// bytes it has already (a spurious retransmission lost).
func (s *stream) drop(p Packet, oneWay time.Duration) {
	end := p.Seq + uint32(p.Payload)
	if s.started && !after(end, s.next) {
		return
	}
	s.lost = append(s.lost, lostSegment{end: end, due: p.Sent + p.Bottleneck + oneWay})
}

// deliver takes an arriving data segment.
func (s *stream) deliver(p Packet) delivery {
	seg := segment{seq: p.Seq, end: p.Seq + uint32(p.Payload), at: p.At}
	if !s.started {
		s.start(seg.seq) // the handshake came before the log: start here
	}
	var d delivery
	if after(seg.end, s.next) {
		s.ahead = append(s.ahead, seg)
		slices.SortFunc(s.ahead, func(a, b segment) int { return cmp.Compare(int32(a.seq-s.next), int32(b.seq-s.next)) })
	}
	for len(s.ahead) > 0 && !after(s.ahead[0].seq, s.next) {
		first := s.ahead[0]
		s.ahead = s.ahead[1:]
		if after(first.end, s.next) {
			s.next = first.end
		}
		if first.at < p.At { // it waited for this segment
			d.heldBytes += int64(first.end - first.seq)
			d.held = append(d.held, Span{first.at, p.At})
		}
	}
	s.lost = slices.DeleteFunc(s.lost, func(l lostSegment) bool {
		if after(l.end, s.next) {
			return false
		}
		d.repaired++
		if p.At > l.due {
			d.waits = append(d.waits, Span{l.due, p.At})
		}
		return true
	})
	return d
}

// after reports whether sequence number a comes after b (RFC 1982
// serial number arithmetic: the 32-bit space wraps).
func after(a, b uint32) bool { return int32(a-b) > 0 }
