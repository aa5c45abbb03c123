// Package standin stands up, for tests of live pages, a "remote" site:
// the Go origin serving h1, h2 and h3 on port 443 of a TEST-NET-3 address
// in a network namespace of its own, joined to the host's namespace by a
// veth pair and reached only through the host's routing, as a server on
// the internet is. No test traffic leaves this machine.
package standin

import (
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/origin"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/site/gen"
	"github.com/quicbench/quicbench/internal/stacks"
)

// Addr is the stand-in's address, and Gateway the host's end of its link:
// TEST-NET-3, routed only by this machine's host namespace.
var (
	Addr    = netip.MustParseAddr("203.0.113.10")
	Gateway = netip.MustParseAddr("203.0.113.1")
)

// Host is the stand-in site's name (pinned to Addr as --resolve does).
const Host = "www.standin.test"

// Namespace is a namespace outside any testbed holding Addr, joined to
// the host's namespace; it goes when the test ends.
func Namespace(t testing.TB) *netns.Namespace { return NamespaceAt(t, Addr, Gateway) }

// NamespaceAt is a namespace outside any testbed holding addr in a /24,
// joined by a veth pair to the host's namespace, where gateway (in the
// same /24) is the host's end and the namespace's default route; it goes
// when the test ends.
func NamespaceAt(t testing.TB, addr, gateway netip.Addr) *netns.Namespace {
	t.Helper()
	tag := time.Now().UnixNano() % 1e6
	ns, err := netns.Create(netns.RunName(os.Getpid(), fmt.Sprintf("rs%d", tag)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Delete() })
	f, err := os.Open("/run/netns/" + ns.Name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: fmt.Sprintf("qbr%06d", tag)}, PeerName: "site0", PeerNamespace: netlink.NsFd(int(f.Fd()))}
	if err := netlink.LinkAdd(veth); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { netlink.LinkDel(veth) })
	mask := net.CIDRMask(24, 32)
	must(t, netlink.AddrAdd(veth, &netlink.Addr{IPNet: &net.IPNet{IP: gateway.AsSlice(), Mask: mask}}))
	must(t, netlink.LinkSetUp(veth))
	h, err := ns.Netlink()
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	lo, err := h.LinkByName("lo")
	must(t, err)
	must(t, h.LinkSetUp(lo))
	end, err := h.LinkByName("site0")
	must(t, err)
	must(t, h.AddrAdd(end, &netlink.Addr{IPNet: &net.IPNet{IP: addr.AsSlice(), Mask: mask}}))
	must(t, h.LinkSetUp(end))
	must(t, h.RouteAdd(&netlink.Route{Gw: gateway.AsSlice(), LinkIndex: end.Attrs().Index}))
	return ns
}

// Site is a stand-in's site and the server that serves it.
type Site struct {
	*site.Site
	Certs  *origin.Certs
	Server *origin.Server
	mu     sync.Mutex
	agents map[string]int
}

// UserAgents are the User-Agent fields of the requests served so far,
// with how many requests sent each.
func (s *Site) UserAgents() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.agents)
}

// Static and Images are more host names of the stand-in, at the same
// address: a page's files on other origins.
const (
	Static = "static.standin.test"
	Images = "img.standin.test"
)

// Serve serves a synthetic page of objects images of size bytes from a
// new stand-in namespace, spread round-robin over hosts (Host alone when
// none; every one at Addr): h1 and h2 over TCP and h3 over UDP on
// Addr:443 (TCP with CUBIC, as the testbed's default stack), the
// responses of the hosts in h3 advertising HTTP/3 (Alt-Svc: h3=":443"). Its certificates are made for the test (Certs.CAFile is
// their CA). It stops when the test ends.
func Serve(t testing.TB, objects int, size int64, hosts, h3 []string) *Site {
	t.Helper()
	if len(hosts) == 0 {
		hosts = []string{Host}
	}
	s, err := gen.Synthetic(factor.Page{Kind: factor.PageSynthetic, Objects: objects, ObjectBytes: size}, hosts, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range s.Origins {
		if !slices.Contains(h3, o.Host) {
			continue
		}
		for _, r := range o.Resources {
			r.Header = append(r.Header, site.Field{Name: "Alt-Svc", Value: `h3=":443"; ma=86400`})
		}
	}
	certs, err := origin.NewCerts(t.TempDir(), hosts, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ns := Namespace(t)
	var ln origin.Listener
	at := netip.AddrPortFrom(Addr, 443).String()
	// TCP as the testbed's default stack has it (CUBIC), not this
	// kernel's default (BBR), so that a live load and a served one differ
	// in their path alone
	var applied stacks.Applied
	if ln.TCP, err = stacks.Listen(ns, at, stacks.Of(factor.StackTCP), &applied); err != nil {
		t.Fatal(err)
	}
	if ln.UDP, err = ns.ListenPacket("udp4", at); err != nil {
		t.Fatal(err)
	}
	srv, err := origin.Start(s, certs.Leaf, []origin.Listener{ln}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	st := &Site{Site: s, Certs: certs, Server: srv, agents: map[string]int{}}
	srv.Watch(func(r *http.Request) {
		st.mu.Lock()
		st.agents[r.UserAgent()]++
		st.mu.Unlock()
	})
	return st
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
