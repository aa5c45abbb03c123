package netns

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/tun"
)

// Addresses of the emulated network. They are in 198.18.0.0/15, the range
// RFC 2544 reserves for benchmarking, and exist only inside the namespaces.
var (
	ClientSubnet  = netip.MustParsePrefix("198.18.0.0/24")
	ServersSubnet = netip.MustParsePrefix("198.19.0.0/24")
	// ClientAddr is the client's address, on the client TUN.
	ClientAddr = netip.MustParseAddr("198.18.0.1")
	// serversTUNAddr is the servers namespace's own TUN address.
	serversTUNAddr = netip.MustParseAddr("198.19.0.1")
	// ResolverAddr is where a testbed's DNS server listens: the servers
	// namespace's own TUN address, behind the emulated link and on no
	// origin's path.
	ResolverAddr = serversTUNAddr
	// firstServerAddr is the first origin address; more follow it.
	firstServerAddr = netip.MustParseAddr("198.19.0.10")
)

// ServerAddr is the address of server n (1-based) of a Topology:
// 198.19.0.10 for the first.
func ServerAddr(n int) netip.Addr {
	a := firstServerAddr.As4()
	a[3] += byte(n - 1)
	return netip.AddrFrom4(a)
}

// TUNName is the name of the TUN device in each namespace.
const TUNName = "qb0"

// TUNTxQueueLen is the transmit queue of each TUN, in packets. The default
// (500) makes the kernel drop bursts before the emulator sees them.
const TUNTxQueueLen = 10000

// Topology is the client and servers namespaces joined by two TUN devices.
// Packets the client sends to ServersSubnet come out of ClientTUN; packets
// written to ServersTUN arrive in the servers namespace, and the reverse.
// Whoever holds both devices (the emulator) is the link between them.
type Topology struct {
	Client, Servers       *Namespace
	ClientTUN, ServersTUN tun.Device
	// ServerAddrs are the origin addresses in the servers namespace.
	ServerAddrs []netip.Addr
}

// Build creates the namespaces "<stem>-client" and "<stem>-servers", a TUN in
// each, and servers origin addresses. On error it removes what it created.
func Build(stem string, servers int) (_ *Topology, err error) {
	if servers < 1 || servers > factor.MaxServers {
		return nil, fmt.Errorf("topology: %d servers, want 1 to %d", servers, factor.MaxServers)
	}
	t := &Topology{}
	defer func() {
		if err != nil {
			err = errors.Join(err, t.Close())
		}
	}()
	if t.Client, err = Create(stem + "-client"); err != nil {
		return nil, err
	}
	if t.Servers, err = Create(stem + "-servers"); err != nil {
		return nil, err
	}
	for i := range servers {
		t.ServerAddrs = append(t.ServerAddrs, ServerAddr(i+1))
	}
	if t.ClientTUN, err = setupSide(t.Client, ClientAddr, ClientSubnet, ServersSubnet, nil); err != nil {
		return nil, err
	}
	if t.ServersTUN, err = setupSide(t.Servers, serversTUNAddr, ServersSubnet, ClientSubnet, t.ServerAddrs); err != nil {
		return nil, err
	}
	return t, nil
}

// setupSide creates the TUN in ns, gives it addr (in subnet) and extra /32
// addresses, routes peer into it, brings it and loopback up, and turns IPv6
// off so that only the traffic under test crosses the link.
func setupSide(ns *Namespace, addr netip.Addr, subnet, peer netip.Prefix, extra []netip.Addr) (tun.Device, error) {
	var dev tun.Device
	if err := ns.Do(func() error {
		d, err := tun.Create(TUNName)
		dev = d
		return err
	}); err != nil {
		return nil, fmt.Errorf("netns %s: %w", ns.Name, err)
	}
	fail := func(step string, err error) (tun.Device, error) {
		dev.Close()
		return nil, fmt.Errorf("netns %s: %s: %w", ns.Name, step, err)
	}
	for _, key := range []string{"ipv6/conf/all/disable_ipv6", "ipv6/conf/default/disable_ipv6"} {
		if err := ns.Sysctl(key, "1"); err != nil {
			return fail("disable IPv6", err)
		}
	}
	h, err := netlink.NewHandleAt(ns.handle)
	if err != nil {
		return fail("netlink handle", err)
	}
	defer h.Close()
	lo, err := h.LinkByName("lo")
	if err != nil {
		return fail("find lo", err)
	}
	if err := h.LinkSetUp(lo); err != nil {
		return fail("set lo up", err)
	}
	if step, err := configureTUN(h, addr, subnet, peer, extra); err != nil {
		return fail(step, err)
	}
	return dev, nil
}

// configureTUN sets the TUN's MTU and queue length through h, gives it
// addr (in subnet) and the extra /32 addresses, brings it up and routes
// peer into it; on failure it names the step that failed.
func configureTUN(h *netlink.Handle, addr netip.Addr, subnet, peer netip.Prefix, extra []netip.Addr) (string, error) {
	link, err := h.LinkByName(TUNName)
	if err != nil {
		return "find " + TUNName, err
	}
	if err := h.LinkSetMTU(link, tun.MTU); err != nil {
		return "set MTU", err
	}
	if err := h.LinkSetTxQLen(link, TUNTxQueueLen); err != nil {
		return "set txqueuelen", err
	}
	addrs := []*net.IPNet{{IP: addr.AsSlice(), Mask: net.CIDRMask(subnet.Bits(), 32)}}
	for _, a := range extra {
		addrs = append(addrs, &net.IPNet{IP: a.AsSlice(), Mask: net.CIDRMask(32, 32)})
	}
	for _, a := range addrs {
		if err := h.AddrAdd(link, &netlink.Addr{IPNet: a}); err != nil {
			return "add address " + a.String(), err
		}
	}
	if err := h.LinkSetUp(link); err != nil {
		return "set " + TUNName + " up", err
	}
	route := &netlink.Route{
		LinkIndex: link.Attrs().Index,
		Dst:       &net.IPNet{IP: peer.Addr().AsSlice(), Mask: net.CIDRMask(peer.Bits(), 32)},
		Scope:     netlink.SCOPE_LINK,
	}
	if err := h.RouteAdd(route); err != nil {
		return "route " + peer.String(), err
	}
	return "", nil
}

// Close closes both TUN devices (which removes them) and deletes both
// namespaces. It is safe on a partly built Topology.
func (t *Topology) Close() error {
	var errs []error
	for _, d := range []tun.Device{t.ClientTUN, t.ServersTUN} {
		if d != nil {
			if err := d.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close %s: %w", d.Name(), err))
			}
		}
	}
	for _, ns := range []*Namespace{t.Client, t.Servers} {
		if ns != nil {
			errs = append(errs, ns.Delete())
		}
	}
	return errors.Join(errs...)
}
