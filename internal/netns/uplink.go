package netns

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"strings"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// UplinkPrefix starts the name of the host's end of every uplink, so that
// cleanup finds those of runs that died (RemoveStaleUplinks).
const UplinkPrefix = "qbu"

// uplinkBlocks is where uplinks take their /30: 198.18.128.0/17, in the
// benchmarking range (RFC 2544), far from the namespaces' own subnets.
var uplinkBlocks = netip.MustParsePrefix("198.18.128.0/17")

// nftTablePrefix names the nftables tables an uplink adds, in the host's
// namespace and in the servers namespace.
const nftTablePrefix = "quicbench_"

// ipForward is the sysctl that makes a namespace route between its
// interfaces.
const ipForward = "ipv4/ip_forward"

// Uplink joins a Topology to the host's own network, for pages on servers
// outside the testbed: the client namespace sends everything not local
// into its TUN (so every packet crosses the emulator), the servers
// namespace forwards what comes out of its TUN for other addresses over a
// veth pair to the host's namespace, masqueraded to its end's address, and
// the host routes it on as its own traffic, masqueraded again when it
// leaves by another interface (its network never sees the testbed's
// addresses). The host must forward (net.ipv4.ip_forward, set for the
// uplink's life when it was off).
type Uplink struct {
	// HostLink is the veth's end in the host's namespace; HostAddr and
	// ServersAddr the two ends' addresses.
	HostLink              string
	HostAddr, ServersAddr netip.Addr
	servers               *Namespace
	// forwardWas is the host's ip_forward before the uplink ("" when the
	// uplink left it as it was).
	forwardWas string
}

// AddUplink joins t to the host's network (Uplink), carrying only packets
// to the addresses in allow (nil: to any): the servers namespace refuses
// the others with an ICMP error (administratively prohibited), so that
// nothing the run did not pin leaves the machine and a lookup the client
// tries of an unpinned name fails at once. On error it removes what it
// added.
func (t *Topology) AddUplink(allow []netip.Addr) (_ *Uplink, err error) {
	u := &Uplink{servers: t.Servers}
	defer func() {
		if err != nil {
			err = errors.Join(fmt.Errorf("uplink: %w", err), u.Close())
		}
	}()
	if err := u.addVeth(); err != nil {
		return nil, err
	}
	if err := t.routeClientThroughTUN(); err != nil {
		return nil, err
	}
	if err := u.setupServersEnd(); err != nil {
		return nil, err
	}
	if allow != nil {
		if err := allowOnly(int(u.servers.handle), nftTablePrefix+"pinned", uplinkPeer, allow); err != nil {
			return nil, err
		}
	}
	if err := u.setupHostEnd(); err != nil {
		return nil, err
	}
	return u, nil
}

// addVeth creates the veth pair, its host end named HostLink and its
// other end in the servers namespace, with a free /30 of uplinkBlocks.
func (u *Uplink) addVeth() error {
	h, err := netlink.NewHandle()
	if err != nil {
		return fmt.Errorf("netlink: %w", err)
	}
	defer h.Close()
	for range 8 {
		u.HostLink = fmt.Sprintf("%s%08x", UplinkPrefix, rand.Uint32())
		veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: u.HostLink}, PeerName: uplinkPeer,
			PeerNamespace: netlink.NsFd(int(u.servers.handle))}
		if err := h.LinkAdd(veth); err != nil {
			return fmt.Errorf("add veth %s: %w", u.HostLink, err)
		}
		block := uplinkBlocks.Addr().As4()
		n := rand.Uint32N(1 << (32 - uplinkBlocks.Bits() - 2))
		block[2] += byte(n >> 6)
		block[3] = byte(n&63) << 2
		u.HostAddr, u.ServersAddr = netip.AddrFrom4(block).Next(), netip.AddrFrom4(block).Next().Next()
		err := h.AddrAdd(veth, &netlink.Addr{IPNet: &net.IPNet{IP: u.HostAddr.AsSlice(), Mask: net.CIDRMask(30, 32)}})
		if errors.Is(err, unix.EEXIST) {
			h.LinkDel(veth) // another uplink has that block: try another
			continue
		}
		if err != nil {
			return fmt.Errorf("address %s: %w", u.HostAddr, err)
		}
		return h.LinkSetUp(veth)
	}
	return fmt.Errorf("no free /30 in %s after 8 tries: remove old uplinks with quicbench cleanup", uplinkBlocks)
}

// uplinkPeer is the veth's end in the servers namespace.
const uplinkPeer = "qbup"

// routeClientThroughTUN sends every address the client namespace does not
// hold into its TUN: to the emulator.
func (t *Topology) routeClientThroughTUN() error {
	h, err := t.Client.Netlink()
	if err != nil {
		return err
	}
	defer h.Close()
	link, err := h.LinkByName(TUNName)
	if err != nil {
		return fmt.Errorf("netns %s: find %s: %w", t.Client.Name, TUNName, err)
	}
	anywhere := &net.IPNet{IP: net.IPv4zero.To4(), Mask: net.CIDRMask(0, 32)}
	if err := h.RouteAdd(&netlink.Route{LinkIndex: link.Attrs().Index, Dst: anywhere, Scope: netlink.SCOPE_LINK}); err != nil {
		return fmt.Errorf("netns %s: default route: %w", t.Client.Name, err)
	}
	return nil
}

// setupServersEnd addresses and raises the servers namespace's end, routes
// the namespace's default over it, lets the namespace forward, and
// masquerades what leaves by it.
func (u *Uplink) setupServersEnd() error {
	h, err := u.servers.Netlink()
	if err != nil {
		return err
	}
	defer h.Close()
	link, err := h.LinkByName(uplinkPeer)
	if err != nil {
		return fmt.Errorf("netns %s: find %s: %w", u.servers.Name, uplinkPeer, err)
	}
	if err := h.AddrAdd(link, &netlink.Addr{IPNet: &net.IPNet{IP: u.ServersAddr.AsSlice(), Mask: net.CIDRMask(30, 32)}}); err != nil {
		return fmt.Errorf("netns %s: address %s: %w", u.servers.Name, u.ServersAddr, err)
	}
	if err := h.LinkSetUp(link); err != nil {
		return fmt.Errorf("netns %s: set %s up: %w", u.servers.Name, uplinkPeer, err)
	}
	if err := h.RouteAdd(&netlink.Route{Gw: u.HostAddr.AsSlice(), LinkIndex: link.Attrs().Index}); err != nil {
		return fmt.Errorf("netns %s: default route: %w", u.servers.Name, err)
	}
	if err := u.servers.Sysctl(ipForward, "1"); err != nil {
		return err
	}
	return masquerade(int(u.servers.handle), nftTablePrefix+"uplink", outOf(uplinkPeer, true))
}

// setupHostEnd turns the host's forwarding on (remembering it was off) and
// masquerades what the servers namespace sends out of any other of the
// host's interfaces.
func (u *Uplink) setupHostEnd() error {
	was, err := os.ReadFile("/proc/sys/net/" + ipForward)
	if err != nil {
		return fmt.Errorf("read net.ipv4.ip_forward: %w", err)
	}
	if strings.TrimSpace(string(was)) != "1" {
		if err := os.WriteFile("/proc/sys/net/"+ipForward, []byte("1"), 0o644); err != nil {
			return fmt.Errorf("set net.ipv4.ip_forward=1: %w", err)
		}
		u.forwardWas = strings.TrimSpace(string(was))
	}
	match := append(fromAddr(u.ServersAddr), outOf(u.HostLink, false)...)
	return masquerade(-1, hostTableName(u.HostLink, u.forwardWas), match)
}

// forwardMark separates, in the name of an uplink's host table, its link
// from the forwarding the host had before ("0", or "" when it was on), so
// that cleanup after a run that died puts it back.
const forwardMark = "_forward"

// hostTableName names the host's nftables table of the uplink whose host
// end is link.
func hostTableName(link, forwardWas string) string {
	return nftTablePrefix + link + forwardMark + forwardWas
}

// parseHostTable is hostTableName's link and forwarding; ok is false for
// another table's name.
func parseHostTable(name string) (link, forwardWas string, ok bool) {
	rest, ok := strings.CutPrefix(name, nftTablePrefix)
	if !ok {
		return "", "", false
	}
	link, forwardWas, ok = strings.Cut(rest, forwardMark)
	return link, forwardWas, ok && strings.HasPrefix(link, UplinkPrefix) && (forwardWas == "" || forwardWas == "0")
}

// fromAddr matches packets from addr.
func fromAddr(addr netip.Addr) []expr.Any {
	return []expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 12, Len: 4},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: addr.AsSlice()},
	}
}

// outOf matches packets leaving by the interface named name (is true) or
// by any other (false).
func outOf(name string, is bool) []expr.Any {
	op := expr.CmpOpNeq
	if is {
		op = expr.CmpOpEq
	}
	ifname := make([]byte, unix.IFNAMSIZ)
	copy(ifname, name)
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyOIFNAME, Register: 1},
		&expr.Cmp{Op: op, Register: 1, Data: ifname},
	}
}

// masquerade adds the nftables table name, with one source-NAT chain that
// masquerades the packets match selects, in the namespace of the
// descriptor nsFd (-1: this process's).
func masquerade(nsFd int, name string, match []expr.Any) error {
	c, err := nftConn(nsFd)
	if err != nil {
		return err
	}
	table := c.AddTable(&nftables.Table{Family: nftables.TableFamilyIPv4, Name: name})
	chain := c.AddChain(&nftables.Chain{Name: "postrouting", Table: table, Type: nftables.ChainTypeNAT,
		Hooknum: nftables.ChainHookPostrouting, Priority: nftables.ChainPriorityNATSource})
	c.AddRule(&nftables.Rule{Table: table, Chain: chain, Exprs: append(match, &expr.Masq{})})
	if err := c.Flush(); err != nil {
		return fmt.Errorf("nftables table %s: %w", name, err)
	}
	return nil
}

// allowOnly adds the nftables table name, whose forward chain refuses
// (ICMP host unreachable, administratively prohibited) every packet
// leaving by the interface link to an address not in allow, in the
// namespace of nsFd.
func allowOnly(nsFd int, name, link string, allow []netip.Addr) error {
	c, err := nftConn(nsFd)
	if err != nil {
		return err
	}
	table := c.AddTable(&nftables.Table{Family: nftables.TableFamilyIPv4, Name: name})
	chain := c.AddChain(&nftables.Chain{Name: "forward", Table: table, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookForward, Priority: nftables.ChainPriorityFilter})
	set := &nftables.Set{Table: table, Name: "allowed", KeyType: nftables.TypeIPAddr}
	var elems []nftables.SetElement
	for _, a := range allow {
		if a.Is4() {
			elems = append(elems, nftables.SetElement{Key: a.AsSlice()})
		}
	}
	if err := c.AddSet(set, elems); err != nil {
		return fmt.Errorf("nftables set of %s: %w", name, err)
	}
	exprs := append(outOf(link, true),
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 16, Len: 4},
		&expr.Lookup{SourceRegister: 1, SetName: set.Name, SetID: set.ID, Invert: true},
		&expr.Reject{Type: unix.NFT_REJECT_ICMP_UNREACH, Code: icmpAdminProhibited})
	c.AddRule(&nftables.Rule{Table: table, Chain: chain, Exprs: exprs})
	if err := c.Flush(); err != nil {
		return fmt.Errorf("nftables table %s: %w", name, err)
	}
	return nil
}

// icmpAdminProhibited is ICMP's "communication administratively
// prohibited" code of destination unreachable.
const icmpAdminProhibited = 13

// nftConn is an nftables connection to the namespace of nsFd (-1: this
// process's).
func nftConn(nsFd int) (*nftables.Conn, error) {
	var opts []nftables.ConnOption
	if nsFd >= 0 {
		opts = append(opts, nftables.WithNetNSFd(nsFd))
	}
	c, err := nftables.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("nftables: %w", err)
	}
	return c, nil
}

// Close removes the host's end of the veth (the servers namespace's goes
// with it, and with the namespace its table), the host's nftables table,
// and turns the host's forwarding back off when the uplink turned it on
// and no other uplink is left. It is safe on a partly built Uplink.
func (u *Uplink) Close() error {
	if u == nil || u.HostLink == "" {
		return nil
	}
	return errors.Join(removeUplink(u.HostLink), restoreForwarding(u.forwardWas))
}

// restoreForwarding puts the host's forwarding back to was ("" leaves it)
// once no uplink is left.
func restoreForwarding(was string) error {
	if was == "" {
		return nil
	}
	if others, err := uplinkLinks(); err != nil || len(others) > 0 {
		return err
	}
	if err := os.WriteFile("/proc/sys/net/"+ipForward, []byte(was), 0o644); err != nil {
		return fmt.Errorf("set net.ipv4.ip_forward=%s back: %w", was, err)
	}
	return nil
}

// removeUplink deletes the host link name and its nftables table; either
// missing is no error.
func removeUplink(name string) error {
	var errs []error
	if link, err := netlink.LinkByName(name); err == nil {
		if err := netlink.LinkDel(link); err != nil {
			errs = append(errs, fmt.Errorf("delete %s: %w", name, err))
		}
	}
	c, err := nftConn(-1)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	tables, err := c.ListTablesOfFamily(nftables.TableFamilyIPv4)
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("nftables: list tables: %w", err))...)
	}
	for _, t := range tables {
		if link, _, ok := parseHostTable(t.Name); ok && link == name {
			c.DelTable(t)
			if err := c.Flush(); err != nil {
				errs = append(errs, fmt.Errorf("nftables: delete table %s: %w", t.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// uplinkLinks are the names of the host's uplink ends (UplinkPrefix).
func uplinkLinks() ([]string, error) {
	links, err := netlink.LinkList()
	if err != nil {
		return nil, fmt.Errorf("list links: %w", err)
	}
	var out []string
	for _, l := range links {
		if strings.HasPrefix(l.Attrs().Name, UplinkPrefix) && l.Type() == "veth" {
			out = append(out, l.Attrs().Name)
		}
	}
	return out, nil
}

// OrphanUplinkTables lists the host's nftables tables of uplinks whose
// host end is gone (its run died: the servers namespace went, and the veth
// pair with it).
func OrphanUplinkTables() ([]string, error) {
	c, err := nftConn(-1)
	if err != nil {
		return nil, err
	}
	tables, err := c.ListTablesOfFamily(nftables.TableFamilyIPv4)
	if err != nil {
		return nil, fmt.Errorf("nftables: list tables: %w", err)
	}
	var out []string
	for _, t := range tables {
		link, _, ok := parseHostTable(t.Name)
		if !ok {
			continue
		}
		if _, err := netlink.LinkByName(link); err != nil {
			out = append(out, t.Name)
		}
	}
	return out, nil
}

// removeOrphanUplinks deletes OrphanUplinkTables, puts the host's
// forwarding back as the first uplink found it, and returns their names.
// Where nftables cannot be read (a kernel without it, no privilege), no
// uplink can have been made: nothing to do.
func removeOrphanUplinks() ([]string, error) {
	names, err := OrphanUplinkTables()
	if errors.Is(err, unix.EPROTONOSUPPORT) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) || errors.Is(err, unix.ENOENT) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var errs []error
	was := ""
	for _, name := range names {
		link, forwardWas, _ := parseHostTable(name)
		was = cmp.Or(was, forwardWas)
		errs = append(errs, removeUplink(link))
	}
	return names, errors.Join(append(errs, restoreForwarding(was))...)
}
