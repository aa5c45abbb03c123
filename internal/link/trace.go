package link

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/safefs"
)

// OpportunityBytes is what one delivery opportunity of a trace carries: one
// 1500-byte IP packet (Mahimahi counts 1504 with its 4-byte TUN header).
const OpportunityBytes = 1500

// Trace is a Mahimahi-format link trace: each entry is a time, in
// milliseconds from the start of the trace, at which OpportunityBytes may
// leave the bottleneck. Times repeat for several packets in one millisecond.
// The trace repeats with a period equal to its last time.
type Trace struct {
	// Name is where the trace came from, for messages and records.
	Name string `json:"name"`
	// Ms are the opportunity times, non-decreasing, the last one > 0.
	Ms []int64 `json:"-"`
}

// maxTraceLines bounds a trace file: the largest real traces have ~160,000.
const maxTraceLines = 10_000_000

// ReadTraceFile reads a trace file; errors name the file and line, and
// never quote the file (it may be any file the user can name, such as
// /etc/shadow). Only a regular file is read: a FIFO or device is refused.
func ReadTraceFile(path string) (*Trace, error) {
	f, err := safefs.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	defer f.Close()
	return ParseTrace(path, f)
}

// ParseTrace reads a trace in Mahimahi's format: one non-negative whole
// number of milliseconds per line, never decreasing, the last above zero.
// Blank lines are not allowed; surrounding spaces are. Errors quote no
// text of r, only numbers it parsed.
func ParseTrace(name string, r io.Reader) (*Trace, error) {
	t := &Trace{Name: name}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		v, err := strconv.ParseInt(text, 10, 64)
		switch {
		case err != nil:
			return nil, fmt.Errorf("trace %s:%d: the line is not a whole number of milliseconds (%s)", name, line, notNumber(text))
		case v < 0:
			return nil, fmt.Errorf("trace %s:%d: %d is negative", name, line, v)
		case v > 1<<40:
			return nil, fmt.Errorf("trace %s:%d: %d ms is too large", name, line, v)
		case len(t.Ms) > 0 && v < t.Ms[len(t.Ms)-1]:
			return nil, fmt.Errorf("trace %s:%d: %d is before the previous line's %d: times must not decrease", name, line, v, t.Ms[len(t.Ms)-1])
		case line > maxTraceLines:
			return nil, fmt.Errorf("trace %s: more than %d lines", name, maxTraceLines)
		}
		t.Ms = append(t.Ms, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("trace %s:%d: %w", name, line+1, err)
	}
	if len(t.Ms) == 0 {
		return nil, fmt.Errorf("trace %s: empty: it needs at least one line with a time in milliseconds", name)
	}
	if t.Ms[len(t.Ms)-1] == 0 {
		return nil, fmt.Errorf("trace %s:%d: the last time is 0: a trace must last more than 0 ms", name, line)
	}
	return t, nil
}

// notNumber says what kind of text a line that is not a number is,
// without quoting it.
func notNumber(text string) string {
	switch {
	case text == "":
		return "it is blank"
	case len(text) > 20:
		return fmt.Sprintf("%d characters long", len(text))
	case strings.ContainsAny(text, ".eE"):
		return "a trace has whole milliseconds, one per line"
	}
	return "a Mahimahi trace has one time in milliseconds per line"
}

// Period is the trace's length: it repeats after this.
func (t *Trace) Period() time.Duration { return time.Duration(t.Ms[len(t.Ms)-1]) * time.Millisecond }

// MeanRate is the trace's capacity averaged over one period, in bit/s.
func (t *Trace) MeanRate() float64 {
	return float64(len(t.Ms)) * OpportunityBytes * 8 / t.Period().Seconds()
}

// validate checks a Trace built in code rather than parsed.
func (t *Trace) validate() error {
	if len(t.Ms) == 0 || t.Ms[len(t.Ms)-1] <= 0 || t.Ms[0] < 0 {
		return errors.New("trace is empty, starts below 0 or lasts 0 ms")
	}
	if !slices.IsSorted(t.Ms) {
		return errors.New("trace times decrease")
	}
	return nil
}

// bottleneck computes when a packet has fully left the bottleneck, given
// every packet accepted before it. Calls come in arrival order. state and
// restore save and bring back its state, for drop-head.
type bottleneck interface {
	depart(arrival time.Time, size int) time.Time
	state() any
	restore(any)
}

// unlimited has no bottleneck: packets leave when they arrive.
type unlimited struct{}

func (unlimited) depart(arrival time.Time, _ int) time.Time { return arrival }
func (unlimited) state() any                                { return nil }
func (unlimited) restore(any)                               {}

// constantRate serves packets one after another at a fixed rate.
type constantRate struct {
	bitsPerSecond int64
	free          time.Time // when the last accepted packet has left
}

func (c *constantRate) state() any    { return c.free }
func (c *constantRate) restore(s any) { c.free = s.(time.Time) }

func (c *constantRate) depart(arrival time.Time, size int) time.Time {
	start := arrival
	if c.free.After(arrival) {
		start = c.free
	}
	c.free = start.Add(TransmissionTime(size, c.bitsPerSecond))
	return c.free
}

// traceRate serves packets at a trace's delivery opportunities, exactly as
// Mahimahi's LinkQueue: an opportunity at time T carries OpportunityBytes of
// packets that arrived at or before T; a packet may span opportunities; the
// bytes of an opportunity that no waiting packet uses are lost.
type traceRate struct {
	trace *Trace
	epoch time.Time // time 0 of the trace
	k     int64     // absolute index of the current opportunity
	left  int       // bytes still unused in opportunity k (0: used up)
}

// at is the time of absolute opportunity k.
func (r *traceRate) at(k int64) time.Time {
	n := int64(len(r.trace.Ms))
	cycle, i := k/n, k%n
	return r.epoch.Add(time.Duration(cycle)*r.trace.Period() + time.Duration(r.trace.Ms[i])*time.Millisecond)
}

// firstAtOrAfter is the index of the first opportunity at or after t.
func (r *traceRate) firstAtOrAfter(t time.Time) int64 {
	n := int64(len(r.trace.Ms))
	since := max(t.Sub(r.epoch), 0)
	cycle := int64(since / r.trace.Period())
	offset := since - time.Duration(cycle)*r.trace.Period()
	i, _ := slices.BinarySearchFunc(r.trace.Ms, offset, func(ms int64, off time.Duration) int {
		return compareDuration(time.Duration(ms)*time.Millisecond, off)
	})
	k := cycle*n + int64(i) // i == n rolls into the next cycle's first
	for r.at(k).Before(t) {
		k++
	}
	// A cycle's last opportunity lies on the next cycle's boundary, so at a
	// boundary the previous cycle's last opportunities may be at t.
	for k > 0 && !r.at(k-1).Before(t) {
		k--
	}
	return k
}

func compareDuration(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

type traceState struct {
	k    int64
	left int
}

func (r *traceRate) state() any { return traceState{r.k, r.left} }
func (r *traceRate) restore(s any) {
	st := s.(traceState)
	r.k, r.left = st.k, st.left
}

func (r *traceRate) depart(arrival time.Time, size int) time.Time {
	if r.left == 0 || r.at(r.k).Before(arrival) {
		// The current opportunity is used up or passed while the queue was
		// empty: start at the first one this packet can use.
		from := r.k
		if r.left == 0 {
			from++
		}
		r.k = max(from, r.firstAtOrAfter(arrival))
		r.left = OpportunityBytes
	}
	remaining := size
	for {
		use := min(remaining, r.left)
		remaining -= use
		r.left -= use
		if remaining == 0 {
			return r.at(r.k)
		}
		r.k++
		r.left = OpportunityBytes
	}
}

// MaxGap is the longest time between two consecutive opportunities,
// including the wrap from the last to the first.
func (t *Trace) MaxGap() time.Duration {
	gap := t.Ms[0] // the wrap: from the last (at the period) to the next cycle's first
	for i := 1; i < len(t.Ms); i++ {
		gap = max(gap, t.Ms[i]-t.Ms[i-1])
	}
	return time.Duration(gap) * time.Millisecond
}
