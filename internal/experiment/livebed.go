package experiment

import (
	"bytes"
	"cmp"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/live"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/spec"
	"github.com/quicbench/quicbench/internal/testbed"
)

// liveState is what a live page's testbed knows beyond a bed's: what each
// host it may reach offered, and the path's own round trip beyond the
// emulator, before and after the loads.
type liveState struct {
	offers      []live.Offer
	base, after live.BaseRTT
	// ping is what ICMP echoes measured before the loads (Answered 0:
	// none answered).
	ping live.Ping
	// target is the page's origin, where the base RTT is measured.
	target netip.AddrPort
	// agentSuffix ends the browsers' User-Agent.
	agentSuffix string
	// failUnverified fails a load with requests it cannot verify.
	failUnverified bool
}

// Probing bounds of a live page's testbed.
const (
	liveProbeTimeout = 10 * time.Second
	baseRTTTries     = 5
	baseRTTTimeout   = 3 * time.Second
	// pings echoes go every pingInterval, and the answers are awaited
	// pingWait after the last.
	pings        = 20
	pingInterval = 20 * time.Millisecond
	pingWait     = 2 * time.Second
	// maxCABytes bounds a staging CA's PEM file.
	maxCABytes = 1 << 20
)

// startLiveTestbed builds the testbed of a live page: its hosts resolved
// and checked against the policy, the network with an uplink and no
// servers, what each host offers probed from beyond the emulator, and the
// path's own round trip measured. A host that cannot be reached, or a
// page that does not offer a protocol the spec asks for, stops the run
// with one line that says why.
func (r *runner) startLiveTestbed(ctx context.Context, setup *plan.Setup) (*bed, error) {
	u, page, addrs, err := resolveLivePage(ctx, r.spec.Live, setup.Page.URL)
	if err != nil {
		return nil, err
	}
	if err := safefs.MkdirAll(r.cfg.Dir, "testbed", 0o755); err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	roots, caCopy, err := r.liveRoots()
	if err != nil {
		return nil, err
	}
	tb, err := testbed.StartLive(testbed.LiveConfig{Stem: netns.NewRunName("r"), Link: testbed.LinkOf(setup.Network, setup.UpSeed, setup.DownSeed),
		Site: page, Addrs: addrs, CAFile: caCopy})
	if err != nil {
		return nil, fmt.Errorf("testbed for %s: %w", setup.Key(), err)
	}
	b := r.newBed(tb, page, setup)
	b.live = &liveState{target: netip.AddrPortFrom(addrs[u.Hostname()], 443), agentSuffix: r.spec.Live.AgentSuffixOrDefault(),
		failUnverified: r.spec.Live.FailUnverified}
	if err := r.probeLive(ctx, b, u, roots); err != nil {
		return nil, errors.Join(err, b.close())
	}
	if err := r.addClients(b); err != nil {
		return nil, errors.Join(err, b.close())
	}
	return b, nil
}

// CheckLive resolves the hosts of every live page of s, as its run will,
// before anything runs: an address the policy refuses (loopback, private,
// this machine's own) or a name that does not resolve is one line, and no
// run directory, header or table is made.
func CheckLive(ctx context.Context, s *spec.Spec) error {
	for _, p := range s.Pages {
		if p.Kind != factor.PageLive {
			continue
		}
		if _, _, _, err := resolveLivePage(ctx, s.Live, p.URL); err != nil {
			return err
		}
	}
	return nil
}

// resolveLivePage parses a live page's URL and resolves every host it may
// reach (its own and rules' others) under rules' policy: the page, its
// site and their addresses.
func resolveLivePage(ctx context.Context, rules spec.Live, rawURL string) (*url.URL, *site.Site, map[string]netip.Addr, error) {
	u, err := factor.ParseLiveURL(rawURL)
	if err != nil {
		return nil, nil, nil, &InputError{Err: err}
	}
	page := site.LiveSite(u, slices.Sorted(maps.Keys(rules.Resolve)))
	addrs, err := resolveHosts(ctx, rules, page.Hosts())
	return u, page, addrs, err
}

// localAddrs are this machine's own addresses (every interface's in
// this network namespace), which a live page may not aim at without
// --allow-private.
func localAddrs() []netip.Addr {
	addrs, _ := net.InterfaceAddrs()
	var out []netip.Addr
	for _, a := range addrs {
		if prefix, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, prefix.Addr().Unmap())
		}
	}
	return out
}

// resolveHosts resolves each host (rules' --resolve addresses first,
// else the host's resolver), refusing addresses the policy does not
// allow; each host gets its first address.
func resolveHosts(ctx context.Context, rules spec.Live, hosts []string) (map[string]netip.Addr, error) {
	policy := live.Policy{AllowPrivate: rules.AllowPrivate, Local: localAddrs()}
	addrs := map[string]netip.Addr{}
	for _, h := range hosts {
		got, err := policy.Resolve(ctx, net.DefaultResolver, rules.Resolve, h)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &InputError{Err: err}
		}
		addrs[h] = got[0]
	}
	return addrs, nil
}

// liveCAFile is the run's own copy of the spec's staging CA, in the run
// directory: the user's file is read once, and the browsers' tools are
// handed this copy, never the user's path.
const liveCAFile = "testbed/live-ca.pem"

// liveRoots reads the spec's staging CA (nil and "" for none) once,
// through a descriptor, and returns it with the path of the run's copy.
func (r *runner) liveRoots() (*x509.CertPool, string, error) {
	path := r.spec.LiveCA()
	if path == "" {
		return nil, "", nil
	}
	pem, err := safefs.ReadRegular(path, maxCABytes)
	if err != nil {
		return nil, "", inputErrorf("--ca: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, "", inputErrorf("--ca %s holds no PEM certificate: give the staging site's CA certificate in PEM", filepath.Base(path))
	}
	if err := safefs.WriteFile(r.cfg.Dir, liveCAFile, pem, 0o644); err != nil {
		return nil, "", fmt.Errorf("run directory: %w", err)
	}
	return pool, filepath.Join(r.cfg.Dir, liveCAFile), nil
}

// probeLive asks each host what it offers, from the servers namespace
// (beyond the emulator, through the uplink): the page's host for the
// page, each other host for the first of its resources the page's
// document names (else "/"), tells the browser the leaf
// keys a staging CA vouched for, refuses a page without a protocol the
// spec asks for, and measures the page origin's round trip.
func (r *runner) probeLive(ctx context.Context, b *bed, u *url.URL, roots *x509.CertPool) error {
	dial := live.DialFunc(b.Topo.Servers.DialContext)
	var keys []string
	var document bytes.Buffer
	var paths map[string]string
	for i, h := range b.page.Hosts() { // the page's own first
		path, body := u.RequestURI(), io.Writer(&document)
		if i > 0 {
			path, body = cmp.Or(paths[h], "/"), nil
		}
		offer, err := live.Probe(ctx, dial, h, b.Addrs[h], path, b.live.agentSuffix, roots, liveProbeTimeout, body)
		if i == 0 {
			paths = live.FirstPaths(document.Bytes(), b.page.Hosts()[1:])
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &InputError{Err: fmt.Errorf("live page: %w", err)}
		}
		b.live.offers = append(b.live.offers, offer)
		if offer.LeafSPKI != "" && !slices.Contains(keys, offer.LeafSPKI) {
			keys = append(keys, offer.LeafSPKI)
		}
	}
	b.Certs.SPKIHash = strings.Join(keys, ",")
	page := b.live.offers[0]
	for _, p := range r.spec.Protocols() {
		if p == factor.H3 && !page.H3 {
			return inputErrorf("%s does not offer HTTP/3: its answer had no Alt-Svc h3=\":443\" (Alt-Svc %q): leave h3 out (--protocols h1,h2), or turn HTTP/3 on at the site", page.Host, page.AltSvc)
		}
		if p == factor.H2 && !page.H2 {
			return inputErrorf("%s does not offer HTTP/2: its TLS handshake chose http/1.1: leave h2 out (--protocols h1,h3)", page.Host)
		}
	}
	var err error
	b.live.base, err = live.MeasureBaseRTT(ctx, dial, b.live.target, baseRTTTries, baseRTTTimeout)
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("live page: the round trip beyond the emulator to %s: %w", page.Host, err)
	}
	if err != nil {
		return err
	}
	b.live.ping, err = live.MeasurePing(ctx, b.Topo.Servers.ListenPacket, b.live.target.Addr(), pings, pingInterval, pingWait)
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		r.cfg.Log.Info("live page: the path's loss is not known", "why", err)
	}
	r.cfg.Log.Info("live page", "origins", b.live.origins(), "base_rtt", b.live.base.String(), "ping", b.live.ping.String())
	return nil
}

// origins are the hosts with what each offered, as the testbed record
// keeps them.
func (l *liveState) origins() string {
	var parts []string
	for _, o := range l.offers {
		parts = append(parts, fmt.Sprintf("%s %s: %s", o.Host, o.Addr, o.Protocols()))
	}
	return strings.Join(parts, "; ")
}

// hostsOffering are the hosts that offer p: every host h1, those whose
// TLS chose h2 for h2, those that advertised h3 for h3.
func (l *liveState) hostsOffering(p factor.Protocol) []string {
	var out []string
	for _, o := range l.offers {
		if p == factor.H1 || (p == factor.H2 && o.H2) || (p == factor.H3 && o.H3) {
			out = append(out, o.Host)
		}
	}
	return out
}

// measureAfter measures the base RTT again after the loads, so that the
// record says whether the path changed during them.
func (l *liveState) measureAfter(ctx context.Context, servers *netns.Namespace) {
	l.after, _ = live.MeasureBaseRTT(ctx, live.DialFunc(servers.DialContext), l.target, baseRTTTries, baseRTTTimeout)
}

// record puts what the live page's testbed measured into its record.
func (l *liveState) record(rec *results.Testbed) {
	if l == nil {
		return
	}
	rec.LiveOrigins = l.origins()
	if l.base.Handshakes > 0 {
		rec.BaseRTTMs = results.F(ms(l.base.Median.Seconds()))
	}
	if l.after.Handshakes > 0 {
		rec.BaseRTTAfterMs = results.F(ms(l.after.Median.Seconds()))
	}
	if l.ping.Answered > 0 {
		rec.BasePingMs, rec.BaseLossPct = results.F(ms(l.ping.Median.Seconds())), results.F(l.ping.LossPct())
	}
}

// judge verifies a live load beyond what the browser said: the capture
// holds no packet the client sent over the other transport to the hosts
// that offer the protocol (a forced h3 load falling back to TCP, an h2
// load's QUIC); the requests to hosts the run does not pin are listed
// (never sent: cause "host not pinned") and with the requests over
// another protocol to hosts that do not offer it, counted as excluded.
func (l *liveState) judge(b *bed, m *Measured, req client.Request) completeness {
	var out completeness
	out.LoadRequests, out.LoadBytes = b.replay.loadWork(m.Result)
	unknown := m.UnknownHosts
	m.Replay = server.Replay{Unmatched: int64(unknown.Count), UnmatchedRequests: unknown.Requests}
	for range unknown.Requests {
		out.Causes = append(out.Causes, results.CauseUnpinned)
	}
	out.Steady = int64(unknown.Count) // excused: the rule a live run states
	verdict := client.LiveVerdictOf(req, m.PageMetrics)
	out.LiveExcluded = int64(unknown.Count + verdict.Excluded)
	if m.OK() {
		m.Failure = otherTransport(m, req, b.Addrs)
	}
	if m.OK() && l.failUnverified && out.LiveExcluded > 0 {
		example := verdict.ExcludedExample
		if len(unknown.Requests) > 0 {
			example = unknown.Requests[0] + " (host not pinned)"
		}
		m.Failure = fmt.Sprintf("%d requests could not be verified over %s and the rule is to fail (unverified: fail), e.g. %s", out.LiveExcluded, req.Protocol, example)
	}
	return out
}

// otherTransport names the first packet the client sent in the load to a
// verified host's address on port 443 over the transport the protocol
// does not use; "" when there is none. The site's own packets are not
// judged: a server still sends to a connection of an earlier load's
// browser (QUIC's probes) until its idle timeout, which quicbench cannot
// shorten on a site it does not run.
func otherTransport(m *Measured, req client.Request, addrs map[string]netip.Addr) string {
	verified := map[netip.Addr]string{}
	for _, h := range req.VerifyHosts {
		verified[addrs[h]] = h
	}
	for h, a := range addrs { // an address a host without the protocol shares is not judged
		if !slices.Contains(req.VerifyHosts, h) {
			delete(verified, a)
		}
	}
	wantUDP := req.Protocol == factor.H3
	for _, p := range m.Packets {
		host, ok := verified[p.Conn.Server.Addr()]
		if ok && !p.Down && p.Conn.Server.Port() == 443 && p.Conn.UDP != wantUDP {
			transport := "TCP"
			if p.Conn.UDP {
				transport = "UDP (QUIC)"
			}
			return fmt.Sprintf("the capture holds %s to %s (%s:443) in an %s load: the browser did not keep to the protocol asked for", transport, host, p.Conn.Server.Addr(), req.Protocol)
		}
	}
	return ""
}

// shape makes req a live load's of protocol p: QUIC forced on the hosts
// that advertise h3, the requests to the hosts that offer p verified,
// those to hosts the run does not pin listed (the browser cannot resolve
// them), the site's own broken images not the load's fault, and the
// browser's User-Agent ending with the run's suffix.
func (l *liveState) shape(req *client.Request, p factor.Protocol) {
	req.Hosts, req.VerifyHosts = l.hostsOffering(factor.H3), l.hostsOffering(p)
	if req.VerifyHosts == nil {
		req.VerifyHosts = []string{}
	}
	req.Expected, req.Documents, req.Deterministic = nil, nil, false
	req.ListUnknownHosts, req.UserAgentSuffix = true, l.agentSuffix
	req.ExcuseImage = func(string) bool { return true }
}

// pace waits, for a live page, until its origins may be loaded again
// (one load per second per origin), and notes the load's start; past
// the run's cap of loads it stops the run, its trials so far kept.
func (r *runner) pace(ctx context.Context, b *bed) error {
	if b.live == nil {
		return nil
	}
	origins := b.page.Hosts()
	wait, err := r.pacer.Wait(time.Now(), origins)
	if err != nil {
		return &InputError{Err: err}
	}
	if err := client.Pause(ctx, wait); err != nil {
		return err
	}
	r.pacer.Started(time.Now(), origins)
	return nil
}
