package testbed

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"

	"github.com/quicbench/quicbench/internal/netns"
)

// Resolver is a testbed's DNS server: in the servers namespace on
// netns.ResolverAddr, port 53 over UDP and TCP, behind the emulated link,
// so that a browser that resolves (dns: resolved) pays each lookup at the
// network's round trip. It answers A for each origin host, HTTPS records
// with alpn h3 where SetHTTPS says so (discovery: https-rr), empty answers
// for other types of a known host and NXDOMAIN for any other name. Answers
// live TTL seconds.
type Resolver struct {
	addrs   map[string]netip.Addr // by lower-case host name without the trailing dot
	https   atomic.Bool
	queries atomic.Int64
	servers []*dns.Server
}

// TTL is how long, in seconds, the resolver's answers may be cached: a
// repeat visit finds them in the browser's cache, as a user's would.
const TTL = 300

// StartResolver serves addrs' names from ns on netns.ResolverAddr:53.
func StartResolver(ns *netns.Namespace, addrs map[string]netip.Addr) (*Resolver, error) {
	r := &Resolver{addrs: map[string]netip.Addr{}}
	for h, a := range maps.All(addrs) {
		r.addrs[strings.ToLower(h)] = a
	}
	at := netip.AddrPortFrom(netns.ResolverAddr, 53).String()
	pc, err := ns.ListenPacket("udp4", at)
	if err != nil {
		return nil, fmt.Errorf("resolver: %w", err)
	}
	ln, err := ns.Listen("tcp4", at)
	if err != nil {
		pc.Close()
		return nil, fmt.Errorf("resolver: %w", err)
	}
	r.servers = []*dns.Server{{PacketConn: pc, Handler: r}, {Listener: ln, Handler: r}}
	for _, s := range r.servers {
		started := make(chan struct{})
		s.NotifyStartedFunc = func() { close(started) }
		go s.ActivateAndServe()
		<-started
	}
	return r, nil
}

// SetHTTPS makes the resolver answer HTTPS records with alpn h3 from now
// on (on) or none.
func (r *Resolver) SetHTTPS(on bool) { r.https.Store(on) }

// Queries is how many questions the resolver has answered since it
// started.
func (r *Resolver) Queries() int64 { return r.queries.Load() }

// Close stops serving and closes its sockets.
func (r *Resolver) Close() error {
	var errs []error
	for _, s := range r.servers {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		errs = append(errs, s.ShutdownContext(ctx))
		cancel()
	}
	return errors.Join(errs...)
}

// ServeDNS answers one query.
func (r *Resolver) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	out := r.Answer(req)
	w.WriteMsg(out)
}

// Answer is the resolver's reply to req (its first question).
func (r *Resolver) Answer(req *dns.Msg) *dns.Msg {
	out := new(dns.Msg)
	out.SetReply(req)
	out.Authoritative = true
	if len(req.Question) == 0 {
		out.Rcode = dns.RcodeFormatError
		return out
	}
	r.queries.Add(1)
	q := req.Question[0]
	addr, known := r.addrs[strings.ToLower(strings.TrimSuffix(q.Name, "."))]
	if !known || q.Qclass != dns.ClassINET {
		out.Rcode = dns.RcodeNameError
		return out
	}
	hdr := dns.RR_Header{Name: q.Name, Rrtype: q.Qtype, Class: dns.ClassINET, Ttl: TTL}
	switch {
	case q.Qtype == dns.TypeA:
		out.Answer = append(out.Answer, &dns.A{Hdr: hdr, A: net.IP(addr.AsSlice())})
	case q.Qtype == dns.TypeHTTPS && r.https.Load():
		out.Answer = append(out.Answer, &dns.HTTPS{SVCB: dns.SVCB{Hdr: hdr, Priority: 1, Target: ".",
			Value: []dns.SVCBKeyValue{&dns.SVCBAlpn{Alpn: []string{"h3", "h2"}}, &dns.SVCBIPv4Hint{Hint: []net.IP{net.IP(addr.AsSlice())}}}}})
	}
	return out
}
