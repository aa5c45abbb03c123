package breakdown

import (
	"slices"
	"time"
)

// StreamRange is stream data a QUIC packet carried: bytes [Offset,
// Offset+Length) of stream Stream.
type StreamRange struct {
	Stream         int64
	Offset, Length int64
}

// Window is a stretch of wall-clock time, such as one a stream waited for
// lost data to be sent again.
type Window struct{ From, To time.Time }

// Resends follows one QUIC connection's stream data as its sender sent
// it, lost it and sent it again: each lost byte range waits from when its
// packet was first sent to when a later packet carried any of it again
// (both reach the client one trip later, so this is the time the stream
// stood still). Only the lost stream waits: QUIC delivers the other
// streams' data as it arrives. The zero value is ready; not safe for
// concurrent use.
type Resends struct {
	sent   map[int64]sentPacket
	oldest int64 // no packet below it is kept
	lost   []lostRange
	stalls []Window
}

type sentPacket struct {
	at     time.Time
	ranges []StreamRange
}

type lostRange struct {
	StreamRange
	sentAt time.Time
}

// maxTracked bounds the sent packets a Resends keeps: those older are
// taken as delivered (a page load sends far fewer).
const maxTracked = 1 << 16

// Sent notes packet number pn, sent at at with ranges (which it keeps:
// the caller passes a slice of its own): the data of lost ranges it
// carries again ends their wait.
func (r *Resends) Sent(at time.Time, pn int64, ranges []StreamRange) {
	if len(ranges) == 0 {
		return
	}
	for _, s := range ranges {
		r.lost = slices.DeleteFunc(r.lost, func(l lostRange) bool {
			if l.Stream != s.Stream || l.Offset >= s.Offset+s.Length || s.Offset >= l.Offset+l.Length {
				return false
			}
			r.stalls = append(r.stalls, Window{l.sentAt, at})
			return true
		})
	}
	if r.sent == nil {
		r.sent = map[int64]sentPacket{}
	}
	r.sent[pn] = sentPacket{at: at, ranges: ranges}
	for len(r.sent) > maxTracked {
		delete(r.sent, r.oldest)
		r.oldest++
	}
}

// Lost notes that packet number pn was declared lost: its stream data
// waits until it is sent again.
func (r *Resends) Lost(pn int64) {
	p, ok := r.sent[pn]
	if !ok {
		return
	}
	delete(r.sent, pn)
	for _, s := range p.ranges {
		r.lost = append(r.lost, lostRange{s, p.at})
	}
}

// Stalls are the waits ended so far, in the order they ended.
func (r *Resends) Stalls() []Window { return slices.Clone(r.stalls) }

// WaitOf is the time the windows cover together, overlaps counted once.
func WaitOf(windows []Window) time.Duration {
	if len(windows) == 0 {
		return 0
	}
	base := windows[0].From
	for _, w := range windows {
		if w.From.Before(base) {
			base = w.From
		}
	}
	spans := make([]Span, len(windows))
	for i, w := range windows {
		spans[i] = Span{w.From.Sub(base), w.To.Sub(base)}
	}
	return unionLength(spans)
}
