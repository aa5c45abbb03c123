// Package emulator moves packets between the client TUN and the servers TUN
// through a link model per direction, delivering each packet at the time the
// model gives with a precise timer. Optional per-server paths add delay and
// loss beyond the shared bottleneck, for servers at different distances.
package emulator

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/pcap"
	"github.com/quicbench/quicbench/internal/tun"
)

// Config is the link in both directions.
type Config struct {
	// Up is the direction client → servers.
	Up link.Config `json:"up"`
	// Down is the direction servers → client.
	Down link.Config `json:"down"`
	// Paths add delay and loss towards some server addresses, beyond the
	// shared link. Packets to other addresses take the link alone.
	Paths []Path `json:"paths,omitempty"`
	// UDP is what the network does to UDP to or from port QUICPort in
	// both directions (QUIC blocked or throttled); the zero value passes
	// it.
	UDP link.UDPPolicy `json:"udp,omitzero"`
}

// Path is the extra way between the shared link and one server address: a
// server farther away, or behind a lossier network. Its loss is decided
// before the shared link (a lost packet takes no capacity), its delay is
// added after it.
type Path struct {
	// Server is the server's address in the servers namespace.
	Server netip.Addr `json:"server"`
	// RTT is the extra round-trip delay, split evenly between directions.
	RTT time.Duration `json:"rtt_ns"`
	// Loss is the extra loss probability in each direction, 0 to 1.
	Loss float64 `json:"loss"`
}

// Validate reports an invalid path. The directions are link.New's to
// check (users' networks were checked when netconf resolved them).
func (c Config) Validate() error {
	seen := map[netip.Addr]bool{}
	for _, p := range c.Paths {
		switch {
		case !p.Server.Is4():
			return fmt.Errorf("path to %v: the server must be an IPv4 address", p.Server)
		case seen[p.Server]:
			return fmt.Errorf("path to %v is given twice", p.Server)
		case p.RTT < 0:
			return fmt.Errorf("path to %v: extra RTT %v is negative", p.Server, p.RTT)
		case p.Loss < 0 || p.Loss > 1 || p.Loss != p.Loss:
			return fmt.Errorf("path to %v: loss %v is outside [0, 1]", p.Server, p.Loss)
		}
		seen[p.Server] = true
	}
	return nil
}

// Options tune how the emulator delivers. The zero value delivers every
// packet at its own time, as unit tests want; real runs use
// DefaultOptions.
type Options struct {
	// Coalesce lets a packet that is due take along the packets due within
	// this window after it, delivered up to that much early, so that a
	// fast link wakes the emulator once per window instead of once per
	// packet. A packet alone is never early. 0 to MaxCoalesce.
	Coalesce time.Duration
}

// DefaultCoalesce is the coalescing window of real runs: at 100 Mbit/s
// (a 1500-byte packet every 120 µs) it halves the emulator's CPU and moves
// no packet more than a quarter of a millisecond; Mahimahi delivers in
// whole milliseconds.
const DefaultCoalesce = 250 * time.Microsecond

// MaxCoalesce bounds Options.Coalesce.
const MaxCoalesce = time.Millisecond

// DefaultOptions are the options of real runs.
func DefaultOptions() Options { return Options{Coalesce: DefaultCoalesce} }

// queueCapacity is how many accepted packets may wait for delivery on one
// path: 1 Gbit/s × 200 ms of 1500-byte packets fits.
const queueCapacity = 1 << 15

// Stats is what one direction did.
type Stats struct {
	link.Stats
	// DroppedPath counts packets lost on per-server paths.
	DroppedPath int64 `json:"dropped_path"`
	// DroppedUDP counts UDP packets the network's UDP policy dropped
	// (Config.UDP), before the link.
	DroppedUDP int64 `json:"dropped_udp"`
	// Overflow counts packets dropped because a delivery queue
	// (queueCapacity) was full: a sign that the configuration exceeds what
	// the emulator can hold, never expected in a valid run.
	Overflow int64 `json:"overflow"`
	// WriteErrors counts packets the far device refused.
	WriteErrors int64 `json:"write_errors"`
	// WrittenBytes counts the bytes of the packets written to the far
	// device, when they left the link: at most its rate over time.
	WrittenBytes int64 `json:"written_bytes"`
}

// Sub returns the counts of s minus those of earlier, for the traffic of an
// interval. Peaks are kept from s: call ResetPeaks when the interval starts.
func (s Stats) Sub(earlier Stats) Stats {
	s.Packets -= earlier.Packets
	s.Bytes -= earlier.Bytes
	s.Delivered -= earlier.Delivered
	s.DroppedLoss -= earlier.DroppedLoss
	s.DroppedQueue -= earlier.DroppedQueue
	s.DroppedPath -= earlier.DroppedPath
	s.DroppedUDP -= earlier.DroppedUDP
	s.Overflow -= earlier.Overflow
	s.WriteErrors -= earlier.WriteErrors
	s.WrittenBytes -= earlier.WrittenBytes
	return s
}

// Emulator forwards packets between two devices until they are closed.
type Emulator struct {
	up, down *direction
	wg       sync.WaitGroup
	pollers  sync.WaitGroup // loops that poll raw descriptors
	stopOnce sync.Once
	wakers   []*pollSource // the polling loops' sources, woken by Stop
	capture  atomic.Pointer[pcap.Writer]
	// packetLog, when set, notes every packet's fate (SetPacketLog).
	packetLog atomic.Pointer[PacketLog]
	// quietMu guards quietAt: the packet count when AwaitIdle last saw
	// the link idle, and the time from which it had been.
	quietMu sync.Mutex
	quietAt idleMark
}

// idleMark is a moment the link was seen idle: packets read until then,
// and since when none had been.
type idleMark struct {
	packets int64
	since   time.Time
}

// SetCapture starts recording the client side's packets to w, as the client
// sees them: what it sends (before any loss) and what it receives, at the
// time it does; nil stops recording. Writing adds a copy to each packet's
// path, so measured runs leave it off.
func (e *Emulator) SetCapture(w *pcap.Writer) { e.capture.Store(w) }

// DropFlightStart makes the downlink drop, once and on top of the link's
// own losses, the first full-size packet (of at least forcedDropMin
// bytes: a data packet, not an acknowledgement) of the flights-th flight
// from now, flights beginning where full-size packets follow a gap of at
// least gap, or the packets-th full-size packet from now if that comes
// first (a sender that paces over the whole round trip leaves no gap; a
// gap of 0 drops the packets-th); flights 0 disarms it. The packet log
// notes the drop like any other. A stack calibration drops the first
// packet of a response's second flight this way: the loss comes at the
// start of a round trip, before acknowledgements of that round grow the
// window, so the round after it shows the share of its window the
// congestion control kept.
func (e *Emulator) DropFlightStart(flights int, gap time.Duration, packets int) {
	d := e.down
	d.mu.Lock()
	d.flightDrop = flightDrop{flights: flights, gap: gap, packets: packets}
	d.mu.Unlock()
	d.dropArmed.Store(flights > 0)
}

// SuspendLoss keeps the links' and the paths' random losses from dropping
// packets, both ways, while on (link.Direction.SuspendLoss): a stack's
// calibration then sees only the drop it asks for (DropFlightStart).
func (e *Emulator) SuspendLoss(on bool) {
	for _, d := range []*direction{e.up, e.down} {
		d.mu.Lock()
		d.model.SuspendLoss(on)
		d.pathLossOff = on
		d.mu.Unlock()
	}
}

// Start validates cfg and starts forwarding between client and servers: one
// goroutine per direction reads its source, asks the model, and delivers
// each packet at its time. Call Stop, close both devices, then call Wait.
//
// For a real device the goroutine waits in Go's network poller for the
// device or the next delivery (pollSource), and does every read and write
// itself: no channel, no wake-up of another goroutine per packet. Start
// raises GOMAXPROCS to the number of CPUs plus two, so that a woken loop
// finds a free P even when both CPUs run other goroutines.
func Start(client, servers tun.Device, cfg Config, opt Options) (*Emulator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opt.Coalesce < 0 || opt.Coalesce > MaxCoalesce {
		return nil, fmt.Errorf("coalescing window %v is outside 0 to %v", opt.Coalesce, MaxCoalesce)
	}
	up, err := newDirection(client, servers, cfg.Up, cfg.Paths, true, opt)
	if err != nil {
		return nil, fmt.Errorf("uplink: %w", err)
	}
	down, err := newDirection(servers, client, cfg.Down, cfg.Paths, false, opt)
	if err != nil {
		return nil, fmt.Errorf("downlink: %w", err)
	}
	e := &Emulator{up: up, down: down}
	if !cfg.UDP.Passes() {
		udp := link.NewUDPFilter(cfg.UDP)
		up.udp, down.udp = udp, udp
	}
	up.capture, down.capture = &e.capture, &e.capture
	up.packetLog, down.packetLog = &e.packetLog, &e.packetLog
	sources, err := e.sources()
	if err != nil {
		return nil, err
	}
	for i, d := range []*direction{up, down} {
		src := sources[i]
		if ps, ok := src.(*pollSource); ok {
			e.pollers.Add(1)
			e.wg.Go(func() {
				defer e.pollers.Done()
				defer ps.close()
				d.run(ps)
			})
			continue
		}
		e.wg.Go(func() { d.run(src) })
	}
	return e, nil
}

// sources returns each direction's source: a polling one for a device with
// a descriptor, a channel-fed one otherwise.
func (e *Emulator) sources() ([]source, error) {
	var out []source
	for _, d := range []*direction{e.up, e.down} {
		srcFD, ok1 := rawFD(d.src)
		dstFD, ok2 := rawFD(d.dst)
		if !ok1 || !ok2 {
			out = append(out, newChanSource(d.src, d.dst))
			continue
		}
		ps, err := newPollSource(srcFD, dstFD)
		if err != nil {
			for _, w := range e.wakers {
				w.close()
			}
			return nil, err
		}
		e.wakers = append(e.wakers, ps)
		out = append(out, ps)
	}
	if len(e.wakers) > 0 {
		if want := runtime.NumCPU() + len(e.wakers); runtime.GOMAXPROCS(0) < want {
			runtime.GOMAXPROCS(want)
		}
	}
	return out, nil
}

// Stop makes the loops of real devices stop and returns when they have, so
// the devices can be closed safely; packets still waiting are dropped. Loops
// of other devices stop when their device is closed. Call Stop, close the
// devices, then Wait.
func (e *Emulator) Stop() {
	e.stopOnce.Do(func() {
		for _, w := range e.wakers {
			w.wake()
		}
	})
	e.pollers.Wait()
}

// Wait returns when forwarding has stopped in both directions: after Stop
// and after the devices are closed.
func (e *Emulator) Wait() { e.wg.Wait() }

// Compensate makes every packet accepted from now on leave the uplink up
// and the downlink down earlier than its model says, never before it was
// read: the emulator's own forwarding latency (TUN crossings, wake-ups),
// measured when a run starts, taken off the configured delays. Call it
// while the link is idle. Negative durations count as zero.
func (e *Emulator) Compensate(up, down time.Duration) {
	e.up.offset.Store(int64(max(up, 0)))
	e.down.offset.Store(int64(max(down, 0)))
}

// Compensation returns what Compensate set for the uplink and downlink.
func (e *Emulator) Compensation() (up, down time.Duration) {
	return time.Duration(e.up.offset.Load()), time.Duration(e.down.offset.Load())
}

// Busy is how long the two directions' loops have worked, from their
// wake-ups to their next waits, since the start: the emulator's CPU time
// as its own clocks see it (time a loop was descheduled while working
// counts too, so it is an upper bound).
func (e *Emulator) Busy() time.Duration {
	return time.Duration(e.up.busy.Load() + e.down.busy.Load())
}

// Stats returns the counters of the uplink (client → servers) and downlink.
func (e *Emulator) Stats() (up, down Stats) { return e.up.stats(), e.down.stats() }

// WrittenBytes returns the bytes the uplink and the downlink have written
// to their far devices (Stats' WrittenBytes) without taking the
// directions' locks, which every packet takes: for readings during a load.
func (e *Emulator) WrittenBytes() (up, down int64) { return e.up.written.Load(), e.down.written.Load() }

// Waiting is how many packets the emulator holds: read from one device and
// not yet written to the other or dropped, both directions together.
func (e *Emulator) Waiting() int64 { return e.up.waiting.Load() + e.down.waiting.Load() }

// idlePoll is how often AwaitIdle looks at the link.
const idlePoll = 2 * time.Millisecond

// AwaitIdle waits until the link is idle: no packet held (Waiting) and none
// read from either device for quiet, as seen by polls idlePoll apart (so the
// quiet may be one poll shorter). A link that has read no packet since an
// earlier AwaitIdle saw it idle has been quiet since then, and that time
// counts. It reports whether the link went idle before ctx ended; it does
// not otherwise give up.
func (e *Emulator) AwaitIdle(ctx context.Context, quiet time.Duration) bool {
	tick := time.NewTicker(idlePoll)
	defer tick.Stop()
	seen, since := e.packetsRead(), time.Now()
	e.quietMu.Lock()
	if last := e.quietAt; last.packets == seen && !last.since.IsZero() {
		since = last.since
	}
	e.quietMu.Unlock()
	for {
		if n := e.packetsRead(); n != seen || e.Waiting() > 0 {
			seen, since = n, time.Now()
		} else if time.Since(since) >= quiet {
			e.quietMu.Lock()
			e.quietAt = idleMark{packets: seen, since: since}
			e.quietMu.Unlock()
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// packetsRead is how many packets the emulator has read from both devices.
func (e *Emulator) packetsRead() int64 {
	up, down := e.Stats()
	return up.Packets + down.Packets + up.DroppedPath + down.DroppedPath
}

// Reseed restarts the random numbers of the uplink from up and of the
// downlink from down (link.Direction.Reseed; per-server paths from seeds
// derived from them), so that loads started after equal Reseeds meet the
// same packet fates: the k-th packet of each direction is lost, or not,
// alike.
func (e *Emulator) Reseed(up, down uint64) {
	now := time.Now()
	for _, x := range []struct {
		d    *direction
		seed uint64
	}{{e.up, up}, {e.down, down}} {
		x.d.mu.Lock()
		x.d.model.Reseed(x.seed, now)
		for i, p := range x.d.paths[1:] {
			s := pathSeed(x.seed, i)
			p.rng = rand.New(rand.NewPCG(s, s>>1|1))
		}
		x.d.mu.Unlock()
	}
}

// pathSeed is the seed of per-server path i of a direction seeded seed.
func pathSeed(seed uint64, i int) uint64 { return seed ^ uint64(i+1)*0x9e3779b97f4a7c15 }

// ResetPeaks restarts the peak queue counters of both directions.
func (e *Emulator) ResetPeaks() {
	for _, d := range []*direction{e.up, e.down} {
		d.mu.Lock()
		d.model.ResetPeaks()
		d.mu.Unlock()
	}
}
