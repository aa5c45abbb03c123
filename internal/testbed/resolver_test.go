package testbed

import (
	"net/netip"
	"testing"

	"github.com/miekg/dns"
)

// TestResolverAnswers: A for a known host (any case), an HTTPS record
// with alpn h3 only while SetHTTPS is on, nothing else for a known host,
// NXDOMAIN for any other name.
func TestResolverAnswers(t *testing.T) {
	r := &Resolver{addrs: map[string]netip.Addr{"www.a.test": netip.MustParseAddr("198.19.0.10")}}
	ask := func(name string, qtype uint16) *dns.Msg {
		q := new(dns.Msg)
		q.SetQuestion(name, qtype)
		return r.Answer(q)
	}
	if a := ask("WWW.a.test.", dns.TypeA); a.Rcode != dns.RcodeSuccess || len(a.Answer) != 1 || a.Answer[0].(*dns.A).A.String() != "198.19.0.10" || a.Answer[0].Header().Ttl != TTL {
		t.Errorf("A: %v", a)
	}
	if h := ask("www.a.test.", dns.TypeHTTPS); h.Rcode != dns.RcodeSuccess || len(h.Answer) != 0 {
		t.Errorf("HTTPS while off: %v", h)
	}
	r.SetHTTPS(true)
	h := ask("www.a.test.", dns.TypeHTTPS)
	if len(h.Answer) != 1 {
		t.Fatalf("HTTPS while on: %v", h)
	}
	rec := h.Answer[0].(*dns.HTTPS)
	if rec.Priority != 1 || rec.Target != "." || len(rec.Value) != 2 || rec.Value[0].String() != "h3,h2" || rec.Value[1].String() != "198.19.0.10" {
		t.Errorf("HTTPS record %v", rec)
	}
	if aaaa := ask("www.a.test.", dns.TypeAAAA); aaaa.Rcode != dns.RcodeSuccess || len(aaaa.Answer) != 0 {
		t.Errorf("AAAA: %v", aaaa)
	}
	if nx := ask("other.test.", dns.TypeA); nx.Rcode != dns.RcodeNameError {
		t.Errorf("another name: %v", nx)
	}
	if r.Queries() != 5 {
		t.Errorf("%d queries counted, want 5", r.Queries())
	}
}
