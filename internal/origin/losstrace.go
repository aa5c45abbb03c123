package origin

import (
	"sync"
	"time"

	"github.com/quic-go/quic-go/qlog"
	"github.com/quic-go/quic-go/qlogwriter"
	"github.com/quicbench/quicbench/internal/breakdown"
)

// lossTrace follows one QUIC connection's lost and resent stream data
// (breakdown.Resends) for its record's stalls, from quic-go's qlog events,
// and passes every event on to the qlog file being written, if any.
type lossTrace struct {
	file    qlogwriter.Trace // nil: no qlog file
	tracker *connTracker

	mu      sync.Mutex
	resends breakdown.Resends
}

// AddProducer is qlogwriter.Trace's: a recorder of this trace.
func (t *lossTrace) AddProducer() qlogwriter.Recorder {
	r := &lossRecorder{trace: t}
	if t.file != nil {
		r.file = t.file.AddProducer()
	}
	return r
}

// stalls are the connection's waits for resent data so far.
func (t *lossTrace) stalls() []breakdown.Window {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.resends.Stalls()
}

// lossRecorder is one producer's recorder of a lossTrace.
type lossRecorder struct {
	trace *lossTrace
	file  qlogwriter.Recorder
}

// RecordEvent notes the events of sent and lost application data, and
// the connection's start (its client's address names its record).
func (r *lossRecorder) RecordEvent(e qlogwriter.Event) {
	switch e := e.(type) {
	case qlog.StartedConnection:
		r.trace.tracker.traceOf(e.Remote.IPv4.String(), r.trace)
	case qlog.PacketSent:
		if ranges := streamRanges(e.Frames); len(ranges) > 0 && appData(e.Header.PacketType) {
			r.trace.mu.Lock()
			r.trace.resends.Sent(time.Now(), int64(e.Header.PacketNumber), ranges)
			r.trace.mu.Unlock()
		}
	case qlog.PacketLost:
		if appData(e.Header.PacketType) {
			r.trace.mu.Lock()
			r.trace.resends.Lost(int64(e.Header.PacketNumber))
			r.trace.mu.Unlock()
		}
	}
	if r.file != nil {
		r.file.RecordEvent(e)
	}
}

// Close closes the file's recorder.
func (r *lossRecorder) Close() error {
	if r.file != nil {
		return r.file.Close()
	}
	return nil
}

// appData says whether packets of type t carry application data (0-RTT
// and 1-RTT share a packet number space).
func appData(t qlog.PacketType) bool { return t == qlog.PacketType1RTT || t == qlog.PacketType0RTT }

// streamRanges are the stream data the frames carry.
func streamRanges(frames []qlog.Frame) []breakdown.StreamRange {
	var out []breakdown.StreamRange
	for _, f := range frames {
		if s, ok := f.Frame.(*qlog.StreamFrame); ok && s.Length > 0 {
			out = append(out, breakdown.StreamRange{Stream: int64(s.StreamID), Offset: s.Offset, Length: s.Length})
		}
	}
	return out
}
