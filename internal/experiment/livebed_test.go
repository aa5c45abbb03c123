package experiment

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/breakdown"
	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/factor"
)

// TestOtherTransportInTheCapture: a live load fails when the client sent
// a packet of the other transport to a verified host; not for the site's
// own packets (a server probing an earlier load's connection), nor for
// a host that does not offer the protocol, even at a shared address.
func TestOtherTransportInTheCapture(t *testing.T) {
	site, cdn, other := netip.MustParseAddr("203.0.113.10"), netip.MustParseAddr("203.0.113.20"), netip.MustParseAddr("203.0.113.30")
	addrs := map[string]netip.Addr{"www.site.test": site, "cdn.site.test": cdn, "old.site.test": other, "shared.site.test": cdn}
	client0 := netip.MustParseAddrPort("198.18.0.1:40000")
	packet := func(to netip.Addr, udp, down bool) breakdown.Packet {
		return breakdown.Packet{Down: down, Conn: breakdown.Conn{Client: client0, Server: netip.AddrPortFrom(to, 443), UDP: udp}}
	}
	h3 := client.Request{Protocol: factor.H3, VerifyHosts: []string{"www.site.test", "cdn.site.test"}}
	h2 := client.Request{Protocol: factor.H2, VerifyHosts: []string{"www.site.test", "cdn.site.test", "old.site.test", "shared.site.test"}}
	for _, c := range []struct {
		name    string
		req     client.Request
		packets []breakdown.Packet
		want    string
	}{
		{"h3 over QUIC", h3, []breakdown.Packet{packet(site, true, false), packet(site, true, true)}, ""},
		{"h3 falls back to TCP", h3, []breakdown.Packet{packet(site, true, false), packet(site, false, false)}, "holds TCP to www.site.test (203.0.113.10:443) in an h3 load"},
		{"h3 to a host without h3 over TCP", h3, []breakdown.Packet{packet(other, false, false)}, ""},
		{"h3: a host without h3 shares the address", h3, []breakdown.Packet{packet(cdn, false, false)}, ""},
		{"h2: the site probes an earlier QUIC connection", h2, []breakdown.Packet{packet(site, false, false), packet(site, true, true)}, ""},
		{"h2: the client sends QUIC", h2, []breakdown.Packet{packet(other, true, false)}, "holds UDP (QUIC) to old.site.test"},
	} {
		got := otherTransport(&Measured{Packets: c.packets}, c.req, addrs)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
