// Package link is the pure model of one direction of an emulated network link:
// Bernoulli loss, a rate-limited bottleneck with a drop-tail queue bounded in
// bytes, and a one-way propagation delay.
//
// The model never reads the wall clock: every method takes the current time
// as an argument, so it is deterministic and tested with testing/synctest or
// with hand-made times. The emulator package feeds it real packets.
package link

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// Config describes one direction of a link. The zero value is a perfect link:
// no delay, no loss, unlimited rate, unlimited queue.
type Config struct {
	// Delay is the one-way propagation delay added to every delivered packet.
	// Zero: none.
	Delay time.Duration `json:"delay_ns"`
	// Jitter varies each packet's delay uniformly within ±Jitter, never below
	// zero and never reordering packets (a packet is never delivered before
	// the one ahead of it). Zero: none.
	Jitter time.Duration `json:"jitter_ns"`
	// Loss is the probability, from 0 to 1, that a packet is dropped on
	// arrival, decided independently per packet (Bernoulli). Zero: no loss.
	// Must be zero when GilbertElliott is set.
	Loss float64 `json:"loss"`
	// GilbertElliott, if set, is the bursty loss model instead of Loss.
	GilbertElliott *GilbertElliott `json:"gilbert_elliott,omitempty"`
	// RateBitsPerSecond is the bottleneck rate in bit/s. A packet of n bytes
	// occupies the bottleneck for n*8/RateBitsPerSecond seconds. Zero:
	// unlimited, packets are never queued. Must be zero when Trace is set.
	RateBitsPerSecond int64 `json:"rate_bps"`
	// Trace, if set, gives the bottleneck's delivery opportunities instead
	// of a constant rate (Mahimahi's format and semantics).
	Trace *Trace `json:"trace,omitempty"`
	// QueueBytes bounds the bytes waiting at the bottleneck, including the
	// packet being transmitted. A packet that would exceed it is dropped
	// (drop-tail); a packet arriving at an empty queue is always accepted.
	// Zero: no byte limit.
	QueueBytes int64 `json:"queue_bytes"`
	// QueuePackets bounds the packets waiting at the bottleneck, including
	// the one being transmitted, likewise. Zero: no packet limit.
	QueuePackets int `json:"queue_packets"`
	// DropHead makes a full queue drop its oldest waiting packet (the one
	// behind the packet in transmission) instead of the arriving one. The
	// packets behind it then leave earlier. False: drop-tail.
	DropHead bool `json:"drop_head"`
	// Seed seeds the loss and jitter generator: the same seed gives the same
	// decisions for the same packet sequence.
	Seed uint64 `json:"seed"`
}

// Validate reports the first invalid field of c.
func (c Config) Validate() error {
	switch {
	case c.Delay < 0:
		return fmt.Errorf("delay %v is negative: use 0 or more", c.Delay)
	case c.Jitter < 0:
		return fmt.Errorf("jitter %v is negative: use 0 or more", c.Jitter)
	case math.IsNaN(c.Loss) || c.Loss < 0 || c.Loss > 1:
		return fmt.Errorf("loss probability %v is outside [0, 1]", c.Loss)
	case c.GilbertElliott != nil && c.Loss != 0:
		return fmt.Errorf("loss: give either a Bernoulli probability or a Gilbert-Elliott model, not both")
	case c.RateBitsPerSecond < 0:
		return fmt.Errorf("rate %d bit/s is negative: use 0 (unlimited) or more", c.RateBitsPerSecond)
	case c.Trace != nil && c.RateBitsPerSecond != 0:
		return fmt.Errorf("rate: give either a constant rate or a trace, not both")
	case c.QueueBytes < 0:
		return fmt.Errorf("queue %d bytes is negative: use 0 (unlimited) or more", c.QueueBytes)
	case c.QueuePackets < 0:
		return fmt.Errorf("queue %d packets is negative: use 0 (unlimited) or more", c.QueuePackets)
	}
	if c.GilbertElliott != nil {
		if err := c.GilbertElliott.Validate(); err != nil {
			return err
		}
	}
	if c.Trace != nil {
		if err := c.Trace.validate(); err != nil {
			return fmt.Errorf("trace %s: %w", c.Trace.Name, err)
		}
	}
	return nil
}

// MeanLoss is the long-run loss probability of the configured loss model.
func (c Config) MeanLoss() float64 {
	if c.GilbertElliott != nil {
		return c.GilbertElliott.StationaryLoss()
	}
	return c.Loss
}

// MeanRate is the bottleneck's long-run rate in bit/s; 0 means unlimited.
func (c Config) MeanRate() float64 {
	if c.Trace != nil {
		return c.Trace.MeanRate()
	}
	return float64(c.RateBitsPerSecond)
}

// Verdict is what the link does with a packet.
type Verdict int

const (
	// Delivered means the packet is delivered at the returned time.
	Delivered Verdict = iota
	// DroppedLoss means the random loss process dropped the packet.
	DroppedLoss
	// DroppedQueue means the bottleneck queue was full (drop-tail).
	DroppedQueue
)

// String names the verdict.
func (v Verdict) String() string {
	switch v {
	case Delivered:
		return "delivered"
	case DroppedLoss:
		return "dropped-loss"
	case DroppedQueue:
		return "dropped-queue"
	}
	return fmt.Sprintf("verdict(%d)", int(v))
}

// Stats counts what one direction did with its packets.
type Stats struct {
	Packets          int64 `json:"packets"`            // packets offered to the link
	Bytes            int64 `json:"bytes"`              // bytes offered to the link
	Delivered        int64 `json:"delivered"`          // packets delivered
	DroppedLoss      int64 `json:"dropped_loss"`       // packets dropped by the loss process
	DroppedQueue     int64 `json:"dropped_queue"`      // packets dropped because the queue was full
	PeakQueueBytes   int64 `json:"peak_queue_bytes"`   // largest queue occupancy seen, in bytes, including the arriving packet
	PeakQueuePackets int   `json:"peak_queue_packets"` // largest queue occupancy seen, in packets, likewise
}

// Direction is the state of one direction of a link. It is not safe for
// concurrent use: one goroutine owns it.
//
// Packets pass three stages, as in Mahimahi's shells: the loss process, the
// bottleneck with its drop-tail queue, and the delay line.
type Direction struct {
	cfg  Config
	rng  *rand.Rand
	loss lossProcess
	// lossSuspended keeps the loss process from dropping (SuspendLoss).
	lossSuspended bool
	bottleneck    bottleneck
	// queued are the accepted packets that have not left the bottleneck,
	// oldest first, with the time each leaves it.
	queued      []queuedPacket
	queuedBytes int64
	// lastDelivery keeps deliveries in order under jitter and when callers'
	// clocks jitter.
	lastDelivery time.Time
	// lastWait is the last delivered packet's time at the bottleneck.
	lastWait time.Duration
	stats    Stats
}

type queuedPacket struct {
	arrival   time.Time
	departure time.Time
	deliverAt time.Time
	size      int
	// before is the bottleneck's state before it served this packet, so
	// that a drop-head can serve the packets behind a victim again.
	before any
	// slot tells the emulator when a drop-head moved or dropped the packet;
	// nil under drop-tail.
	slot *Slot
}

// Slot is a packet's entry in a drop-head queue: the model moves the
// packet's delivery earlier, or drops it, after Send returned. Safe for
// concurrent use.
type Slot struct {
	shift   atomic.Int64 // ns, never positive
	dropped atomic.Bool
}

// Shift is how much earlier than Send said the packet now leaves (≤ 0).
func (s *Slot) Shift() time.Duration { return time.Duration(s.shift.Load()) }

// Dropped reports whether a drop-head dropped the packet after Send.
func (s *Slot) Dropped() bool { return s.dropped.Load() }

// New returns a Direction for cfg, whose trace (if any) starts at start, or
// an error if cfg is invalid.
func New(cfg Config, start time.Time) (*Direction, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := &Direction{
		cfg:        cfg,
		rng:        rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		loss:       bernoulli(cfg.Loss),
		bottleneck: unlimited{},
	}
	if cfg.GilbertElliott != nil {
		d.loss = &gilbertElliott{GilbertElliott: *cfg.GilbertElliott}
	}
	switch {
	case cfg.Trace != nil:
		d.bottleneck = &traceRate{trace: cfg.Trace, epoch: start, k: -1}
	case cfg.RateBitsPerSecond > 0:
		d.bottleneck = &constantRate{bitsPerSecond: cfg.RateBitsPerSecond}
	}
	return d, nil
}

// LastWait is the time the last packet SendTracked delivered waits in the
// bottleneck's queue and is sent at its rate: 0 on a link without a rate.
func (d *Direction) LastWait() time.Duration { return d.lastWait }

// Backlog is the time a packet arriving at now would wait in the
// bottleneck's queue before it is sent: 0 when the queue is empty.
func (d *Direction) Backlog(now time.Time) time.Duration {
	if len(d.queued) == 0 {
		return 0
	}
	return max(d.queued[len(d.queued)-1].departure.Sub(now), 0)
}

// SuspendLoss keeps the loss process from dropping packets while on (a
// stack's calibration measures the stack, not the network's losses). The
// process still draws for every packet, so that the losses after it are
// the ones they would have been.
func (d *Direction) SuspendLoss(on bool) { d.lossSuspended = on }

// Config returns the configuration of d.
func (d *Direction) Config() Config { return d.cfg }

// Stats returns the counters of d so far.
func (d *Direction) Stats() Stats { return d.stats }

// Send offers a packet of size bytes to the link at time now. It returns the
// verdict and, for a delivered packet, the time at which it leaves the far
// end of the link. Delivery times never decrease, so packets stay in order.
// Calls must come with non-decreasing now, give or take clock jitter.
func (d *Direction) Send(now time.Time, size int) (deliverAt time.Time, v Verdict) {
	deliverAt, v, _ = d.SendTracked(now, size)
	return deliverAt, v
}

// SendTracked is Send that also returns, under drop-head, the packet's Slot,
// through which the model moves or drops the packet later; nil under
// drop-tail, where a delivery time never changes.
func (d *Direction) SendTracked(now time.Time, size int) (deliverAt time.Time, v Verdict, slot *Slot) {
	d.stats.Packets++
	d.stats.Bytes += int64(size)
	if d.loss.lose(d.rng) && !d.lossSuspended {
		d.stats.DroppedLoss++
		return time.Time{}, DroppedLoss, nil
	}
	// Forget the packets that have left the bottleneck by now.
	gone := 0
	for gone < len(d.queued) && !d.queued[gone].departure.After(now) {
		d.queuedBytes -= int64(d.queued[gone].size)
		gone++
	}
	d.queued = d.queued[gone:]
	if len(d.queued) > 0 {
		tooManyBytes := d.cfg.QueueBytes > 0 && d.queuedBytes+int64(size) > d.cfg.QueueBytes
		tooManyPackets := d.cfg.QueuePackets > 0 && len(d.queued)+1 > d.cfg.QueuePackets
		if tooManyBytes || tooManyPackets {
			if !d.cfg.DropHead || len(d.queued) < 2 {
				d.stats.DroppedQueue++
				return time.Time{}, DroppedQueue, nil
			}
			d.dropHead()
		}
	}
	before := d.bottleneck.state()
	departure := d.bottleneck.depart(now, size)
	d.lastWait = max(departure.Sub(now), 0)
	delay := d.cfg.Delay
	if d.cfg.Jitter > 0 {
		delay += time.Duration((d.rng.Float64()*2 - 1) * float64(d.cfg.Jitter))
		delay = max(delay, 0)
	}
	deliverAt = departure.Add(delay)
	if deliverAt.Before(d.lastDelivery) {
		deliverAt = d.lastDelivery
	}
	d.lastDelivery = deliverAt
	if departure.After(now) {
		if d.cfg.DropHead {
			slot = &Slot{}
		}
		d.queued = append(d.queued, queuedPacket{arrival: now, departure: departure, deliverAt: deliverAt, size: size, before: before, slot: slot})
		d.queuedBytes += int64(size)
		d.stats.PeakQueueBytes = max(d.stats.PeakQueueBytes, d.queuedBytes)
		d.stats.PeakQueuePackets = max(d.stats.PeakQueuePackets, len(d.queued))
	}
	d.stats.Delivered++
	return deliverAt, Delivered, slot
}

// dropHead drops the oldest waiting packet, the one behind the packet in
// transmission, and serves the packets behind it again from the state the
// bottleneck had before the victim: they leave earlier, never reordered.
// A packet counted as delivered when it was sent is then counted as dropped.
func (d *Direction) dropHead() {
	victim := d.queued[1]
	victim.slot.dropped.Store(true)
	d.stats.DroppedQueue++
	d.stats.Delivered--
	d.queuedBytes -= int64(victim.size)
	d.bottleneck.restore(victim.before)
	rest := d.queued[2:]
	prev := d.queued[0].deliverAt
	for i := range rest {
		p := &rest[i]
		p.before = d.bottleneck.state()
		departure := d.bottleneck.depart(p.arrival, p.size)
		deliverAt := p.deliverAt.Add(departure.Sub(p.departure))
		if deliverAt.Before(prev) {
			deliverAt = prev // never before the packet ahead
		}
		p.slot.shift.Add(int64(deliverAt.Sub(p.deliverAt)))
		p.departure, p.deliverAt, prev = departure, deliverAt, deliverAt
	}
	d.queued = append(d.queued[:1], rest...)
	d.lastDelivery = prev
}

// Reseed restarts d's random numbers from seed (a Gilbert-Elliott chain
// in its good state) and, when no packet is queued, a trace from now: the
// k-th packet offered afterwards meets the same loss and jitter draws, and
// the same trace opportunities, on every Direction of this configuration
// reseeded with the same seed, whatever came before. Counters continue.
func (d *Direction) Reseed(seed uint64, now time.Time) {
	d.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	if g, ok := d.loss.(*gilbertElliott); ok {
		g.bad = false
	}
	if t, ok := d.bottleneck.(*traceRate); ok && len(d.queued) == 0 {
		t.epoch, t.k, t.left = now, -1, 0
	}
}

// TransmissionTime is how long a packet of size bytes occupies a bottleneck
// of rate bit/s, rounded up to the nanosecond.
func TransmissionTime(size int, rate int64) time.Duration {
	bits := int64(size) * 8
	ns := (bits*int64(time.Second) + rate - 1) / rate
	return time.Duration(ns)
}

// ResetPeaks restarts the peak queue counters from the occupancy at the last
// Send (packets that have left since are forgotten at the next Send),
// so that later peaks describe only later traffic.
func (d *Direction) ResetPeaks() {
	d.stats.PeakQueueBytes = d.queuedBytes
	d.stats.PeakQueuePackets = len(d.queued)
}
