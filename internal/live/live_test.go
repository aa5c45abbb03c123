package live

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestParseResolve(t *testing.T) {
	o := Overrides{}
	if err := o.ParseResolve("WWW.example.test=203.0.113.10,::ffff:203.0.113.11"); err != nil {
		t.Fatal(err)
	}
	if got := o["www.example.test"]; len(got) != 2 || got[1] != netip.MustParseAddr("203.0.113.11") {
		t.Errorf("overrides %v", o)
	}
	if err := o.ParseResolve("Static.Example.test"); err != nil {
		t.Fatal(err)
	}
	if got, ok := o["static.example.test"]; !ok || len(got) != 0 {
		t.Errorf("a host alone: %v, %v; want it listed without addresses", got, ok)
	}
	if err := o.ParseResolve("www.h5.test.=203.0.113.12"); err != nil {
		t.Fatal(err)
	}
	if got := o["www.h5.test"]; len(got) != 1 {
		t.Errorf("a fully qualified name (trailing dot): %v; want it keyed without the dot, as the page's URL is", o)
	}
	// Hardening five: '*' and 'a,MAP' were host names that reached the
	// browser's resolver rules.
	for _, bad := range []string{"", "=1.2.3.4", "a.test=", "a.test=300.1.1.1", "a.test:443=1.2.3.4", "*", "*=1.2.3.4", "a,MAP", "a b.test", "[::1]=1.2.3.4", "-x.test"} {
		if err := (Overrides{}).ParseResolve(bad); err == nil || !strings.Contains(err.Error(), "--resolve") {
			t.Errorf("%q: %v, want a --resolve error", bad, err)
		}
	}
}

// fakeResolver answers from a table; pure logic's fake, not the network.
type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func TestResolveRefusesWhatIsNotPublic(t *testing.T) {
	ctx := context.Background()
	r := fakeResolver{
		"www.example.test": {netip.MustParseAddr("203.0.113.20"), netip.MustParseAddr("203.0.113.10"), netip.MustParseAddr("2001:db8::1")},
		"intranet.test":    {netip.MustParseAddr("10.1.2.3")},
		"self.test":        {netip.MustParseAddr("::1")},
		"bed.test":         {netip.MustParseAddr("198.19.0.10")},
		"v6only.test":      {netip.MustParseAddr("2001:db8::2")},
	}
	p := Policy{Local: []netip.Addr{netip.MustParseAddr("203.0.113.77")}}
	got, err := p.Resolve(ctx, r, Overrides{}, "WWW.example.test")
	if err != nil || len(got) != 2 || got[0] != netip.MustParseAddr("203.0.113.10") {
		t.Errorf("public: %v, %v; want its two IPv4 addresses, sorted", got, err)
	}
	for host, want := range map[string]string{
		"intranet.test": "a private address: aiming a benchmark there needs --allow-private",
		"self.test":     "a loopback address",
		"bed.test":      "cannot be served from inside the testbed",
		"v6only.test":   "no IPv4 address",
		"nowhere.test":  "no such host (check the name, or give its address with --resolve nowhere.test=ADDR)",
		"127.0.0.1":     "a loopback address",
		// Hardening five: one of the host's own addresses, not loopback,
		// reached every port of the host.
		"203.0.113.77": "one of this machine's own addresses: aiming a benchmark there needs --allow-private",
	} {
		if _, err := p.Resolve(ctx, r, Overrides{}, host); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", host, err, want)
		}
	}
	if got, err := (Policy{AllowPrivate: true}).Resolve(ctx, r, Overrides{}, "intranet.test"); err != nil || len(got) != 1 {
		t.Errorf("--allow-private: %v, %v", got, err)
	}
	o := Overrides{}
	if err := o.ParseResolve("intranet.test=203.0.113.30"); err != nil {
		t.Fatal(err)
	}
	if got, err := p.Resolve(ctx, r, o, "intranet.test"); err != nil || got[0] != netip.MustParseAddr("203.0.113.30") {
		t.Errorf("--resolve wins over the resolver: %v, %v", got, err)
	}
	o.ParseResolve("www.example.test")
	if got, err := p.Resolve(ctx, r, o, "www.example.test"); err != nil || len(got) != 2 {
		t.Errorf("a host --resolve names alone: %v, %v; want the resolver's addresses", got, err)
	}
	o = Overrides{}
	o.ParseResolve("staging.test=192.168.1.5")
	if _, err := p.Resolve(ctx, r, o, "staging.test"); err == nil || !strings.Contains(err.Error(), "--allow-private") {
		t.Errorf("a private --resolve address: %v, want it refused too", err)
	}
}

func TestPacerKeepsOneLoadPerSecondPerOrigin(t *testing.T) {
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	p := &Pacer{MaxLoads: 3}
	a, b := []string{"https://a.test"}, []string{"https://b.test", "https://a.test"}
	if w, err := p.Wait(start, a); w != 0 || err != nil {
		t.Errorf("first load waits %v, %v", w, err)
	}
	p.Started(start, a)
	if w, _ := p.Wait(start.Add(300*time.Millisecond), b); w != 700*time.Millisecond {
		t.Errorf("a load sharing an origin 300 ms later waits %v, want 700ms", w)
	}
	if w, _ := p.Wait(start.Add(300*time.Millisecond), []string{"https://c.test"}); w != 0 {
		t.Errorf("another origin waits %v", w)
	}
	p.Started(start.Add(time.Second), b)
	p.Started(start.Add(2*time.Second), a)
	if _, err := p.Wait(start.Add(time.Hour), a); err == nil || !strings.Contains(err.Error(), "--max-loads 3") {
		t.Errorf("past the cap: %v", err)
	}
}

func TestAgentSuffix(t *testing.T) {
	if err := CheckAgentSuffix(DefaultAgentSuffix); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"", strings.Repeat("x", MaxAgentSuffixBytes+1), "a\r\nX-Injected: 1", "café"} {
		if err := CheckAgentSuffix(bad); err == nil {
			t.Errorf("%.30q accepted", bad)
		}
	}
	var dnsErr error = &net.DNSError{Err: "server misbehaving", Name: "x"}
	if got := lookupReason(fmt.Errorf("lookup: %w", dnsErr)); got.Error() != "server misbehaving" {
		t.Errorf("lookupReason %v", got)
	}
}

func TestBaseRTTChanged(t *testing.T) {
	b := BaseRTT{Median: 20 * time.Millisecond}
	for after, want := range map[time.Duration]bool{21 * time.Millisecond: false, 26 * time.Millisecond: true, 14 * time.Millisecond: true, 20500 * time.Microsecond: false} {
		if got := b.Changed(BaseRTT{Median: after}, 0.2); got != want {
			t.Errorf("20 ms then %v: changed %v, want %v", after, got, want)
		}
	}
	small := BaseRTT{Median: 200 * time.Microsecond}
	if small.Changed(BaseRTT{Median: 900 * time.Microsecond}, 0.2) {
		t.Error("a change under a millisecond counted")
	}
}
