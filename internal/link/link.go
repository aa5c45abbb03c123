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
	"time"
)

// Config describes one direction of a link. The zero value is a perfect link:
// no delay, no loss, unlimited rate.
type Config struct {
	// Delay is the one-way propagation delay added to every delivered packet.
	// Zero: none.
	Delay time.Duration
	// Loss is the probability, from 0 to 1, that a packet is dropped on
	// arrival, decided independently per packet (Bernoulli). Zero: no loss.
	Loss float64
	// RateBitsPerSecond is the bottleneck rate in bit/s. A packet of n bytes
	// occupies the bottleneck for n*8/RateBitsPerSecond seconds. Zero:
	// unlimited, packets are never queued.
	RateBitsPerSecond int64
	// QueueBytes bounds the bytes waiting at the bottleneck, including the
	// packet being transmitted. A packet that would exceed it is dropped
	// (drop-tail); a packet arriving at an empty queue is always accepted.
	// Zero: unlimited. Ignored when RateBitsPerSecond is zero.
	QueueBytes int64
	// Seed seeds the loss generator: the same seed gives the same loss
	// decisions for the same packet sequence.
	Seed uint64
}

// Validate reports the first invalid field of c.
func (c Config) Validate() error {
	switch {
	case c.Delay < 0:
		return fmt.Errorf("delay %v is negative: use 0 or more", c.Delay)
	case math.IsNaN(c.Loss) || c.Loss < 0 || c.Loss > 1:
		return fmt.Errorf("loss probability %v is outside [0, 1]", c.Loss)
	case c.RateBitsPerSecond < 0:
		return fmt.Errorf("rate %d bit/s is negative: use 0 (unlimited) or more", c.RateBitsPerSecond)
	case c.QueueBytes < 0:
		return fmt.Errorf("queue %d bytes is negative: use 0 (unlimited) or more", c.QueueBytes)
	}
	return nil
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
	Packets        int64 `json:"packets"`          // packets offered to the link
	Bytes          int64 `json:"bytes"`            // bytes offered to the link
	Delivered      int64 `json:"delivered"`        // packets delivered
	DroppedLoss    int64 `json:"dropped_loss"`     // packets dropped by the loss process
	DroppedQueue   int64 `json:"dropped_queue"`    // packets dropped because the queue was full
	PeakQueueBytes int64 `json:"peak_queue_bytes"` // largest queue occupancy seen, in bytes, including the arriving packet
}

// Direction is the state of one direction of a link. It is not safe for
// concurrent use: one goroutine owns it.
type Direction struct {
	cfg Config
	rng *rand.Rand
	// busyUntil is when the bottleneck finishes transmitting the last
	// accepted packet.
	busyUntil time.Time
	// lastDelivery keeps deliveries in order when callers' clocks jitter.
	lastDelivery time.Time
	stats        Stats
}

// New returns a Direction for cfg, or an error if cfg is invalid.
func New(cfg Config) (*Direction, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Direction{
		cfg: cfg,
		rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
	}, nil
}

// Config returns the configuration of d.
func (d *Direction) Config() Config { return d.cfg }

// Stats returns the counters of d so far.
func (d *Direction) Stats() Stats { return d.stats }

// Send offers a packet of size bytes to the link at time now. It returns the
// verdict and, for a delivered packet, the time at which it leaves the far
// end of the link. Delivery times never decrease, so packets stay in order.
func (d *Direction) Send(now time.Time, size int) (deliverAt time.Time, v Verdict) {
	d.stats.Packets++
	d.stats.Bytes += int64(size)
	if d.cfg.Loss > 0 && d.rng.Float64() < d.cfg.Loss {
		d.stats.DroppedLoss++
		return time.Time{}, DroppedLoss
	}
	departure := now
	if rate := d.cfg.RateBitsPerSecond; rate > 0 {
		start := now
		var backlog int64 // bytes still at the bottleneck
		if d.busyUntil.After(now) {
			start = d.busyUntil
			backlog = bytesAt(d.busyUntil.Sub(now), rate)
		}
		occupancy := backlog + int64(size)
		if backlog > 0 && d.cfg.QueueBytes > 0 && occupancy > d.cfg.QueueBytes {
			d.stats.DroppedQueue++
			return time.Time{}, DroppedQueue
		}
		d.stats.PeakQueueBytes = max(d.stats.PeakQueueBytes, occupancy)
		departure = start.Add(TransmissionTime(size, rate))
		d.busyUntil = departure
	}
	deliverAt = departure.Add(d.cfg.Delay)
	if deliverAt.Before(d.lastDelivery) {
		deliverAt = d.lastDelivery
	}
	d.lastDelivery = deliverAt
	d.stats.Delivered++
	return deliverAt, Delivered
}

// TransmissionTime is how long a packet of size bytes occupies a bottleneck
// of rate bit/s, rounded up to the nanosecond.
func TransmissionTime(size int, rate int64) time.Duration {
	bits := int64(size) * 8
	ns := (bits*int64(time.Second) + rate - 1) / rate
	return time.Duration(ns)
}

// bytesAt is how many bytes a bottleneck of rate bit/s transmits in d.
func bytesAt(d time.Duration, rate int64) int64 {
	return int64(math.Ceil(float64(d) * float64(rate) / 8 / float64(time.Second)))
}
