// Package stacks names the servers' transport stacks, following Wolsing et al. 2019's
// Table 1, applies them for real in the servers namespace (sysctls, route
// attributes, socket options), and reads back what was applied, so that a
// result can prove which stack produced it. What this kernel or quic-go
// cannot do is said in each profile's Limits, never silently substituted.
package stacks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/netns"
)

// Profile is a named server transport stack.
type Profile struct {
	Name string `json:"name"`
	// Summary is what the level means (factor.Stacks), the one
	// description of the stack.
	Summary string `json:"summary"`
	// InitCwnd and InitRwnd are the route's initial congestion and receive
	// windows in packets; 0 leaves the kernel default (10).
	InitCwnd int `json:"initcwnd"`
	InitRwnd int `json:"initrwnd"`
	// Congestion is the TCP congestion control of the servers' sockets.
	Congestion string `json:"congestion"`
	// SlowStartAfterIdle is net.ipv4.tcp_slow_start_after_idle.
	SlowStartAfterIdle bool `json:"slow_start_after_idle"`
	// TunedBuffers raises the maximum of tcp_rmem and tcp_wmem to 32 MiB;
	// without it the namespace keeps the kernel's defaults.
	TunedBuffers bool `json:"tuned_buffers"`
	// Pacing turns on the kernel's internal TCP pacing on each connection
	// (SO_MAX_PACING_RATE); BBR paces by itself.
	Pacing bool `json:"pacing"`
	// Limits says plainly what the profile would want and this machine or
	// library cannot give.
	Limits []string `json:"limits,omitempty"`
}

const (
	tunedTCPRmem = "4096 131072 33554432"
	tunedTCPWmem = "4096 16384 33554432"
	noFQ         = "no sch_fq on this kernel: TCP pacing is the kernel's internal pacing, not fq's"
	nginxPacing  = "with --server nginx there is no pacing under CUBIC: nginx cannot set SO_MAX_PACING_RATE, which switches the internal pacing on (BBR paces by itself); the records say pacing false"
)

// Profiles lists the stacks, as in Wolsing et al. 2019's Table 1, each
// described by its level of the stack factor.
func Profiles() []Profile {
	profiles := []Profile{
		{Name: string(factor.StackTCP), Congestion: "cubic", SlowStartAfterIdle: true},
		{Name: string(factor.StackTCPPlus), InitCwnd: 32, InitRwnd: 32, Congestion: "cubic", TunedBuffers: true, Pacing: true, Limits: []string{noFQ, nginxPacing}},
		{Name: string(factor.StackTCPPlusBBR), InitCwnd: 32, InitRwnd: 32, Congestion: "bbr", TunedBuffers: true, Pacing: true, Limits: []string{noFQ}},
	}
	for i := range profiles {
		profiles[i].Summary = factor.Stacks().Meaning(factor.Stack(profiles[i].Name))
	}
	return profiles
}

// QUICTransport is what an h3 server's QUIC runs with: its congestion
// controller, initial window (bytes), and whether it paces and runs a
// HyStart (a slow start that leaves before a loss when the RTT grows:
// quic-go's hybrid slow start, quiche's HyStart++).
type QUICTransport struct {
	Congestion         string `json:"congestion"`
	InitialWindowBytes int    `json:"initial_window_bytes"`
	Pacing             bool   `json:"pacing"`
	HyStart            bool   `json:"hystart"`
}

// QUICGoTransport is quic-go v0.65's, read from its code: the sent-packet
// handler makes a CUBIC sender in Reno mode (NewCubicSender(…, true /* use
// Reno */, …) in internal/ackhandler), whose initial window is 32 packets
// of the initial datagram size (initialCongestionWindow × 1,280 bytes,
// protocol.InitialPacketSize), paces, and leaves slow start by its hybrid
// slow start (hybridSlowStart in internal/congestion).
var QUICGoTransport = QUICTransport{Congestion: string(factor.CCNewReno), InitialWindowBytes: 32 * 1280, Pacing: true, HyStart: true}

// QUICProfile describes a QUIC stack level: what runs it, with what
// transport, where those values come from, and what it cannot do. Each
// server stack describes its own (server.Kind).
type QUICProfile struct {
	Name      factor.QUIC `json:"name"`
	Server    string      `json:"server"`
	Transport QUICTransport
	// Source says where the transport's values come from.
	Source string   `json:"source"`
	Limits []string `json:"limits,omitempty"`
}

// Of returns the profile of a TCP stack level (each has one: a test says
// so).
func Of(s factor.Stack) Profile {
	p, err := Lookup(string(s))
	if err != nil {
		panic(fmt.Sprintf("stacks: the level %q of factor.Stacks has no profile", s))
	}
	return p
}

// Lookup returns the profile called name, or an error listing the names.
func Lookup(name string) (Profile, error) {
	all := Profiles()
	if i := slices.IndexFunc(all, func(p Profile) bool { return p.Name == name }); i >= 0 {
		return all[i], nil
	}
	return Profile{}, fmt.Errorf("unknown stack %q: use tcp, tcp+ or tcp+bbr for TCP (quicbench stacks describes them)", name)
}

// Applied is what was read back after applying a TCP profile.
type Applied struct {
	Profile            string `json:"profile"`
	Congestion         string `json:"congestion"`       // from a server socket (TCP_CONGESTION)
	RouteCongestion    string `json:"route_congestion"` // the route's congctl
	InitCwnd           int    `json:"initcwnd"`         // from the route, 0 = kernel default
	InitRwnd           int    `json:"initrwnd"`
	SlowStartAfterIdle string `json:"tcp_slow_start_after_idle"`
	TCPRmem            string `json:"tcp_rmem"`
	TCPWmem            string `json:"tcp_wmem"`
	Pacing             bool   `json:"pacing"` // SO_MAX_PACING_RATE set on connections
}

// Apply sets p's sysctls in ns and its windows on ns's route to peer (the
// client subnet), and returns the values read back. Socket options are set
// by Listen.
func Apply(ns *netns.Namespace, peer netip.Prefix, p Profile) (Applied, error) {
	ssai := "0"
	if p.SlowStartAfterIdle {
		ssai = "1"
	}
	sysctls := [][2]string{{"ipv4/tcp_slow_start_after_idle", ssai}}
	if p.TunedBuffers {
		sysctls = append(sysctls, [2]string{"ipv4/tcp_rmem", tunedTCPRmem}, [2]string{"ipv4/tcp_wmem", tunedTCPWmem})
	}
	for _, kv := range sysctls {
		if err := ns.Sysctl(kv[0], kv[1]); err != nil {
			return Applied{}, fmt.Errorf("stack %s: %w", p.Name, err)
		}
	}
	h, err := ns.Netlink()
	if err != nil {
		return Applied{}, err
	}
	defer h.Close()
	route, err := findRoute(h, peer)
	if err != nil {
		return Applied{}, fmt.Errorf("stack %s: %w", p.Name, err)
	}
	// The route's congestion control reaches sockets whose owner cannot set
	// TCP_CONGESTION, such as nginx's; Listen sets it per socket as well.
	route.InitCwnd, route.InitRwnd, route.Congctl = p.InitCwnd, p.InitRwnd, p.Congestion
	if err := h.RouteReplace(route); err != nil {
		return Applied{}, fmt.Errorf("stack %s: set initcwnd %d initrwnd %d congctl %s on the route to %v: %w", p.Name, p.InitCwnd, p.InitRwnd, p.Congestion, peer, err)
	}
	a := Applied{Profile: p.Name, Pacing: p.Pacing}
	if route, err = findRoute(h, peer); err != nil {
		return Applied{}, err
	}
	a.InitCwnd, a.InitRwnd, a.RouteCongestion = route.InitCwnd, route.InitRwnd, route.Congctl
	for _, kv := range []struct {
		key string
		dst *string
	}{{"ipv4/tcp_slow_start_after_idle", &a.SlowStartAfterIdle}, {"ipv4/tcp_rmem", &a.TCPRmem}, {"ipv4/tcp_wmem", &a.TCPWmem}} {
		v, err := ns.ReadSysctl(kv.key)
		if err != nil {
			return Applied{}, err
		}
		*kv.dst = strings.Join(strings.Fields(v), " ")
	}
	tunedOK := !p.TunedBuffers || a.TCPRmem == tunedTCPRmem && a.TCPWmem == tunedTCPWmem
	if a.SlowStartAfterIdle != ssai || !tunedOK || a.InitCwnd != p.InitCwnd || a.InitRwnd != p.InitRwnd || a.RouteCongestion != p.Congestion {
		return a, fmt.Errorf("stack %s: the kernel kept other values than were set: %+v", p.Name, a)
	}
	return a, nil
}

func findRoute(h *netlink.Handle, peer netip.Prefix) (*netlink.Route, error) {
	routes, err := h.RouteList(nil, netlink.FAMILY_V4)
	if err != nil {
		return nil, fmt.Errorf("list routes: %w", err)
	}
	for i := range routes {
		if d := routes[i].Dst; d != nil && d.String() == peer.String() {
			return &routes[i], nil
		}
	}
	return nil, fmt.Errorf("no route to %v", peer)
}

// Listen opens a TCP listener in ns whose sockets use p's congestion
// control, and whose accepted connections get p's pacing. It records the
// congestion control the kernel gives accepted connections in *seen.
func Listen(ns *netns.Namespace, addr string, p Profile, seen *Applied) (net.Listener, error) {
	var sockErr error
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) {
			sockErr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, p.Congestion)
		})
	}}
	var ln net.Listener
	err := ns.Do(func() error {
		var err error
		ln, err = lc.Listen(context.Background(), "tcp4", addr)
		return err
	})
	if err != nil {
		return nil, err
	}
	if sockErr != nil {
		ln.Close()
		return nil, fmt.Errorf("stack %s: TCP_CONGESTION %s: %w (available: see /proc/sys/net/ipv4/tcp_available_congestion_control)", p.Name, p.Congestion, sockErr)
	}
	return PerConnection(ln, p, seen), nil
}

// PerConnection is ln setting p's per-connection socket options (pacing)
// on each connection it accepts, and noting in seen (unless nil) the
// congestion control the first one got. Listen returns one; a server in a
// process of its own wraps the listener it was passed in one.
func PerConnection(ln net.Listener, p Profile, seen *Applied) net.Listener {
	return &listener{Listener: ln, profile: p, seen: seen}
}

// listener applies per-connection options and records what a connection got.
type listener struct {
	net.Listener
	profile Profile
	seen    *Applied
}

// File is a copy of the listening socket's descriptor, to pass to a
// server in a process of its own (which sets the options itself).
func (l *listener) File() (*os.File, error) {
	f, ok := l.Listener.(interface{ File() (*os.File, error) })
	if !ok {
		return nil, fmt.Errorf("stack %s: a %T has no descriptor to pass", l.profile.Name, l.Listener)
	}
	return f.File()
}

// maxPacingRate is the largest finite maximum pacing rate, in bytes a
// second: it limits nothing, and being finite it switches the kernel's
// internal pacing on, at the rate TCP computes from its window and RTT
// (net/core/sock.c sets SK_PACING_NEEDED only for a value other than
// ~0UL; all ones stores an unlimited maximum and leaves pacing off, which
// is what tcp+ ran with before: its first flight left in one burst).
const maxPacingRate = ^uint64(0) - 1

// Accept accepts a connection and applies the stack to it: pacing where
// the profile has it, and it notes the congestion control the kernel
// gave the first connection.
func (l *listener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc, ok := conn.(*net.TCPConn)
	if !ok {
		return conn, nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return conn, nil
	}
	var optErr error
	rc.Control(func(fd uintptr) {
		if l.profile.Pacing {
			optErr = unix.SetsockoptUint64(int(fd), unix.SOL_SOCKET, unix.SO_MAX_PACING_RATE, maxPacingRate)
		}
		if l.seen != nil && l.seen.Congestion == "" {
			if cc, err := unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION); err == nil {
				l.seen.Congestion = strings.TrimRight(cc, "\x00")
			}
		}
	})
	if optErr != nil {
		conn.Close()
		return nil, errors.Join(fmt.Errorf("stack %s: SO_MAX_PACING_RATE", l.profile.Name), optErr)
	}
	return conn, nil
}
