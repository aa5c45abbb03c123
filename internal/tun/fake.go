package tun

import (
	"io"
	"sync"
)

// Fake is an in-memory Device for tests. Packets given to Inject are returned
// by Read; packets passed to Write appear on Written.
type Fake struct {
	name    string
	in      chan []byte
	Written chan []byte // packets written to the device, in order

	closeOnce sync.Once
	closed    chan struct{}
}

// NewFake returns a Fake whose channels hold up to capacity packets.
func NewFake(name string, capacity int) *Fake {
	return &Fake{
		name:    name,
		in:      make(chan []byte, capacity),
		Written: make(chan []byte, capacity),
		closed:  make(chan struct{}),
	}
}

// Inject makes packet the next one returned by Read.
func (f *Fake) Inject(packet []byte) { f.in <- packet }

// Name returns the name given to NewFake.
func (f *Fake) Name() string { return f.name }

// Read returns the next injected packet, or io.EOF after Close.
func (f *Fake) Read(p []byte) (int, error) {
	select {
	case pkt := <-f.in:
		return copy(p, pkt), nil
	case <-f.closed:
		return 0, io.EOF
	}
}

// Write records a copy of p on Written.
func (f *Fake) Write(p []byte) (int, error) {
	select {
	case <-f.closed:
		return 0, io.ErrClosedPipe
	default:
	}
	f.Written <- append([]byte(nil), p...)
	return len(p), nil
}

// Close makes pending and later Reads return io.EOF.
func (f *Fake) Close() error {
	f.closeOnce.Do(func() { close(f.closed) })
	return nil
}
