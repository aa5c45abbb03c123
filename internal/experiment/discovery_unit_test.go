package experiment

import (
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/server"
)

// TestTheServersMustAgreeWithADiscoveringBrowser: the servers served at
// least what the browser reports over h3 and over the TCP protocol
// offered, and nothing over another TCP protocol.
func TestTheServersMustAgreeWithADiscoveringBrowser(t *testing.T) {
	use := client.ProtocolUse{H3Requests: 5, TCPRequests: 3}
	for _, c := range []struct {
		served   server.Counts
		fallback factor.Protocol
		want     string
	}{
		{server.Counts{H3: 5, H2: 4}, factor.H2, ""}, // and the icon
		{server.Counts{H3: 4, H2: 4}, factor.H2, "reports 5 requests over h3, the servers served 4"},
		{server.Counts{H3: 5, H2: 2}, factor.H2, "over TCP, the servers served 2 over h2"},
		{server.Counts{H3: 5, H2: 3, H1: 1}, factor.H2, "1 requests over TCP protocols other than h2"},
		{server.Counts{H3: 5, H1: 3}, factor.H1, ""},
		{server.Counts{H3: 5, H2: 3}, factor.H1, "served 0 over h1"},
	} {
		got := servedMismatch(c.served, use, c.fallback)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%+v, fallback %s: %q, want %q", c.served, c.fallback, got, c.want)
		}
	}
}

// TestWhatIsOfferedAndHow: Alt-Svc only for an h3 load under alt-svc, an
// HTTPS record only under https-rr; h1 beside h3 only where the run
// compares h1 alone.
func TestWhatIsOfferedAndHow(t *testing.T) {
	levels := func(p factor.Protocol, d factor.Discovery) factor.Levels {
		var l factor.Levels
		l.Set(factor.IDProtocol, string(p))
		l.Set(factor.IDDiscovery, string(d))
		return l
	}
	if got := altSvcOf(levels(factor.H3, factor.DiscoveryAltSvc)); got != `h3=":443"; ma=86400` {
		t.Errorf("alt-svc h3: %q", got)
	}
	for _, l := range []factor.Levels{levels(factor.H2, factor.DiscoveryAltSvc), levels(factor.H3, factor.DiscoveryForced), levels(factor.H3, factor.DiscoveryHTTPSRR)} {
		if got := altSvcOf(l); got != "" {
			t.Errorf("%s %s: Alt-Svc %q", l.Protocol(), l.Discovery(), got)
		}
	}
	if !offers(levels(factor.H3, factor.DiscoveryHTTPSRR), factor.DiscoveryHTTPSRR) || offers(levels(factor.H2, factor.DiscoveryHTTPSRR), factor.DiscoveryHTTPSRR) {
		t.Error("the HTTPS record is offered for h3 under https-rr alone")
	}
	if fallbackOf([]factor.Protocol{factor.H1, factor.H3}) != factor.H1 || fallbackOf([]factor.Protocol{factor.H1, factor.H2, factor.H3}) != factor.H2 {
		t.Error("fallbackOf")
	}
}
