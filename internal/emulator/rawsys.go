package emulator

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The packet path's system calls never block (non-blocking descriptors, a
// zero epoll timeout, a timer setting), so they go in directly, without the
// runtime's syscall bookkeeping: an ordinary call first wakes the runtime's
// monitor if it sleeps, and the monitor then polls every 20 µs until the
// process idles again; with one wake-up per packet event that was a third of
// the emulator's CPU at light load. The loop blocks only in Go's poller.

// rawRead reads from a non-blocking descriptor.
func rawRead(fd int, buf []byte) (int, error) { return rawIO(unix.SYS_READ, fd, buf) }

// rawWrite writes to a descriptor that does not block.
func rawWrite(fd int, buf []byte) (int, error) { return rawIO(unix.SYS_WRITE, fd, buf) }

// rawIO is read(2) or write(2) of buf on fd.
func rawIO(trap uintptr, fd int, buf []byte) (int, error) {
	if len(buf) == 0 {
		return 0, nil
	}
	n, _, errno := unix.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// rawEpollPoll returns the ready events of an epoll instance without
// waiting.
func rawEpollPoll(epfd int, events []unix.EpollEvent) (int, error) {
	n, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// rawTimerfdSettime arms (or disarms) a timerfd.
func rawTimerfdSettime(fd int, spec *unix.ItimerSpec) error {
	_, _, errno := unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, uintptr(fd), 0, uintptr(unsafe.Pointer(spec)), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
