package emulator

import (
	"time"

	"github.com/quicbench/quicbench/internal/tun"
)

// chanSource is the source of a device without a descriptor (the fakes of
// unit tests): a goroutine reads the device into a channel, and waits use
// Go timers, so that tests run in a testing/synctest bubble.
type chanSource struct {
	packets <-chan []byte // closed when the device is
	held    []byte        // a packet taken by wait, not yet read
	dst     tun.Device
}

// chanSourceBuffer is how many packets the reading goroutine may hold.
const chanSourceBuffer = 1024

func newChanSource(src, dst tun.Device) *chanSource {
	ch := make(chan []byte, chanSourceBuffer)
	go func() {
		defer close(ch)
		for {
			buf := make([]byte, tun.MTU+64)
			n, err := src.Read(buf)
			if err != nil {
				return
			}
			ch <- buf[:n]
		}
	}()
	return &chanSource{packets: ch, dst: dst}
}

func (s *chanSource) wait(until time.Time) bool {
	if s.held != nil || len(s.packets) > 0 {
		return true
	}
	var timeout <-chan time.Time
	if !until.IsZero() {
		left := time.Until(until)
		if left <= 0 {
			return true
		}
		t := time.NewTimer(left)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case pkt, ok := <-s.packets:
		s.held = pkt
		return ok
	case <-timeout:
		return true
	}
}

func (s *chanSource) read(buf []byte) (int, bool) {
	if s.held != nil {
		n := copy(buf, s.held)
		s.held = nil
		return n, true
	}
	select {
	case pkt, ok := <-s.packets:
		return copy(buf, pkt), ok
	default:
		return 0, false
	}
}

func (s *chanSource) write(pkt []byte) error {
	_, err := s.dst.Write(pkt)
	return err
}

func (s *chanSource) early() time.Duration { return 0 }
