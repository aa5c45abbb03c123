package experiment

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quicbench/quicbench/internal/breakdown"
	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/live"
	"github.com/quicbench/quicbench/internal/site"
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

// TestLiveLoadsArePaced: the runner starts a live page's loads one
// second apart at least, and stops at the cap with an input error.
func TestLiveLoadsArePaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		u, _ := url.Parse("https://www.site.test/")
		b := &bed{page: site.LiveSite(u, []string{"static.site.test"}), live: &liveState{}}
		r := &runner{pacer: live.Pacer{MaxLoads: 3}}
		var starts []time.Time
		for range 3 {
			if err := r.pace(t.Context(), b); err != nil {
				t.Fatal(err)
			}
			starts = append(starts, time.Now())
			time.Sleep(300 * time.Millisecond) // a load shorter than the gap
		}
		for i := 1; i < len(starts); i++ {
			if gap := starts[i].Sub(starts[i-1]); gap != live.DefaultMinGap {
				t.Errorf("load %d started %v after the one before, want %v", i+1, gap, live.DefaultMinGap)
			}
		}
		var input *InputError
		if err := r.pace(t.Context(), b); !errors.As(err, &input) || !strings.Contains(err.Error(), "--max-loads 3") {
			t.Errorf("a fourth load: %v, want the cap's input error", err)
		}
		if err := r.pace(t.Context(), &bed{}); err != nil {
			t.Errorf("a page the testbed serves is not paced: %v", err)
		}
	})
}
