// Package live holds the rules of loading a deployed site rather than a
// page quicbench serves (its URL is factor.ParseLiveURL's): where its hosts
// resolve (the host's resolver, or --resolve for a staging address), which
// addresses a benchmark may aim at (never a private or loopback one
// without --allow-private, so that a mistyped URL cannot benchmark an
// internal service), and how often a run may load an origin (politeness:
// one page per second per origin by default). It is pure but for the
// resolver it is handed; the network path itself is netns.Uplink.
package live

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/quicbench/quicbench/internal/factor"
)

// Overrides are --resolve's hosts: each host a live load may reach
// beside the page's own, with the addresses it is pinned to (the host's
// resolver is not asked), or none where the host's resolver is to give
// them.
type Overrides map[string][]netip.Addr

// ParseResolve reads one --resolve value into o: "host=addr[,addr…]", or
// "host" alone for a host the host's resolver resolves.
func (o Overrides) ParseResolve(arg string) error {
	const fix = "write --resolve host=addr[,addr…], such as --resolve www.example.com=203.0.113.10, or --resolve host alone for another host the page loads from"
	host, list, withAddrs := strings.Cut(arg, "=")
	host = factor.NormalHost(host)
	if host == "" || (withAddrs && list == "") {
		return fmt.Errorf("--resolve %.100q: %s", arg, fix)
	}
	if err := factor.CheckHostName(host); err != nil {
		return fmt.Errorf("--resolve %.100q: %v: %s", arg, err, fix)
	}
	if !withAddrs {
		if _, ok := o[host]; !ok {
			o[host] = nil
		}
		return nil
	}
	for _, text := range strings.Split(list, ",") {
		addr, err := netip.ParseAddr(strings.TrimSpace(text))
		if err != nil {
			return fmt.Errorf("--resolve %.100q: %.60q is no IP address: %s", arg, text, fix)
		}
		o[host] = append(o[host], addr.Unmap())
	}
	return nil
}

// Policy is what a live run may aim at.
type Policy struct {
	// AllowPrivate lets a page resolve to private, loopback, link-local
	// and shared addresses, and to this machine's own (--allow-private):
	// a staging server on the local network.
	AllowPrivate bool
	// Local are this machine's own addresses (its interfaces'), refused
	// as loopback is: a page there would reach every port of the host.
	Local []netip.Addr
}

// refused are the address ranges a live run never aims at without
// AllowPrivate, each with the words that name it.
var refused = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "an unspecified"},
	{netip.MustParsePrefix("10.0.0.0/8"), "a private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared (carrier-grade NAT)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "a loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "a link-local"},
	{netip.MustParsePrefix("172.16.0.0/12"), "a private"},
	{netip.MustParsePrefix("192.168.0.0/16"), "a private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "the testbed's own (benchmarking)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "a multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved"},
	{netip.MustParsePrefix("::/128"), "an unspecified"},
	{netip.MustParsePrefix("::1/128"), "a loopback"},
	{netip.MustParsePrefix("fc00::/7"), "a private (unique local)"},
	{netip.MustParsePrefix("fe80::/10"), "a link-local"},
	{netip.MustParsePrefix("ff00::/8"), "a multicast"},
}

// Check refuses addr for host where the policy does not allow it: one
// line that says what the address is and the fix.
func (p Policy) Check(host string, addr netip.Addr) error {
	addr = addr.Unmap()
	if p.AllowPrivate {
		return nil
	}
	for _, r := range refused {
		if r.prefix.Contains(addr) {
			if strings.HasPrefix(r.what, "the testbed's") {
				return fmt.Errorf("%s resolves to %s, in %s range: a live page cannot be served from inside the testbed", host, addr, r.what)
			}
			return fmt.Errorf("%s resolves to %s, %s address: aiming a benchmark there needs --allow-private (a staging server on your own network)", host, addr, r.what)
		}
	}
	if slices.Contains(p.Local, addr) {
		return fmt.Errorf("%s resolves to %s, one of this machine's own addresses: aiming a benchmark there needs --allow-private (a server on this machine)", host, addr)
	}
	return nil
}

// Resolver looks up a host's addresses (net.DefaultResolver does).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Resolve gives host's IPv4 addresses: --resolve's where it names the
// host, else the resolver's; each checked against the policy, sorted. The
// testbed carries IPv4 only.
func (p Policy) Resolve(ctx context.Context, r Resolver, o Overrides, host string) ([]netip.Addr, error) {
	host = factor.NormalHost(host)
	addrs := o[host]
	if len(addrs) == 0 {
		if ip, err := netip.ParseAddr(host); err == nil {
			addrs = []netip.Addr{ip}
		} else if addrs, err = r.LookupNetIP(ctx, "ip4", host); err != nil {
			return nil, fmt.Errorf("resolve %s: %w (check the name, or give its address with --resolve %s=ADDR)", host, lookupReason(err), host)
		}
	}
	var out []netip.Addr
	for _, a := range addrs {
		a = a.Unmap()
		if err := p.Check(host, a); err != nil {
			return nil, err
		}
		if a.Is4() && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("resolve %s: no IPv4 address (the testbed carries IPv4 only): give one with --resolve %s=ADDR", host, host)
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return out, nil
}

// lookupReason is a lookup error without the resolver's own prefix.
func lookupReason(err error) error {
	if dnsErr := (*net.DNSError)(nil); errors.As(err, &dnsErr) {
		if dnsErr.IsNotFound {
			return fmt.Errorf("no such host")
		}
		return fmt.Errorf("%s", dnsErr.Err)
	}
	return err
}
