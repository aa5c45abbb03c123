package testbed

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/quicbench/quicbench/internal/chromium"
	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/live"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/testbed/standin"
	"github.com/quicbench/quicbench/internal/testenv"
)

// networkWithUplink is a network of oneWay delay each way, tagged tag,
// with an uplink to allow (nil: anywhere); both go when the test ends.
func networkWithUplink(t *testing.T, tag string, oneWay time.Duration, allow []netip.Addr) (*Network, *netns.Uplink) {
	t.Helper()
	n, err := StartNetwork(netns.RunName(os.Getpid(), fmt.Sprintf("%s%d", tag, time.Now().UnixNano()%1e6)),
		emulator.Config{Up: link.Config{Delay: oneWay}, Down: link.Config{Delay: oneWay}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	up, err := n.Topo.AddUplink(allow)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	return n, up
}

// TestUplinkReachesAServerBeyondTheHost: with an uplink, the client
// namespace reaches a server in a namespace of its own beyond the host's
// routing, every packet through the emulator (a TCP handshake takes the
// emulated round trip), and the server sees the host's address, not the
// testbed's; closing the uplink removes its host end and leaves the
// host's forwarding as it was.
func TestUplinkReachesAServerBeyondTheHost(t *testing.T) {
	testenv.RequireRoot(t)
	forwardBefore, _ := os.ReadFile("/proc/sys/net/ipv4/ip_forward")
	site := standin.Namespace(t)
	ln, err := site.Listen("tcp4", netip.AddrPortFrom(standin.Addr, 80).String())
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	seen := make(chan string, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			seen <- c.RemoteAddr().String()
			c.Close()
		}
	}()
	const oneWay = 25 * time.Millisecond
	n, up := networkWithUplink(t, "up", oneWay, nil)
	start := time.Now()
	c, err := n.Topo.Client.DialContext(t.Context(), "tcp4", netip.AddrPortFrom(standin.Addr, 80).String())
	if err != nil {
		t.Fatalf("dial the remote site through the uplink: %v", err)
	}
	handshake := time.Since(start)
	c.Close()
	t.Logf("TCP handshake through the uplink: %v (emulated RTT %v)", handshake, 2*oneWay)
	if handshake < 2*oneWay || handshake > 2*oneWay+500*time.Millisecond {
		t.Errorf("TCP handshake %v, want the emulated round trip of %v (and little more)", handshake, 2*oneWay)
	}
	if from := <-seen; !strings.HasPrefix(from, "203.0.113.1:") {
		t.Errorf("the site saw %s, want the host's address 203.0.113.1", from)
	}
	// The path beyond the emulator, measured from the servers namespace:
	// the host's routing alone, far below the emulated round trip.
	base, err := live.MeasureBaseRTT(t.Context(), n.Topo.Servers.DialContext, netip.AddrPortFrom(standin.Addr, 80), 3, time.Second)
	if err != nil || base.Handshakes != 3 || base.Median > 10*time.Millisecond {
		t.Errorf("base RTT %v, %v; want 3 handshakes well under the emulated %v", base, err, 2*oneWay)
	}
	t.Logf("base RTT beyond the emulator: %v", base)
	ping, err := live.MeasurePing(t.Context(), n.Topo.Servers.ListenPacket, standin.Addr, 10, 5*time.Millisecond, time.Second)
	if err != nil || ping.Answered != 10 || ping.LossPct() != 0 || ping.Median > 10*time.Millisecond {
		t.Errorf("ping %v, %v; want 10 echoes answered, well under the emulated %v", ping, err, 2*oneWay)
	}
	t.Logf("ping beyond the emulator: %v", ping)
	if silent, err := live.MeasurePing(t.Context(), n.Topo.Servers.ListenPacket, netip.MustParseAddr("203.0.113.99"), 3, 5*time.Millisecond, 200*time.Millisecond); !errors.Is(err, live.ErrNoEcho) || silent.Sent != 3 {
		t.Errorf("ping of an address nobody holds: %v, %v; want ErrNoEcho after 3 echoes", silent, err)
	}
	if upStats, downStats := n.Emulator.Stats(); upStats.Packets == 0 || downStats.Packets == 0 {
		t.Errorf("emulator saw %+v up, %+v down; want the connection's packets both ways", upStats, downStats)
	}
	if err := up.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := netlink.LinkByName(up.HostLink); err == nil {
		t.Errorf("the uplink's host end %s is still there", up.HostLink)
	}
	if orphans, err := netns.OrphanUplinkTables(); err != nil || len(orphans) != 0 {
		t.Errorf("nftables tables left: %q, %v", orphans, err)
	}
	if after, _ := os.ReadFile("/proc/sys/net/ipv4/ip_forward"); string(after) != string(forwardBefore) {
		t.Errorf("host forwarding %q after, %q before", after, forwardBefore)
	}
}

// TestAnUplinkCarriesOnlyThePinnedAddresses: an uplink given the
// addresses it may carry reaches those, and refuses any other at once
// (an ICMP error back through the emulator, not a timeout), a name
// server's among them.
func TestAnUplinkCarriesOnlyThePinnedAddresses(t *testing.T) {
	testenv.RequireRoot(t)
	site := standin.Namespace(t)
	acceptAndClose(t, site)
	n, _ := networkWithUplink(t, "ua", 5*time.Millisecond, []netip.Addr{standin.Addr})
	c, err := n.Topo.Client.DialContext(t.Context(), "tcp4", netip.AddrPortFrom(standin.Addr, 80).String())
	if err != nil {
		t.Fatalf("dial the pinned address: %v", err)
	}
	c.Close()
	for _, other := range []string{"203.0.113.99:80", "192.0.2.53:53"} {
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		start := time.Now()
		c, err := n.Topo.Client.DialContext(ctx, "tcp4", other)
		cancel()
		if err == nil {
			c.Close()
		}
		if took := time.Since(start); err == nil || took > time.Second {
			t.Errorf("dial %s, which is not pinned: %v after %v; want it refused at once", other, err, took)
		} else {
			t.Logf("dial %s, not pinned: %v after %v", other, err, took.Round(time.Millisecond))
		}
	}
}

// TestAnUplinkLeftByADeadRunIsCleanedUp: a run that died leaves its
// uplink's host table (its veth goes with its namespace); cleanup removes
// the table and puts the host's forwarding back.
func TestAnUplinkLeftByADeadRunIsCleanedUp(t *testing.T) {
	testenv.RequireRoot(t)
	forwardBefore, _ := os.ReadFile("/proc/sys/net/ipv4/ip_forward")
	n, err := StartNetwork(netns.RunName(os.Getpid(), fmt.Sprintf("ud%d", time.Now().UnixNano()%1e6)), emulator.Config{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	up, err := n.Topo.AddUplink([]netip.Addr{standin.Addr})
	if err != nil {
		n.Close()
		t.Fatal(err)
	}
	n.Close() // as a run that died: the uplink is never closed
	deadline := time.Now().Add(5 * time.Second)
	for _, err := netlink.LinkByName(up.HostLink); err == nil && time.Now().Before(deadline); _, err = netlink.LinkByName(up.HostLink) {
		time.Sleep(10 * time.Millisecond) // the namespace ends, and its veth, a moment after its name
	}
	if orphans, err := netns.OrphanUplinkTables(); err != nil || len(orphans) != 1 {
		t.Fatalf("orphan tables %q, %v; want the dead uplink's", orphans, err)
	}
	removed, err := netns.RemoveStale()
	if err != nil || !slices.ContainsFunc(removed, func(s string) bool { return strings.Contains(s, up.HostLink) }) {
		t.Errorf("cleanup removed %q, %v; want the uplink's table", removed, err)
	}
	if orphans, _ := netns.OrphanUplinkTables(); len(orphans) != 0 {
		t.Errorf("tables left after cleanup: %q", orphans)
	}
	if after, _ := os.ReadFile("/proc/sys/net/ipv4/ip_forward"); string(after) != string(forwardBefore) {
		t.Errorf("host forwarding %q after cleanup, %q before", after, forwardBefore)
	}
}

// acceptAndClose listens on the stand-in's address, port 80, in ns and
// closes every connection it accepts, until the test ends.
func acceptAndClose(t *testing.T, ns *netns.Namespace) {
	t.Helper()
	ln, err := ns.Listen("tcp4", netip.AddrPortFrom(standin.Addr, 80).String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for c, err := ln.Accept(); err == nil; c, err = ln.Accept() {
			c.Close()
		}
	}()
}

// uplinkHelperEnv makes TestHelperUplinkThenWait build an uplink.
const uplinkHelperEnv = "QUICBENCH_UPLINK_HELPER"

// TestHelperUplinkThenWait is not a test of its own: run by
// TestAKilledRunsUplinkGoesInOneCleanup, it builds a network with an
// uplink to the stand-in's address, says so, and waits to be killed.
func TestHelperUplinkThenWait(t *testing.T) {
	if os.Getenv(uplinkHelperEnv) == "" {
		t.Skip("a helper run by TestAKilledRunsUplinkGoesInOneCleanup")
	}
	n, err := StartNetwork(netns.RunName(os.Getpid(), "uk"), emulator.Config{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	up, err := n.Topo.AddUplink([]netip.Addr{standin.Addr})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("UPLINK", up.HostLink)
	time.Sleep(time.Minute)
}

// TestAKilledRunsUplinkGoesInOneCleanup: after a live run killed with
// SIGKILL, one cleanup removes its namespaces, its uplink's host end and
// table, and puts back the forwarding it turned on (the first cleanup
// once left the table and forwarding for a second one to find).
func TestAKilledRunsUplinkGoesInOneCleanup(t *testing.T) {
	testenv.RequireRoot(t)
	standin.Namespace(t) // the route to the pinned address
	sysctls := []string{"/proc/sys/net/ipv4/ip_forward", "/proc/sys/net/ipv4/conf/all/accept_redirects"}
	before := readAll(t, sysctls)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperUplinkThenWait$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), uplinkHelperEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var hostLink string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if l, ok := strings.CutPrefix(sc.Text(), "UPLINK "); ok {
			hostLink = l
			break
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	if hostLink == "" {
		t.Fatal("the helper built no uplink")
	}
	if _, err := netns.RemoveStale(); err != nil {
		t.Errorf("cleanup: %v", err)
	}
	if orphans, err := netns.OrphanUplinkTables(); err != nil || len(orphans) != 0 {
		t.Errorf("after one cleanup, uplink tables left: %q, %v", orphans, err)
	}
	if _, err := netlink.LinkByName(hostLink); err == nil {
		t.Errorf("after one cleanup, the uplink's host end %s is still there", hostLink)
	}
	if after := readAll(t, sysctls); !slices.Equal(after, before) {
		t.Errorf("host-wide settings after cleanup %q, before the run %q", after, before)
	}
	if links, _ := netlink.LinkList(); slices.ContainsFunc(links, func(l netlink.Link) bool {
		on, _ := os.ReadFile("/proc/sys/net/ipv4/conf/" + l.Attrs().Name + "/forwarding")
		return strings.HasPrefix(l.Attrs().Name, "qbr") && strings.TrimSpace(string(on)) == "1"
	}) && before[0] == "0" {
		t.Error("after cleanup, the forwarding the killed run turned on is still on")
	}
}

// TestChromiumLoadsASiteBeyondTheHostPerProtocol: Chromium in the client
// namespace loads a site served from a namespace of its own beyond the
// host's routing (the Go origin: h1, h2 and h3 on 203.0.113.10:443, its
// name pinned to that address as --resolve will), through the uplink and
// the emulator, each protocol forced and seen by the browser, and every
// load pays the emulated round trips.
func TestChromiumLoadsASiteBeyondTheHostPerProtocol(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "apt-get install chromium")
	st := standin.Serve(t, 4, 5_000, nil, nil)
	s, certs, srv, host := st.Site, st.Certs, st.Server, standin.Host
	const oneWay = 20 * time.Millisecond
	n, _ := networkWithUplink(t, "uc", oneWay, []netip.Addr{standin.Addr})
	c := &chromium.Chromium{Namespace: n.Topo.Client, ProfileDir: t.TempDir(), Timeout: 30 * time.Second}
	t.Cleanup(c.Close)
	for _, p := range []factor.Protocol{factor.H1, factor.H2, factor.H3} {
		res, err := c.Load(t.Context(), client.Request{URL: s.DocumentURL(), Protocol: p, Hosts: s.Hosts(),
			Addrs: map[string]netip.Addr{host: standin.Addr}, SPKIHash: certs.SPKIHash, CAFile: certs.CAFile, Expected: s.Subresources})
		if err != nil || !res.OK() {
			t.Errorf("%s: %v %s", p, err, res.Failure)
			continue
		}
		// a connection's handshake and the document's request: two round trips at least
		if res.DocumentProtocol != p.NextHop() || res.TTFBMs < ms(2*oneWay) {
			t.Errorf("%s: document over %q, TTFB %.1f ms; want %s and at least the emulated %v", p, res.DocumentProtocol, res.TTFBMs, p.NextHop(), 2*oneWay)
		}
		t.Logf("%s: TTFB %.1f ms, PLT %.1f ms", p, res.TTFBMs, res.PLTMs)
	}
	if got := srv.Counts(); got.H1 == 0 || got.H2 == 0 || got.H3 == 0 {
		t.Errorf("the stand-in served %+v, want requests over each protocol", got)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// TestAnUplinkForwardsOnlyItsOwnTraffic: a live run once turned the
// host's ip_forward on for everyone, making the host a router for its
// neighbours. Now a neighbour (a namespace behind the interface that
// leads to the pinned site) that sends through the host to a network
// beyond it (another namespace) is not forwarded before, during or after
// the uplink, while the uplink carries the pinned site's traffic; the
// host-wide ip_forward and accept_redirects stay as they were, and the
// interface's forwarding is put back.
func TestAnUplinkForwardsOnlyItsOwnTraffic(t *testing.T) {
	testenv.RequireRoot(t)
	sysctls := []string{"/proc/sys/net/ipv4/ip_forward", "/proc/sys/net/ipv4/conf/all/accept_redirects", "/proc/sys/net/ipv4/conf/default/forwarding"}
	before := readAll(t, sysctls)
	if before[0] != "0" {
		t.Skip("this host forwards already (net.ipv4.ip_forward=1): a neighbour is routed with or without an uplink")
	}
	neighbour := standin.Namespace(t)
	far := standin.NamespaceAt(t, netip.MustParseAddr("198.51.100.10"), netip.MustParseAddr("198.51.100.1"))
	farConn, err := far.ListenPacket("udp4", "198.51.100.10:9999")
	if err != nil {
		t.Fatal(err)
	}
	defer farConn.Close()
	routed := func(when string) bool {
		c, err := neighbour.DialContext(t.Context(), "udp4", "198.51.100.10:9999")
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		defer c.Close()
		c.Write([]byte(when))
		farConn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		buf := make([]byte, 64)
		n, _, err := farConn.ReadFrom(buf)
		return err == nil && string(buf[:n]) == when
	}
	if routed("before") {
		t.Fatal("the neighbour's datagram crossed the host before any uplink: the test's network is not what it expects")
	}
	n, up := networkWithUplink(t, "uf", time.Millisecond, []netip.Addr{standin.Addr})
	acceptAndClose(t, neighbour)
	if c, err := n.Topo.Client.DialContext(t.Context(), "tcp4", netip.AddrPortFrom(standin.Addr, 80).String()); err != nil {
		t.Fatalf("the uplink's own connection to the pinned site: %v", err)
	} else {
		c.Close()
	}
	if routed("during") {
		t.Error("during the uplink, the host forwarded a neighbour's datagram to a network beyond it")
	}
	if during := readAll(t, sysctls); !slices.Equal(during, before) {
		t.Errorf("host-wide settings during the uplink %q, before %q", during, before)
	}
	if err := up.Close(); err != nil {
		t.Fatal(err)
	}
	if routed("after") {
		t.Error("after the uplink, the host forwarded a neighbour's datagram")
	}
	if after := readAll(t, sysctls); !slices.Equal(after, before) {
		t.Errorf("host-wide settings after the uplink %q, before %q", after, before)
	}
	if links, _ := netlink.LinkList(); slices.ContainsFunc(links, func(l netlink.Link) bool {
		on, _ := os.ReadFile("/proc/sys/net/ipv4/conf/" + l.Attrs().Name + "/forwarding")
		return strings.HasPrefix(l.Attrs().Name, "qbr") && strings.TrimSpace(string(on)) == "1"
	}) {
		t.Error("an interface's forwarding the uplink turned on is still on")
	}
}

// readAll reads each sysctl file of paths, trimmed.
func readAll(t *testing.T, paths []string) []string {
	t.Helper()
	var out []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.TrimSpace(string(b)))
	}
	return out
}
