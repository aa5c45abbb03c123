//go:build linux

package tun

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

type linuxDevice struct {
	name string
	file *os.File
}

// Create creates a TUN device called name in the network namespace of the
// calling OS thread and returns it. The device disappears when it is closed.
// The caller must lock the goroutine to its thread if it switched namespaces.
func Create(name string) (Device, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil, fmt.Errorf("tun %s: /dev/net/tun is missing: load the module with 'modprobe tun' (in a container, pass --device /dev/net/tun)", name)
		}
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
			return nil, fmt.Errorf("tun %s: no permission to open /dev/net/tun: run as root", name)
		}
		return nil, fmt.Errorf("tun %s: open /dev/net/tun: %w", name, err)
	}
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("tun %s: %w", name, err)
	}
	ifr.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI)
	if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("tun %s: TUNSETIFF: %w", name, err)
	}
	// Non-blocking, so that the Go poller serves Read and Close interrupts it.
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("tun %s: set non-blocking: %w", name, err)
	}
	return &linuxDevice{name: ifr.Name(), file: os.NewFile(uintptr(fd), "/dev/net/tun:"+name)}, nil
}

// Name is the device's interface name, as the kernel gave it.
func (d *linuxDevice) Name() string { return d.name }

// Read reads one IP packet the kernel routed into the device into p and
// returns its length in bytes.
func (d *linuxDevice) Read(p []byte) (int, error) { return d.file.Read(p) }

// Write hands the IP packet p to the kernel as if it had arrived on the
// device.
func (d *linuxDevice) Write(p []byte) (int, error) { return d.file.Write(p) }

// Close closes the device's descriptor, interrupting a blocked Read; the
// kernel removes the device with its last descriptor.
func (d *linuxDevice) Close() error { return d.file.Close() }

// SyscallConn gives raw access to the descriptor, for readers that wait in
// poll(2) on a thread of their own instead of in the Go poller.
func (d *linuxDevice) SyscallConn() (syscall.RawConn, error) { return d.file.SyscallConn() }
