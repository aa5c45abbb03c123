// Package tun defines the packet device the emulator reads and writes: a Linux
// TUN device carrying raw IP packets (no packet-information header), and a
// channel-backed fake for tests of pure logic.
package tun

import "io"

// Device is a layer-3 packet device. Each Read returns one whole IP packet and
// each Write injects one whole IP packet. Read and Write may be called from
// different goroutines; Close unblocks a pending Read.
type Device interface {
	// Name is the interface name, for example "qb0".
	Name() string
	io.ReadWriteCloser
}

// MTU is the MTU, in bytes, of the devices quicbench creates. Packets read
// from a device are never larger.
const MTU = 1500
