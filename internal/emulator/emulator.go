// Package emulator moves packets between the client TUN and the servers TUN
// through a link model per direction, delivering each packet at the time the
// model gives with a precise timer. Optional per-server paths add delay and
// loss beyond the shared bottleneck, for servers at different distances.
package emulator

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

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

// Options tune how the emulator waits. The zero value is what real runs use.
type Options struct {
	// SleepUntil blocks until the given time. Nil: for each delivery
	// thread, a locked OS thread with 1 ns timer slack that nanosleeps and
	// wakes early by its running median of nanosleep's lateness (~90 µs
	// here; time.Sleep is ~1 ms late).
	// Tests inside a testing/synctest bubble pass a time.Sleep-based one.
	SleepUntil func(t time.Time)
}

// queueCapacity is how many accepted packets may wait for delivery on one
// path: 1 Gbit/s × 200 ms of 1500-byte packets fits.
const queueCapacity = 1 << 15

// Stats is what one direction did.
type Stats struct {
	link.Stats
	// DroppedPath counts packets lost on per-server paths.
	DroppedPath int64 `json:"dropped_path"`
	// Overflow counts packets dropped because a delivery queue
	// (queueCapacity) was full: a sign that the configuration exceeds what
	// the emulator can hold, never expected in a valid run.
	Overflow int64 `json:"overflow"`
	// WriteErrors counts packets the far device refused.
	WriteErrors int64 `json:"write_errors"`
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
	s.Overflow -= earlier.Overflow
	s.WriteErrors -= earlier.WriteErrors
	return s
}

// Emulator forwards packets between two devices until they are closed.
type Emulator struct {
	up, down *direction
	wg       sync.WaitGroup
	pollers  sync.WaitGroup // readers that poll raw descriptors
	stop     atomic.Bool
	capture  atomic.Pointer[pcap.Writer]
}

// SetCapture starts recording the client side's packets to w, as the client
// sees them: what it sends (before any loss) and what it receives, at the
// time it does; nil stops recording. Writing adds a copy to each packet's
// path, so measured runs leave it off.
func (e *Emulator) SetCapture(w *pcap.Writer) { e.capture.Store(w) }

// Start validates cfg and starts forwarding between client and servers. Call
// Stop, close both devices, then call Wait.
//
// For real devices Start raises GOMAXPROCS to at least the number of CPUs
// plus the emulator's locked threads (a reader per direction and a deliverer
// per direction and path). With GOMAXPROCS at the CPU count (2 here), a
// locked thread returning from nanosleep or poll waited for a P held by
// another one: with several packets in flight, 21 of 100 probes of a 40 ms
// RTT came back more than 1 ms late, and none with 8 Ps. The kernel shares
// the CPUs among the threads with far less delay than Go's handoff.
func Start(client, servers tun.Device, cfg Config, opt Options) (*Emulator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	up, err := newDirection(client, servers, cfg.Up, cfg.Paths, true, opt)
	if err != nil {
		return nil, fmt.Errorf("uplink: %w", err)
	}
	down, err := newDirection(servers, client, cfg.Down, cfg.Paths, false, opt)
	if err != nil {
		return nil, fmt.Errorf("downlink: %w", err)
	}
	if opt.SleepUntil == nil {
		locked := 2 * (1 + len(up.paths))
		if want := runtime.NumCPU() + locked; runtime.GOMAXPROCS(0) < want {
			runtime.GOMAXPROCS(want)
		}
	}
	e := &Emulator{up: up, down: down}
	up.capture, down.capture = &e.capture, &e.capture
	for _, d := range []*direction{up, down} {
		if fd, ok := rawFD(d.src); ok {
			e.pollers.Add(1)
			e.wg.Go(func() {
				defer e.pollers.Done()
				d.readPolling(fd, &e.stop)
			})
		} else {
			e.wg.Go(d.read)
		}
		for _, p := range d.paths {
			e.wg.Go(func() { d.deliver(p) })
		}
	}
	return e, nil
}

// Stop makes the readers of real devices stop and returns when they have,
// so the devices can be closed safely. Readers of other devices stop when
// their device is closed. Call Stop, close the devices, then Wait.
func (e *Emulator) Stop() {
	e.stop.Store(true)
	e.pollers.Wait()
}

// Wait returns when forwarding has stopped in both directions: after Stop
// and after the devices are closed.
func (e *Emulator) Wait() { e.wg.Wait() }

// Stats returns the counters of the uplink (client → servers) and downlink.
func (e *Emulator) Stats() (up, down Stats) { return e.up.stats(), e.down.stats() }

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

type packet struct {
	deliverAt time.Time
	buf       *[]byte
	n         int
	// slot, under drop-head, moves the delivery earlier or drops the
	// packet after it was queued; nil under drop-tail.
	slot *link.Slot
}

// when is the packet's delivery time now.
func (p packet) when() time.Time {
	if p.slot == nil {
		return p.deliverAt
	}
	return p.deliverAt.Add(p.slot.Shift())
}

// path is one delivery queue of a direction: paths[0] is the shared link
// alone; the others add a per-server delay and loss.
type path struct {
	extraDelay time.Duration
	loss       float64
	rng        *rand.Rand // guarded by direction.mu
	queue      chan packet
}

type direction struct {
	src, dst tun.Device
	opt      Options
	// up says which address of a packet names its server: the destination
	// on the uplink, the source on the downlink.
	up bool

	mu          sync.Mutex // guards model, the paths' generators, droppedPath
	model       *link.Direction
	droppedPath int64

	paths  []*path
	byAddr map[[4]byte]*path

	stopping    atomic.Bool
	overflow    atomic.Int64
	writeErrors atomic.Int64
	pool        sync.Pool
	// capture is the emulator's: the uplink records what it reads from the
	// client, the downlink what it writes to the client.
	capture *atomic.Pointer[pcap.Writer]
}

func newDirection(src, dst tun.Device, cfg link.Config, paths []Path, up bool, opt Options) (*direction, error) {
	model, err := link.New(cfg, time.Now())
	if err != nil {
		return nil, err
	}
	d := &direction{src: src, dst: dst, opt: opt, up: up, model: model, byAddr: map[[4]byte]*path{}}
	d.paths = append(d.paths, &path{queue: make(chan packet, queueCapacity)})
	for i, p := range paths {
		seed := pathSeed(cfg.Seed, i)
		pp := &path{extraDelay: p.RTT / 2, loss: p.Loss, rng: rand.New(rand.NewPCG(seed, seed>>1|1)), queue: make(chan packet, queueCapacity)}
		if !up {
			pp.extraDelay = p.RTT - p.RTT/2
		}
		d.paths = append(d.paths, pp)
		d.byAddr[p.Server.As4()] = pp
	}
	d.pool.New = func() any { b := make([]byte, tun.MTU+64); return &b }
	return d, nil
}

func (d *direction) stats() Stats {
	d.mu.Lock()
	s := Stats{Stats: d.model.Stats(), DroppedPath: d.droppedPath}
	d.mu.Unlock()
	s.Overflow, s.WriteErrors = d.overflow.Load(), d.writeErrors.Load()
	return s
}

// read takes packets from src, asks the model, and queues the delivered ones.
func (d *direction) read() {
	defer d.closeQueues()
	for {
		buf := d.pool.Get().(*[]byte)
		n, err := d.src.Read(*buf)
		if err != nil {
			d.pool.Put(buf)
			d.stopping.Store(true)
			return
		}
		d.accept(time.Now(), buf, n)
	}
}

func (d *direction) closeQueues() {
	for _, p := range d.paths {
		close(p.queue)
	}
}

// readPolling is read for a real device: it waits in poll(2) on a locked
// thread of its own, which wakes sooner than the Go poller, and reads the
// non-blocking descriptor until it is empty. It returns once stop is set.
func (d *direction) readPolling(fd int, stop *atomic.Bool) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer d.closeQueues()
	defer d.stopping.Store(true)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for !stop.Load() {
		n, err := unix.Poll(fds, pollTimeoutMs)
		if n <= 0 || err != nil {
			continue // timeout or EINTR: look at stop again
		}
		for !stop.Load() {
			buf := d.pool.Get().(*[]byte)
			k, err := unix.Read(fd, *buf)
			if err != nil || k <= 0 {
				d.pool.Put(buf)
				break // EAGAIN: drained
			}
			d.accept(time.Now(), buf, k)
		}
	}
}

// pollTimeoutMs bounds how long Stop waits for a polling reader, in ms.
const pollTimeoutMs = 20

// pathOf returns the path of an IPv4 packet: its server's, else the shared
// link's.
func (d *direction) pathOf(pkt []byte) *path {
	if len(d.byAddr) == 0 || len(pkt) < 20 || pkt[0]>>4 != 4 {
		return d.paths[0]
	}
	var addr [4]byte
	if d.up {
		copy(addr[:], pkt[16:20])
	} else {
		copy(addr[:], pkt[12:16])
	}
	if p, ok := d.byAddr[addr]; ok {
		return p
	}
	return d.paths[0]
}

// accept asks the path and the model about a packet read at now and queues
// it on its path if it is delivered.
func (d *direction) accept(now time.Time, buf *[]byte, n int) {
	if w := d.capture.Load(); w != nil && d.up {
		w.WritePacket(now, (*buf)[:n])
	}
	p := d.pathOf((*buf)[:n])
	d.mu.Lock()
	if p.loss > 0 && p.rng.Float64() < p.loss {
		d.droppedPath++
		d.mu.Unlock()
		d.pool.Put(buf)
		return
	}
	at, verdict, slot := d.model.SendTracked(now, n)
	d.mu.Unlock()
	if verdict != link.Delivered {
		d.pool.Put(buf)
		return
	}
	select {
	case p.queue <- packet{deliverAt: at.Add(p.extraDelay), buf: buf, n: n, slot: slot}:
	default:
		d.overflow.Add(1)
		d.pool.Put(buf)
	}
}

// rawFD returns the descriptor of a device that offers one.
func rawFD(dev tun.Device) (int, bool) {
	sc, ok := dev.(interface {
		SyscallConn() (syscall.RawConn, error)
	})
	if !ok {
		return 0, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, false
	}
	fd := -1
	if rc.Control(func(f uintptr) { fd = int(f) }) != nil || fd < 0 {
		return 0, false
	}
	return fd, true
}

// deliver writes a path's packets to dst at their delivery times. On one
// path, delivery times never decrease (the model guarantees it for the
// shared link, and the path adds a constant), so a FIFO is exact.
func (d *direction) deliver(p *path) {
	sleepUntil := d.opt.SleepUntil
	if sleepUntil == nil {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		// Timer slack is per thread: 1 ns makes nanosleep wake on time.
		_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
		sleepUntil = (&preciseSleeper{oversleep: initialOversleep}).sleepUntil
	}
	for pkt := range p.queue {
		if pkt.slot == nil {
			d.waitUntil(sleepUntil, pkt.deliverAt, stopRecheck)
			d.write(pkt)
			continue
		}
		// Under drop-head the time may move earlier, or the packet be
		// dropped, while we wait: look again at least every millisecond.
		for !d.stopping.Load() && !pkt.slot.Dropped() {
			at := pkt.when()
			if time.Until(at) <= dropHeadRecheck {
				sleepUntil(at)
				break
			}
			sleepUntil(time.Now().Add(dropHeadRecheck))
		}
		if pkt.slot.Dropped() {
			d.pool.Put(pkt.buf)
			continue
		}
		d.write(pkt)
	}
}

// dropHeadRecheck is how often a delivery thread looks again at a packet
// whose time a drop-head may move.
const dropHeadRecheck = time.Millisecond

// stopRecheck bounds one sleep of a delivery thread, so that stopping the
// emulator never waits for a far deadline (a packet behind a 1 bit/s link
// or a long gap of a trace): it costs one wake-up per 20 ms only while a
// packet waits longer than that.
const stopRecheck = 20 * time.Millisecond

// waitUntil sleeps until at, in sleeps of at most recheck, and returns
// early once the direction is stopping.
func (d *direction) waitUntil(sleepUntil func(time.Time), at time.Time, recheck time.Duration) {
	for !d.stopping.Load() {
		if time.Until(at) <= recheck {
			sleepUntil(at)
			return
		}
		sleepUntil(time.Now().Add(recheck))
	}
}

// write writes one packet to dst and returns its buffer to the pool.
func (d *direction) write(pkt packet) {
	if !d.stopping.Load() {
		if _, err := d.dst.Write((*pkt.buf)[:pkt.n]); err != nil && !errors.Is(err, unix.EBADF) {
			d.writeErrors.Add(1)
		}
		if w := d.capture.Load(); w != nil && !d.up {
			w.WritePacket(time.Now(), (*pkt.buf)[:pkt.n])
		}
	}
	d.pool.Put(pkt.buf)
}

// preciseSleeper sleeps until about a deadline, without spinning. On this
// kind of virtual machine nanosleep with 1 ns timer slack wakes a median
// ~90 µs late, so it asks to wake that much early and delivers as soon as it
// wakes: deliveries straddle the deadline, a median error near zero. The
// estimate is a running median of the lateness (steps of 1 µs). A spin to the
// exact deadline was tried first: exact to ~1 µs, but it cost 140 % of a core
// at 100 Mbit/s, where packets are only 120 µs apart. One per delivery thread.
type preciseSleeper struct {
	oversleep time.Duration // running median of nanosleep's lateness
}

// initialOversleep is the starting estimate, measured on the 2-core VMs.
const initialOversleep = 90 * time.Microsecond

// maxOversleep caps the estimate: a busy machine must not make the sleeper
// wake, and deliver, far too early.
const maxOversleep = 250 * time.Microsecond

// oversleepStep is how far one sleep moves the running median.
const oversleepStep = time.Microsecond

func (s *preciseSleeper) sleepUntil(t time.Time) {
	for {
		left := time.Until(t) - s.oversleep
		if left <= 0 {
			return
		}
		before := time.Now()
		ts := unix.NsecToTimespec(int64(left))
		if err := unix.Nanosleep(&ts, nil); err != nil {
			continue // interrupted: sleep the rest
		}
		if time.Since(before)-left > s.oversleep {
			s.oversleep = min(s.oversleep+oversleepStep, maxOversleep)
		} else {
			s.oversleep = max(s.oversleep-oversleepStep, 0)
		}
	}
}
