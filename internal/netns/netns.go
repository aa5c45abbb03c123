// Package netns creates and removes the network namespaces quicbench runs in,
// wires them with TUN devices (Mahimahi's topology: one TUN in a client
// namespace, one in a servers namespace, an emulator holding both), sets
// addresses, routes and sysctls, and finds namespaces that earlier runs left
// behind.
package netns

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/quicbench/quicbench/internal/proc"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/quicbench/quicbench/internal/trust"
)

// Prefix starts the name of every namespace quicbench creates.
const Prefix = "qb-"

// Namespace is a named network namespace (a bind mount under /run/netns, as
// "ip netns add" makes), so "ip netns exec NAME" reaches it too.
type Namespace struct {
	Name   string
	handle netns.NsHandle
}

// Create creates the named network namespace. It fails if the name exists.
func Create(name string) (*Namespace, error) {
	if _, err := os.Stat(filepath.Join("/run/netns", name)); err == nil {
		return nil, fmt.Errorf("netns %s: already exists: remove it with 'ip netns del %s' or 'quicbench cleanup'", name, name)
	}
	var handle netns.NsHandle
	err := onFreshThread(func() error {
		// NewNamed moves this thread into the new namespace; the thread
		// ends with the goroutine, so no other code runs in it.
		h, err := netns.NewNamed(name)
		handle = h
		return err
	})
	if err != nil {
		// NewNamed makes the name's file before it fails to mount the
		// namespace on it (no privilege, as in a user namespace): the
		// plain file is not left for every later cleanup to trip on.
		removeNamed(name)
		if errors.Is(err, os.ErrPermission) {
			return nil, fmt.Errorf("netns %s: create: permission denied: run quicbench as root", name)
		}
		return nil, fmt.Errorf("netns %s: create: %w", name, err)
	}
	return &Namespace{Name: name, handle: handle}, nil
}

// removeNamed removes the named namespace's file in /run/netns: unmounted
// first when a namespace is mounted on it (the file is then on nsfs),
// removed as it is when it is a plain file a failed create left. A
// missing name is no error.
func removeNamed(name string) error {
	path := filepath.Join("/run/netns", name)
	var fs unix.Statfs_t
	if err := unix.Statfs(path, &fs); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return &os.PathError{Op: "statfs", Path: path, Err: err}
	}
	if fs.Type == unix.NSFS_MAGIC {
		if err := unix.Unmount(path, unix.MNT_DETACH); err != nil {
			return &os.PathError{Op: "unmount", Path: path, Err: err}
		}
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Do runs fn on an OS thread that is in the namespace. Sockets and devices fn
// creates belong to the namespace and stay usable from any goroutine.
func (n *Namespace) Do(fn func() error) error {
	return onFreshThread(func() error {
		if err := netns.Set(n.handle); err != nil {
			return fmt.Errorf("netns %s: enter: %w", n.Name, err)
		}
		return fn()
	})
}

// Command returns a command that runs name with args in the namespace, via
// "ip netns exec" (which also gives it the namespace's /sys).
// The ip command and name itself are taken only from a PATH directory no
// other user can change (trust.LookPath) and handed to ip by their
// resolved paths, so that ip's own search (which would take an empty PATH
// entry as the working directory) never chooses the program; if either is
// not found there, the command fails to start.
func (n *Namespace) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	ip, err := trust.LookPath("ip")
	program, perr := trust.LookPath(name)
	if perr != nil {
		program = name
	}
	cmd := exec.CommandContext(ctx, ip, append([]string{"netns", "exec", n.Name, program}, args...)...)
	if err = errors.Join(err, perr); err != nil {
		cmd.Err = fmt.Errorf("netns %s: %w", n.Name, err)
	}
	return cmd
}

// WrapCommand rewrites cmd, not yet started, to run in the namespace.
func (n *Namespace) WrapCommand(cmd *exec.Cmd) error {
	ip, err := trust.LookPath("ip")
	if err != nil {
		return fmt.Errorf("netns %s: the 'ip' command: %w (install iproute2: apt-get install iproute2)", n.Name, err)
	}
	cmd.Args = append([]string{"ip", "netns", "exec", n.Name, cmd.Path}, cmd.Args[1:]...)
	cmd.Path = ip
	return nil
}

// Sysctl sets a sysctl under /proc/sys/net, such as
// "ipv4/tcp_slow_start_after_idle", inside the namespace.
func (n *Namespace) Sysctl(key, value string) error {
	return n.Do(func() error {
		path := filepath.Join("/proc/sys/net", key)
		if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
			return fmt.Errorf("netns %s: sysctl net.%s=%s: %w", n.Name, strings.ReplaceAll(key, "/", "."), value, err)
		}
		return nil
	})
}

// ReadSysctl reads a sysctl under /proc/sys/net inside the namespace.
func (n *Namespace) ReadSysctl(key string) (string, error) {
	var v []byte
	err := n.Do(func() error {
		var err error
		v, err = os.ReadFile(filepath.Join("/proc/sys/net", key))
		return err
	})
	if err != nil {
		return "", fmt.Errorf("netns %s: read sysctl net.%s: %w", n.Name, strings.ReplaceAll(key, "/", "."), err)
	}
	return strings.TrimSpace(string(v)), nil
}

// Netlink returns a netlink handle that works inside the namespace. Close it.
func (n *Namespace) Netlink() (*netlink.Handle, error) {
	h, err := netlink.NewHandleAt(n.handle)
	if err != nil {
		return nil, fmt.Errorf("netns %s: netlink: %w", n.Name, err)
	}
	return h, nil
}

// Delete removes the namespace's name. The namespace itself ends when its
// last process and socket are gone.
func (n *Namespace) Delete() error {
	n.handle.Close()
	if err := removeNamed(n.Name); err != nil {
		return fmt.Errorf("netns %s: delete: %w", n.Name, err)
	}
	return nil
}

// onFreshThread runs fn in a new goroutine locked to its OS thread and never
// unlocks it, so the Go runtime ends the thread afterwards: a thread whose
// namespace fn changed never runs other goroutines.
func onFreshThread(fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		done <- fn()
	}()
	return <-done
}

// RunName returns the name stem for the namespaces of the process with the
// given pid: "qb-<pid>-<tag>". The pid lets Stale find the namespaces of runs
// that died without cleaning up.
func RunName(pid int, tag string) string {
	return fmt.Sprintf("%s%d-%s", Prefix, pid, tag)
}

// NewRunName is RunName for this process with a tag of prefix and four
// random hex digits, so that two testbeds of one process never collide.
func NewRunName(prefix string) string {
	return RunName(os.Getpid(), fmt.Sprintf("%s%04x", prefix, rand.Uint32()&0xffff))
}

// Stale lists the quicbench namespaces whose creating process is gone.
func Stale() ([]string, error) {
	entries, err := os.ReadDir("/run/netns")
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list /run/netns: %w", err)
	}
	var stale []string
	for _, e := range entries {
		name := e.Name()
		pid, ok := pidOf(name)
		if !ok {
			continue
		}
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); errors.Is(err, os.ErrNotExist) {
			stale = append(stale, name)
		}
	}
	return stale, nil
}

// pidOf parses the pid out of a name made by RunName.
func pidOf(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, Prefix)
	if !ok {
		return 0, false
	}
	pidText, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(pidText)
	return pid, err == nil && pid > 0
}

// RemoveStale kills the processes left inside the namespaces listed by Stale
// (such as nginx workers whose master died with its run), deletes the
// namespaces and the host's nftables tables of uplinks whose runs are gone
// (OrphanUplinkTables), and returns their names.
func RemoveStale() ([]string, error) {
	names, err := Stale()
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, name := range names {
		killProcessesIn(name)
		if err := removeNamed(name); err != nil {
			errs = append(errs, fmt.Errorf("netns %s: delete: %w", name, err))
		}
	}
	tables, err := removeOrphanUplinks()
	return append(names, tables...), errors.Join(append(errs, err)...)
}

// killProcessesIn sends SIGKILL to every process whose network namespace is
// the named one.
func killProcessesIn(name string) {
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join("/run/netns", name), &st); err != nil {
		return
	}
	want := fmt.Sprintf("net:[%d]", st.Ino)
	for _, p := range proc.List() {
		if p.PID != os.Getpid() && proc.NetNS(p.PID) == want {
			unix.Kill(p.PID, unix.SIGKILL)
		}
	}
}

// DialContext connects like net.Dialer.DialContext from inside the namespace.
func (n *Namespace) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return inside(n, func() (net.Conn, error) { return (&net.Dialer{}).DialContext(ctx, network, addr) })
}

// Listen opens a TCP listener inside the namespace.
func (n *Namespace) Listen(network, addr string) (net.Listener, error) {
	return inside(n, func() (net.Listener, error) { return net.Listen(network, addr) })
}

// ListenPacket opens a packet socket (UDP) inside the namespace.
func (n *Namespace) ListenPacket(network, addr string) (net.PacketConn, error) {
	return inside(n, func() (net.PacketConn, error) { return net.ListenPacket(network, addr) })
}

// inside runs open in the namespace and returns what it opened; sockets keep
// the namespace they were created in.
func inside[T any](n *Namespace, open func() (T, error)) (T, error) {
	var v T
	err := n.Do(func() error {
		var err error
		v, err = open()
		return err
	})
	return v, err
}
