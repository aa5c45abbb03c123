package emulator

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// pollSource is the source of a real device. Its loop waits for the device,
// an eventfd that Stop writes, and a timerfd armed for the next delivery (an
// hrtimer with no slack) through a private epoll instance that Go's own
// network poller watches: a waiting loop parks its goroutine like any
// network read, holding no thread and no P, so an idle link costs nothing
// and the runtime never has to take a P back from a thread blocked in a
// system call (which made its monitor poll every 20 µs: most of the
// emulator's CPU at light load when each direction had locked threads
// waiting in poll and nanosleep). The loop reads and writes the
// non-blocking descriptors itself.
type pollSource struct {
	src, dst int
	wakeFD   int // eventfd: readable once Stop wants the loop to end
	timerFD  int // armed for the next delivery, less the lateness
	armed    time.Time
	epoll    *os.File // the private epoll instance, in Go's poller
	conn     syscall.RawConn
	events   [4]unix.EpollEvent
	nready   int
	poll     func(fd uintptr) bool // s.pollReady, bound once
	late     lateness

	mu     sync.Mutex // orders wake and close
	closed bool
}

func newPollSource(src, dst int) (s *pollSource, err error) {
	s = &pollSource{src: src, dst: dst, wakeFD: -1, timerFD: -1, late: lateness{est: initialLateness}}
	s.poll = s.pollReady
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if s.wakeFD, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		return nil, fmt.Errorf("emulator: eventfd: %w", err)
	}
	if s.timerFD, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC); err != nil {
		return nil, fmt.Errorf("emulator: timerfd: %w", err)
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("emulator: epoll: %w", err)
	}
	for _, fd := range []int{src, s.wakeFD, s.timerFD} {
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
		if err = unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
			unix.Close(epfd)
			return nil, fmt.Errorf("emulator: epoll_ctl: %w", err)
		}
	}
	if err = unix.SetNonblock(epfd, true); err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("emulator: epoll non-blocking: %w", err)
	}
	s.epoll = os.NewFile(uintptr(epfd), "emulator-epoll")
	if s.conn, err = s.epoll.SyscallConn(); err != nil {
		return nil, fmt.Errorf("emulator: epoll: %w", err)
	}
	return s, nil
}

// wake makes the loop end at its next look.
func (s *pollSource) wake() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		one := [8]byte{1}
		_, _ = unix.Write(s.wakeFD, one[:])
	}
}

// close releases the descriptors the source made (not the devices').
func (s *pollSource) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	if s.epoll != nil {
		s.epoll.Close()
	}
	for _, fd := range []int{s.wakeFD, s.timerFD} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

func (s *pollSource) wait(until time.Time) bool {
	if !until.IsZero() {
		now := time.Now()
		target := until.Add(-s.late.early())
		if !target.After(now) {
			return true
		}
		s.arm(now, target)
	}
	if err := s.conn.Read(s.poll); err != nil {
		return false
	}
	for _, ev := range s.events[:s.nready] {
		switch int(ev.Fd) {
		case s.wakeFD:
			return false
		case s.timerFD:
			s.late.observe(time.Since(s.armed))
			var ticks [8]byte
			_, _ = rawRead(s.timerFD, ticks[:])
			s.armed = time.Time{}
		case s.src:
			if ev.Events&(unix.EPOLLERR|unix.EPOLLHUP) != 0 {
				return false
			}
		}
	}
	return true
}

// pollReady takes what the private epoll instance has ready without
// blocking; false parks the goroutine until Go's poller sees it ready.
func (s *pollSource) pollReady(fd uintptr) bool {
	n, err := rawEpollPoll(int(fd), s.events[:])
	if err != nil || n <= 0 {
		return false // nothing ready (or EINTR)
	}
	s.nready = n
	return true
}

// arm sets the timer for target unless it is already set for it.
func (s *pollSource) arm(now, target time.Time) {
	if target.Equal(s.armed) {
		return
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(target.Sub(now)))}
	if rawTimerfdSettime(s.timerFD, &spec) == nil {
		s.armed = target
	}
}

func (s *pollSource) read(buf []byte) (int, bool) {
	for {
		n, err := rawRead(s.src, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return n, err == nil && n > 0
	}
}

func (s *pollSource) write(pkt []byte) error {
	_, err := rawWrite(s.dst, pkt)
	return err
}

func (s *pollSource) early() time.Duration { return s.late.early() }

// lateness is a running median of how late timed waits wake, in steps of
// 1 µs: from the timer's expiry to the loop running again (~90 µs on this
// kind of virtual machine). The loop asks to wake that much early and
// delivers what is due by then: deliveries straddle their times, a median
// error near zero. Spinning to the exact time was tried first: exact to ~1 µs, but it
// cost 140 % of a core at 100 Mbit/s, where packets are 120 µs apart.
type lateness struct {
	est time.Duration
}

// initialLateness is the starting estimate, measured on the 2-core VMs.
const initialLateness = 90 * time.Microsecond

// maxLateness caps the estimate: a busy machine must not make the loop
// wake, and deliver, far too early.
const maxLateness = 250 * time.Microsecond

// latenessStep is how far one wake-up moves the running median.
const latenessStep = time.Microsecond

// observe moves the estimate towards one wake-up's lateness.
func (l *lateness) observe(late time.Duration) {
	if late > l.est {
		l.est = min(l.est+latenessStep, maxLateness)
	} else {
		l.est = max(l.est-latenessStep, 0)
	}
}

func (l *lateness) early() time.Duration { return l.est }
