// Package emulator moves packets between the client TUN and the servers TUN
// through a link model per direction, delivering each packet at the time the
// model gives with a precise timer.
package emulator

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/tun"
)

// Config is the link in both directions.
type Config struct {
	// Up is the direction client → servers.
	Up link.Config
	// Down is the direction servers → client.
	Down link.Config
}

// Validate reports an invalid direction.
func (c Config) Validate() error {
	if err := c.Up.Validate(); err != nil {
		return fmt.Errorf("uplink: %w", err)
	}
	if err := c.Down.Validate(); err != nil {
		return fmt.Errorf("downlink: %w", err)
	}
	return nil
}

// Options tune how the emulator waits. The zero value is what real runs use.
type Options struct {
	// SleepUntil blocks until the given time. Zero: nanosleep then a short
	// spin, on a locked OS thread with 1 ns timer slack (time.Sleep is ~1 ms
	// late; nanosleep alone ~0.1 ms).
	// Tests inside a testing/synctest bubble pass a time.Sleep-based one.
	SleepUntil func(t time.Time)
	// LockThread locks each delivery goroutine to its thread and sets the
	// thread's timer slack to 1 ns. Zero value false is for tests; Start
	// sets it for real runs when SleepUntil is nil.
	LockThread bool
}

// queueCapacity is how many accepted packets may wait for delivery in one
// direction: 1 Gbit/s × 200 ms of 1500-byte packets fits.
const queueCapacity = 1 << 15

// Stats is what one direction did.
type Stats struct {
	link.Stats
	// Overflow counts packets dropped because the delivery queue
	// (queueCapacity) was full: a sign that the configuration exceeds
	// what the emulator can hold, never expected in a valid run.
	Overflow int64 `json:"overflow"`
	// WriteErrors counts packets the far device refused.
	WriteErrors int64 `json:"write_errors"`
}

// Emulator forwards packets between two devices until they are closed.
type Emulator struct {
	up, down *direction
	wg       sync.WaitGroup
	pollers  sync.WaitGroup // readers that poll raw descriptors
	stop     atomic.Bool
}

// lockedThreads is how many goroutines a real emulator locks to threads:
// a reader and a deliverer per direction.
const lockedThreads = 4

// Start validates cfg and starts forwarding between client and servers. Call
// Stop, close both devices, then call Wait.
//
// For real devices Start raises GOMAXPROCS to at least the number of CPUs
// plus the emulator's four locked threads. With GOMAXPROCS at the CPU count
// (2 here), a locked thread returning from nanosleep or poll waited for a P
// held by another one: with several packets in flight, 21 of 100 probes of a
// 40 ms RTT came back more than 1 ms late, and none with 8 Ps. The kernel
// shares the CPUs among the threads with far less delay than Go's handoff.
func Start(client, servers tun.Device, cfg Config, opt Options) (*Emulator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opt.SleepUntil == nil {
		if want := runtime.NumCPU() + lockedThreads; runtime.GOMAXPROCS(0) < want {
			runtime.GOMAXPROCS(want)
		}
	}
	precise := opt.SleepUntil == nil
	upOpt, downOpt := opt, opt
	if precise {
		upOpt.SleepUntil = (&preciseSleeper{oversleep: initialOversleep}).sleepUntil
		downOpt.SleepUntil = (&preciseSleeper{oversleep: initialOversleep}).sleepUntil
		upOpt.LockThread, downOpt.LockThread = true, true
	}
	up, err := newDirection(client, servers, cfg.Up, upOpt)
	if err != nil {
		return nil, err
	}
	down, err := newDirection(servers, client, cfg.Down, downOpt)
	if err != nil {
		return nil, err
	}
	e := &Emulator{up: up, down: down}
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
		e.wg.Go(d.deliver)
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

type packet struct {
	deliverAt time.Time
	buf       *[]byte
	n         int
}

type direction struct {
	src, dst tun.Device
	opt      Options

	mu    sync.Mutex // guards model
	model *link.Direction

	queue       chan packet
	stopping    atomic.Bool
	overflow    atomic.Int64
	writeErrors atomic.Int64
	pool        sync.Pool
}

func newDirection(src, dst tun.Device, cfg link.Config, opt Options) (*direction, error) {
	model, err := link.New(cfg, time.Now())
	if err != nil {
		return nil, err
	}
	d := &direction{src: src, dst: dst, opt: opt, model: model, queue: make(chan packet, queueCapacity)}
	d.pool.New = func() any { b := make([]byte, tun.MTU+64); return &b }
	return d, nil
}

func (d *direction) stats() Stats {
	d.mu.Lock()
	s := d.model.Stats()
	d.mu.Unlock()
	return Stats{Stats: s, Overflow: d.overflow.Load(), WriteErrors: d.writeErrors.Load()}
}

// read takes packets from src, asks the model, and queues the delivered ones.
func (d *direction) read() {
	defer close(d.queue)
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

// readPolling is read for a real device: it waits in poll(2) on a locked
// thread of its own, which wakes sooner than the Go poller, and reads the
// non-blocking descriptor until it is empty. It returns once stop is set.
func (d *direction) readPolling(fd int, stop *atomic.Bool) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer close(d.queue)
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

// accept asks the model about a packet read at now and queues it if it is
// delivered.
func (d *direction) accept(now time.Time, buf *[]byte, n int) {
	d.mu.Lock()
	at, verdict := d.model.Send(now, n)
	d.mu.Unlock()
	if verdict != link.Delivered {
		d.pool.Put(buf)
		return
	}
	select {
	case d.queue <- packet{deliverAt: at, buf: buf, n: n}:
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

// deliver writes queued packets to dst at their delivery times. Delivery
// times never decrease (the model guarantees it), so a FIFO is exact.
func (d *direction) deliver() {
	if d.opt.LockThread {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		// Timer slack is per thread: 1 ns makes nanosleep wake on time.
		_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	}
	for p := range d.queue {
		if !d.stopping.Load() {
			d.opt.SleepUntil(p.deliverAt)
			if _, err := d.dst.Write((*p.buf)[:p.n]); err != nil && !errors.Is(err, unix.EBADF) {
				d.writeErrors.Add(1)
			}
		}
		d.pool.Put(p.buf)
	}
}

// preciseSleeper sleeps until a deadline within about a microsecond. On this
// kind of virtual machine nanosleep with 1 ns timer slack still wakes 50 to
// 130 µs late, so it sleeps until the deadline minus an estimate of that
// oversleep and spins the rest. The estimate rises fast and decays slowly, so
// most wakes land before the deadline. One per delivery goroutine.
type preciseSleeper struct {
	oversleep time.Duration // estimated nanosleep lateness
}

// initialOversleep is the starting estimate, measured on the 2-core VMs.
const initialOversleep = 100 * time.Microsecond

// maxOversleep caps the estimate, so that one late wake (a busy machine)
// does not make every later delivery spin for milliseconds, which on two
// cores starves the very threads that need the CPU.
const maxOversleep = 250 * time.Microsecond

func (s *preciseSleeper) sleepUntil(t time.Time) {
	target := t.Add(-s.oversleep)
	if left := time.Until(target); left > 0 {
		ts := unix.NsecToTimespec(int64(left))
		_ = unix.Nanosleep(&ts, nil)
		over := time.Since(target)
		if over > s.oversleep {
			s.oversleep += (over - s.oversleep) / 4
		} else {
			s.oversleep -= (s.oversleep - over) / 64
		}
		s.oversleep = min(max(s.oversleep, 5*time.Microsecond), maxOversleep)
	}
	for time.Now().Before(t) {
	}
}

// Sub returns the counts of s minus those of earlier, for the traffic of an
// interval. Peaks are kept from s: call ResetPeaks when the interval starts.
func (s Stats) Sub(earlier Stats) Stats {
	s.Packets -= earlier.Packets
	s.Bytes -= earlier.Bytes
	s.Delivered -= earlier.Delivered
	s.DroppedLoss -= earlier.DroppedLoss
	s.DroppedQueue -= earlier.DroppedQueue
	s.Overflow -= earlier.Overflow
	s.WriteErrors -= earlier.WriteErrors
	return s
}

// ResetPeaks restarts the peak queue counters of both directions.
func (e *Emulator) ResetPeaks() {
	for _, d := range []*direction{e.up, e.down} {
		d.mu.Lock()
		d.model.ResetPeaks()
		d.mu.Unlock()
	}
}
