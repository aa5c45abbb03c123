package emulator

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/pcap"
	"github.com/quicbench/quicbench/internal/tun"
)

// source is how a direction's loop waits and moves packets: a real device
// through Go's poller (pollSource), or any Device through a channel.
type source interface {
	// wait blocks until a packet may be waiting to be read or until about
	// until (the zero time: no limit), and reports false once the loop
	// must stop (the emulator stopped, or the device closed).
	wait(until time.Time) bool
	// read copies the next waiting packet into buf without blocking and
	// returns its length; false when none is waiting.
	read(buf []byte) (int, bool)
	// write delivers one packet to the far device.
	write(pkt []byte) error
	// early is how long before its time a packet may be delivered: the
	// lateness of the source's wake-ups, so that deliveries straddle
	// their times instead of all coming late.
	early() time.Duration
}

// readBatch is how many packets a loop reads before it delivers what is
// due: a burst never delays a delivery by more than this many reads.
const readBatch = 64

type packet struct {
	deliverAt time.Time
	// readAt is when the link took the packet in; bottleneck the time it
	// waited in the bottleneck's queue and was sent at its rate.
	readAt     time.Time
	bottleneck time.Duration
	buf        *[]byte
	n          int
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
// alone; the others add a per-server delay and loss. On one path, delivery
// times never decrease (the model guarantees it for the shared link, a
// drop-head moves every packet behind its victim alike, and the path adds
// a constant), so a FIFO is exact.
type path struct {
	extraDelay time.Duration
	loss       float64
	rng        *rand.Rand // guarded by direction.mu
	queue      fifo       // the loop's alone
}

type direction struct {
	src, dst tun.Device
	// up says which address of a packet names its server: the destination
	// on the uplink, the source on the downlink.
	up bool
	// coalesce is Options.Coalesce.
	coalesce time.Duration

	mu          sync.Mutex // guards model, the paths' generators, droppedPath, pathLossOff
	model       *link.Direction
	droppedPath int64
	// pathLossOff keeps the paths' losses from dropping (SuspendLoss).
	pathLossOff bool

	// udp, if set, is the network's UDP policy, shared by both
	// directions; droppedUDP counts what it dropped in this one.
	udp        *link.UDPFilter
	droppedUDP atomic.Int64

	paths  []*path
	byAddr map[[4]byte]*path

	// offset (ns) is taken off every delivery time: Emulator.Compensate.
	offset      atomic.Int64
	overflow    atomic.Int64
	writeErrors atomic.Int64
	// written counts the bytes written to the far device.
	written atomic.Int64
	// waiting counts the packets queued on the paths: accepted, not yet
	// written or dropped.
	waiting atomic.Int64
	// busy (ns) is the time the loop spent working between its waits.
	busy atomic.Int64
	free []*[]byte // spare buffers, the loop's alone
	// capture is the emulator's: the uplink records what it reads from the
	// client, the downlink what it writes to the client.
	capture *atomic.Pointer[pcap.Writer]
	// packetLog is the emulator's: the fate of every packet, for the
	// load's breakdown.
	packetLog *atomic.Pointer[PacketLog]
	// dropArmed says a flight's first packet is to be dropped
	// (Emulator.DropFlightStart); flightDrop, guarded by mu, how.
	dropArmed  atomic.Bool
	flightDrop flightDrop
}

// flightDrop is an armed drop of the first packet of a flight: the
// flights still to begin before it (flights begin where full-size
// packets follow a gap of at least gap), and when the last full-size
// packet arrived.
type flightDrop struct {
	flights int
	gap     time.Duration
	last    time.Time
	// packets left before the drop comes anyway, where no gap began the
	// flight (a sender that paces over the whole round trip leaves none).
	packets int
}

// forcedDropMin is the smallest packet, in bytes with its IP header, that
// counts as a full-size data packet for a forced drop.
const forcedDropMin = 1000

// forcedDrop counts a packet of n bytes read at now against an armed
// flight drop and reports whether it is the one to drop.
func (d *direction) forcedDrop(now time.Time, n int) bool {
	if n < forcedDropMin || !d.dropArmed.Load() {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	f := &d.flightDrop
	if f.last.IsZero() || f.gap > 0 && now.Sub(f.last) >= f.gap {
		f.flights--
	}
	f.last = now
	f.packets--
	if f.flights > 0 && f.packets > 0 {
		return false
	}
	d.dropArmed.Store(false)
	return true
}

func newDirection(src, dst tun.Device, cfg link.Config, paths []Path, up bool, opt Options) (*direction, error) {
	model, err := link.New(cfg, time.Now())
	if err != nil {
		return nil, err
	}
	d := &direction{src: src, dst: dst, up: up, coalesce: opt.Coalesce, model: model, byAddr: map[[4]byte]*path{},
		capture: &atomic.Pointer[pcap.Writer]{}, packetLog: &atomic.Pointer[PacketLog]{}} // Start shares the emulator's
	d.paths = append(d.paths, &path{})
	for i, p := range paths {
		seed := pathSeed(cfg.Seed, i)
		pp := &path{extraDelay: p.RTT / 2, loss: p.Loss, rng: rand.New(rand.NewPCG(seed, seed>>1|1))}
		if !up {
			pp.extraDelay = p.RTT - p.RTT/2
		}
		d.paths = append(d.paths, pp)
		d.byAddr[p.Server.As4()] = pp
	}
	return d, nil
}

func (d *direction) stats() Stats {
	d.mu.Lock()
	s := Stats{Stats: d.model.Stats(), DroppedPath: d.droppedPath, DroppedUDP: d.droppedUDP.Load()}
	d.mu.Unlock()
	s.Overflow, s.WriteErrors, s.WrittenBytes = d.overflow.Load(), d.writeErrors.Load(), d.written.Load()
	return s
}

// run is the direction's loop: wait for a packet or the next delivery,
// read what is waiting, deliver what is due. Packets still queued when the
// source stops are dropped.
func (d *direction) run(src source) {
	for {
		if !src.wait(d.nextDelivery()) {
			return
		}
		woke := time.Now()
		for more := true; more; {
			more = d.readWaiting(src)
			d.deliverDue(src, d.horizon(time.Now().Add(src.early())))
		}
		d.busy.Add(int64(time.Since(woke)))
	}
}

// readWaiting reads up to readBatch waiting packets and reports whether
// more may be waiting.
func (d *direction) readWaiting(src source) bool {
	for range readBatch {
		buf := d.buffer()
		n, ok := src.read(*buf)
		if !ok {
			d.free = append(d.free, buf)
			return false
		}
		d.accept(time.Now(), buf, n)
	}
	return true
}

// buffer returns a spare packet buffer.
func (d *direction) buffer() *[]byte {
	if k := len(d.free); k > 0 {
		b := d.free[k-1]
		d.free = d.free[:k-1]
		return b
	}
	b := make([]byte, tun.MTU+64)
	return &b
}

// nextDelivery is the earliest delivery time among the paths' first
// packets; the zero time when none waits.
func (d *direction) nextDelivery() time.Time {
	var next time.Time
	for _, p := range d.paths {
		pkt, ok := p.queue.peek()
		if !ok {
			continue
		}
		if at := pkt.when(); next.IsZero() || at.Before(next) {
			next = at
		}
	}
	return next
}

// horizon is how far deliverDue goes when packets are due by due: with a
// packet that is due, the ones due within the coalescing window after it
// go too; when none is due, none goes.
func (d *direction) horizon(due time.Time) time.Time {
	if next := d.nextDelivery(); !next.IsZero() && !next.After(due) {
		return due.Add(d.coalesce)
	}
	return due
}

// deliverDue writes every packet due by horizon, path by path, and drops
// the ones a drop-head took.
func (d *direction) deliverDue(src source, horizon time.Time) {
	for _, p := range d.paths {
		for {
			pkt, ok := p.queue.peek()
			if !ok {
				break
			}
			if pkt.slot != nil && pkt.slot.Dropped() {
				p.queue.pop()
				d.waiting.Add(-1)
				d.dropQueued(pkt)
				continue
			}
			if pkt.when().After(horizon) {
				break
			}
			p.queue.pop()
			d.waiting.Add(-1)
			d.write(src, pkt)
		}
	}
}

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
	if d.forcedDrop(now, n) || d.udpDrop(now, (*buf)[:n]) {
		d.drop(now, 0, buf, n)
		return
	}
	p := d.pathOf((*buf)[:n])
	d.mu.Lock()
	if p.loss > 0 && p.rng.Float64() < p.loss && !d.pathLossOff {
		d.droppedPath++
		backlog := d.model.Backlog(now)
		d.mu.Unlock()
		d.drop(now, backlog, buf, n)
		return
	}
	at, verdict, slot := d.model.SendTracked(now, n)
	bottleneck := d.model.LastWait()
	if verdict != link.Delivered {
		bottleneck = d.model.Backlog(now)
	}
	d.mu.Unlock()
	if verdict != link.Delivered {
		d.drop(now, bottleneck, buf, n)
		return
	}
	if p.queue.len() >= queueCapacity {
		d.overflow.Add(1)
		d.drop(now, bottleneck, buf, n)
		return
	}
	at = at.Add(p.extraDelay - time.Duration(d.offset.Load()))
	if at.Before(now) {
		at = now // never before it was read
	}
	p.queue.push(packet{deliverAt: at, readAt: now, bottleneck: bottleneck, buf: buf, n: n, slot: slot})
	d.waiting.Add(1)
}

// udpDrop says whether the network's UDP policy drops pkt, read at now,
// and counts it if so; a packet that is not IPv4 UDP to or from QUICPort
// passes (the netcheck's probes use another port, as DNS does).
func (d *direction) udpDrop(now time.Time, pkt []byte) bool {
	if d.udp == nil || len(pkt) < 20 || pkt[0]>>4 != 4 || pkt[9] != 17 {
		return false
	}
	ihl := int(pkt[0]&0x0f) * 4
	if len(pkt) < ihl+4 {
		return false
	}
	var src, dst [6]byte
	copy(src[:4], pkt[12:16])
	copy(src[4:], pkt[ihl:ihl+2])
	copy(dst[:4], pkt[16:20])
	copy(dst[4:], pkt[ihl+2:ihl+4])
	if port(src) != QUICPort && port(dst) != QUICPort {
		return false
	}
	if !d.udp.Drop(now, link.FlowOf(src, dst), d.up, len(pkt)) {
		return false
	}
	d.droppedUDP.Add(1)
	return true
}

// QUICPort is the UDP port the network's UDP policy applies to: QUIC's,
// as networks that block QUIC block it.
const QUICPort = 443

// port is the port of an end of a flow.
func port(end [6]byte) int { return int(end[4])<<8 | int(end[5]) }

// write delivers one packet and keeps its buffer.
func (d *direction) write(src source, pkt packet) {
	if err := src.write((*pkt.buf)[:pkt.n]); err != nil {
		d.writeErrors.Add(1)
	} else {
		d.written.Add(int64(pkt.n))
	}
	if w := d.capture.Load(); w != nil && !d.up {
		w.WritePacket(time.Now(), (*pkt.buf)[:pkt.n])
	}
	if l := d.packetLog.Load(); l != nil {
		l.add(pkt.readAt, time.Now(), pkt.bottleneck, (*pkt.buf)[:pkt.n], !d.up, false)
	}
	d.free = append(d.free, pkt.buf)
}

// drop notes a packet the link dropped on arrival at now, which would
// have waited backlog at the bottleneck, and keeps its buffer.
func (d *direction) drop(now time.Time, backlog time.Duration, buf *[]byte, n int) {
	if l := d.packetLog.Load(); l != nil {
		l.add(now, now, backlog, (*buf)[:n], !d.up, true)
	}
	d.free = append(d.free, buf)
}

// dropQueued notes a queued packet a drop-head took, and keeps its buffer.
func (d *direction) dropQueued(pkt packet) {
	if l := d.packetLog.Load(); l != nil {
		l.add(pkt.readAt, time.Now(), pkt.bottleneck, (*pkt.buf)[:pkt.n], !d.up, true)
	}
	d.free = append(d.free, pkt.buf)
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

// fifo is a growable ring of packets.
type fifo struct {
	buf        []packet
	head, size int
}

func (q *fifo) len() int { return q.size }

func (q *fifo) peek() (packet, bool) {
	if q.size == 0 {
		return packet{}, false
	}
	return q.buf[q.head], true
}

func (q *fifo) pop() {
	q.buf[q.head] = packet{}
	q.head = (q.head + 1) % len(q.buf)
	q.size--
}

func (q *fifo) push(p packet) {
	if q.size == len(q.buf) {
		grown := make([]packet, max(16, 2*len(q.buf)))
		for i := range q.size {
			grown[i] = q.buf[(q.head+i)%len(q.buf)]
		}
		q.buf, q.head = grown, 0
	}
	q.buf[(q.head+q.size)%len(q.buf)] = p
	q.size++
}
