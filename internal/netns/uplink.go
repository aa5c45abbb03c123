package netns

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
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

// UplinkTablePrefix starts the names of the uplinks' nftables tables,
// which RemoveStale lists beside the namespaces it removes.
const UplinkTablePrefix = nftTablePrefix

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
// addresses). The host forwards the uplink's packets alone: on the
// uplink's interfaces only, behind a filter (setupHostEnd).
type Uplink struct {
	// HostLink is the veth's end in the host's namespace; HostAddr and
	// ServersAddr the two ends' addresses.
	HostLink              string
	HostAddr, ServersAddr netip.Addr
	servers               *Namespace
	// turnedOn are the host's interfaces whose forwarding the uplink
	// turned on (it was off), to turn off again when no uplink is left.
	turnedOn []string
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
	if err := u.setupHostEnd(allow); err != nil {
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

// setupHostEnd lets the host forward the uplink's packets and nothing
// else: a filter is installed first (the uplink's own packets to the
// pinned addresses, and their answers, pass; anything else into or out of
// the uplink is dropped, and so is anything a neighbour sends through an
// interface whose forwarding the uplink turns on), then forwarding is
// turned on per interface (the uplink's end, and each interface that
// leads to a pinned address where it was off), never with the host-wide
// net.ipv4.ip_forward, whose toggle resets every interface's settings
// (accept_redirects, forwarding). What leaves by another interface is
// masqueraded. The table names the run's PID and records the interfaces
// turned on, so that cleanup after a run that died puts them back.
func (u *Uplink) setupHostEnd(allow []netip.Addr) error {
	outs, err := outInterfaces(allow)
	if err != nil {
		return err
	}
	others := recordedByOthers()
	var turnOn []string
	for _, dev := range outs {
		if off, err := forwardingOff(dev); err != nil {
			return err
		} else if off || slices.Contains(others, dev) {
			turnOn = append(turnOn, dev)
		}
	}
	if err := u.hostTable(allow, turnOn); err != nil {
		return err
	}
	u.turnedOn = turnOn
	for _, dev := range append([]string{u.HostLink}, turnOn...) {
		if err := setForwarding(dev, "1"); err != nil {
			return err
		}
	}
	return nil
}

// hostTable adds the uplink's nftables table in the host's namespace:
// the forward filter (setupHostEnd) and the masquerade of what the
// servers namespace sends out of any other interface.
func (u *Uplink) hostTable(allow []netip.Addr, turnOn []string) error {
	c, err := nftConn(-1)
	if err != nil {
		return err
	}
	name := hostTableName(u.HostLink, os.Getpid())
	table := c.AddTable(&nftables.Table{Family: nftables.TableFamilyIPv4, Name: name})
	nat := c.AddChain(&nftables.Chain{Name: "postrouting", Table: table, Type: nftables.ChainTypeNAT,
		Hooknum: nftables.ChainHookPostrouting, Priority: nftables.ChainPriorityNATSource})
	c.AddRule(&nftables.Rule{Table: table, Chain: nat, Exprs: append(append(fromAddr(u.ServersAddr), outOf(u.HostLink, false)...), &expr.Masq{})})
	forward := c.AddChain(&nftables.Chain{Name: "forward", Table: table, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookForward, Priority: nftables.ChainPriorityFilter})
	pinned := append(inOf(u.HostLink), fromAddr(u.ServersAddr)...)
	if allow != nil {
		set := &nftables.Set{Table: table, Name: "pinned", KeyType: nftables.TypeIPAddr}
		if err := c.AddSet(set, ipv4Elements(allow)); err != nil {
			return fmt.Errorf("nftables set of %s: %w", name, err)
		}
		pinned = append(pinned, &expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 16, Len: 4},
			&expr.Lookup{SourceRegister: 1, SetName: set.Name, SetID: set.ID})
	}
	rules := []struct {
		match    []expr.Any
		verdict  expr.VerdictKind
		userData string
	}{
		{pinned, expr.VerdictAccept, ""},
		{inOf(u.HostLink), expr.VerdictDrop, ""},
		{append(outOf(u.HostLink, true), established()...), expr.VerdictAccept, ""},
		{outOf(u.HostLink, true), expr.VerdictDrop, ""},
	}
	for _, dev := range turnOn {
		rules = append(rules, struct {
			match    []expr.Any
			verdict  expr.VerdictKind
			userData string
		}{inOf(dev), expr.VerdictDrop, forwardingRecord + dev})
	}
	for _, r := range rules {
		rule := &nftables.Rule{Table: table, Chain: forward, Exprs: append(r.match, &expr.Verdict{Kind: r.verdict})}
		if r.userData != "" {
			rule.UserData = []byte(r.userData)
		}
		c.AddRule(rule)
	}
	if err := c.Flush(); err != nil {
		return fmt.Errorf("nftables table %s: %w", name, err)
	}
	return nil
}

// forwardingRecord starts the user data of a forward rule that drops what
// neighbours send through an interface whose forwarding the uplink turned
// on; the interface's name follows.
const forwardingRecord = "quicbench-forwarding-was-off:"

// ipv4Elements are the IPv4 addresses of addrs as set elements.
func ipv4Elements(addrs []netip.Addr) []nftables.SetElement {
	var elems []nftables.SetElement
	for _, a := range addrs {
		if a.Is4() {
			elems = append(elems, nftables.SetElement{Key: a.AsSlice()})
		}
	}
	return elems
}

// established matches packets of connections seen both ways (and the
// ICMP errors about them).
func established() []expr.Any {
	return []expr.Any{
		&expr.Ct{Register: 1, Key: expr.CtKeySTATE},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4,
			Mask: binaryutil.NativeEndian.PutUint32(expr.CtStateBitESTABLISHED | expr.CtStateBitRELATED), Xor: []byte{0, 0, 0, 0}},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: []byte{0, 0, 0, 0}},
	}
}

// outInterfaces are the host's interfaces that lead to the addresses in
// allow (nil: every interface but loopback and the uplinks', since an
// answer may come back by any).
func outInterfaces(allow []netip.Addr) ([]string, error) {
	var links []netlink.Link
	if allow == nil {
		all, err := netlink.LinkList()
		if err != nil {
			return nil, fmt.Errorf("list links: %w", err)
		}
		links = all
	}
	for _, a := range allow {
		routes, err := netlink.RouteGet(a.AsSlice())
		if err != nil {
			return nil, fmt.Errorf("route to %s: %w", a, err)
		}
		for _, r := range routes {
			l, err := netlink.LinkByIndex(r.LinkIndex)
			if err != nil {
				return nil, fmt.Errorf("interface %d: %w", r.LinkIndex, err)
			}
			links = append(links, l)
		}
	}
	var names []string
	for _, l := range links {
		name := l.Attrs().Name
		if name != "lo" && !strings.HasPrefix(name, UplinkPrefix) && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names, nil
}

// forwardingPath is the sysctl of one interface's IPv4 forwarding.
func forwardingPath(dev string) string { return "/proc/sys/net/ipv4/conf/" + dev + "/forwarding" }

// forwardingOff reports whether the interface dev does not forward.
func forwardingOff(dev string) (bool, error) {
	was, err := os.ReadFile(forwardingPath(dev))
	if err != nil {
		return false, fmt.Errorf("read the forwarding of %s: %w", dev, err)
	}
	return strings.TrimSpace(string(was)) == "0", nil
}

// setForwarding sets the interface dev's forwarding to value.
func setForwarding(dev, value string) error {
	if err := os.WriteFile(forwardingPath(dev), []byte(value), 0o644); err != nil {
		return fmt.Errorf("set net.ipv4.conf.%s.forwarding=%s: %w", dev, value, err)
	}
	return nil
}

// inOf matches packets that came in by the interface named name.
func inOf(name string) []expr.Any {
	ifname := make([]byte, unix.IFNAMSIZ)
	copy(ifname, name)
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyIIFNAME, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: ifname},
	}
}

// hostTableName names the host's nftables table of the uplink whose host
// end is link, made by the process pid.
func hostTableName(link string, pid int) string {
	return fmt.Sprintf("%s%s_%d", nftTablePrefix, link, pid)
}

// parseHostTable is hostTableName's link and PID; ok is false for another
// table's name.
func parseHostTable(name string) (link string, pid int, ok bool) {
	rest, ok := strings.CutPrefix(name, nftTablePrefix)
	if !ok {
		return "", 0, false
	}
	link, pidText, ok := strings.Cut(rest, "_")
	pid, err := strconv.Atoi(pidText)
	return link, pid, ok && err == nil && pid > 0 && strings.HasPrefix(link, UplinkPrefix)
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
	if err := c.AddSet(set, ipv4Elements(allow)); err != nil {
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
// with it, and with the namespace its table) and the host's nftables
// table, and turns the forwarding of the interfaces it turned on back off
// when no other uplink is left. It is safe on a partly built Uplink.
func (u *Uplink) Close() error {
	if u == nil || u.HostLink == "" {
		return nil
	}
	recorded, err := removeUplink(u.HostLink)
	return errors.Join(err, restoreForwarding(append(recorded, u.turnedOn...)))
}

// restoreForwarding turns the forwarding of the interfaces devs back off
// once no uplink is left (one still running recorded them too, and puts
// them back when it ends).
func restoreForwarding(devs []string) error {
	if len(devs) == 0 {
		return nil
	}
	if others, err := uplinkTables(); err != nil || len(others) > 0 {
		return err
	}
	var errs []error
	for _, dev := range slices.Compact(slices.Sorted(slices.Values(devs))) {
		if _, err := netlink.LinkByName(dev); err != nil {
			continue // gone with its namespace
		}
		errs = append(errs, setForwarding(dev, "0"))
	}
	return errors.Join(errs...)
}

// removeUplink deletes the host link name and its nftables tables (either
// missing is no error) and returns the interfaces their filters record as
// turned on.
func removeUplink(name string) ([]string, error) {
	var errs []error
	if link, err := netlink.LinkByName(name); err == nil {
		if err := netlink.LinkDel(link); err != nil {
			errs = append(errs, fmt.Errorf("delete %s: %w", name, err))
		}
	}
	c, err := nftConn(-1)
	if err != nil {
		return nil, errors.Join(append(errs, err)...)
	}
	tables, err := c.ListTablesOfFamily(nftables.TableFamilyIPv4)
	if err != nil {
		return nil, errors.Join(append(errs, fmt.Errorf("nftables: list tables: %w", err))...)
	}
	var recorded []string
	for _, t := range tables {
		if link, _, ok := parseHostTable(t.Name); ok && link == name {
			recorded = append(recorded, recordedIn(c, t)...)
			c.DelTable(t)
			if err := c.Flush(); err != nil {
				errs = append(errs, fmt.Errorf("nftables: delete table %s: %w", t.Name, err))
			}
		}
	}
	return recorded, errors.Join(errs...)
}

// recordedIn are the interfaces the forward filter of table t records as
// turned on by its uplink.
func recordedIn(c *nftables.Conn, t *nftables.Table) []string {
	rules, err := c.GetRules(t, &nftables.Chain{Name: "forward", Table: t})
	if err != nil {
		return nil
	}
	var devs []string
	for _, r := range rules {
		if dev, ok := strings.CutPrefix(string(r.UserData), forwardingRecord); ok && dev != "" {
			devs = append(devs, dev)
		}
	}
	return devs
}

// recordedByOthers are the interfaces the running uplinks' tables record
// as turned on by them: their forwarding is on only for those uplinks, and
// must go off when the last uplink ends.
func recordedByOthers() []string {
	c, err := nftConn(-1)
	if err != nil {
		return nil
	}
	tables, err := c.ListTablesOfFamily(nftables.TableFamilyIPv4)
	if err != nil {
		return nil
	}
	var devs []string
	for _, t := range tables {
		if _, _, ok := parseHostTable(t.Name); ok {
			devs = append(devs, recordedIn(c, t)...)
		}
	}
	return devs
}

// uplinkTables are the names of the host's uplink tables.
func uplinkTables() ([]string, error) {
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
		if _, _, ok := parseHostTable(t.Name); ok {
			out = append(out, t.Name)
		}
	}
	return out, nil
}

// OrphanUplinkTables lists the host's nftables tables of uplinks whose
// run died (its process is gone) or whose host end is gone (its servers
// namespace went, and the veth pair with it).
func OrphanUplinkTables() ([]string, error) {
	names, err := uplinkTables()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, name := range names {
		link, pid, _ := parseHostTable(name)
		_, linkErr := netlink.LinkByName(link)
		if linkErr != nil || unix.Kill(pid, 0) == unix.ESRCH {
			out = append(out, name)
		}
	}
	return out, nil
}

// removeOrphanUplinks deletes OrphanUplinkTables with their host links
// where these are still there, turns back off the forwarding they turned
// on once no uplink is left, and returns their names: one pass. Where
// nftables cannot be read (a kernel without it, no privilege), no uplink
// can have been made: nothing to do.
func removeOrphanUplinks() ([]string, error) {
	names, err := OrphanUplinkTables()
	if errors.Is(err, unix.EPROTONOSUPPORT) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) || errors.Is(err, unix.ENOENT) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var errs []error
	var devs []string
	for _, name := range names {
		link, _, _ := parseHostTable(name)
		recorded, err := removeUplink(link)
		devs = append(devs, recorded...)
		errs = append(errs, err)
	}
	return names, errors.Join(append(errs, restoreForwarding(devs))...)
}
