package experiment

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/server"
)

// notFirstVisit says how a first visit's load m of req carried state of an
// earlier load, "" if the servers' records show none: a connection that
// resumed a TLS session or sent 0-RTT data (a session ticket kept from an
// earlier load), fewer requests served than the page's resources the
// browser loaded (a response from a cache), or, where the browser looks
// the hosts up itself, fewer lookups than hosts it reached (an address
// from a DNS cache). A discovering load that used h3 before its host
// offered it (remembered Alt-Svc) is client.Verify's. Warm browsers are
// held to it load by load; so is every other browser, which must pass it
// too.
func notFirstVisit(req client.Request, m *Measured) string {
	if req.Visit != "" && req.Visit != factor.FirstVisit {
		return ""
	}
	var problems []string
	if kinds := resumedHandshakes(m.Connections); kinds != "" {
		problems = append(problems, fmt.Sprintf("connections resumed TLS sessions of an earlier load (%s)", kinds))
	}
	if loaded := loadedFromTestbed(req, m.PageMetrics); m.ServerRequests.Total() < int64(loaded) {
		problems = append(problems, fmt.Sprintf("the servers served %d requests for the %d the page loaded: the others came from a cache", m.ServerRequests.Total(), loaded))
	}
	if hosts := reachedHosts(m.PageMetrics); req.DNS.Resolves() && m.DNSQueries < int64(hosts) {
		problems = append(problems, fmt.Sprintf("%d lookups at the testbed's DNS for %d hosts: the others' addresses came from a cache", m.DNSQueries, hosts))
	}
	if len(problems) == 0 {
		return ""
	}
	return "not a first visit: " + strings.Join(problems, "; ")
}

// resumedHandshakes counts the connections that served requests after a
// resumed or 0-RTT handshake with no full handshake to the same server
// name opened before them in the load (whose ticket they could have
// used), as "2 resumed, 1 0rtt"; "" if none did.
func resumedHandshakes(recs []server.ConnRecord) string {
	counts := map[string]int{}
	for _, r := range recs {
		resumed := r.Handshake == server.HandshakeResumed || r.Handshake == server.Handshake0RTT
		if r.Requests > 0 && resumed && !ticketInLoad(recs, r) {
			counts[r.Handshake]++
		}
	}
	var parts []string
	for _, kind := range server.HandshakeKinds() {
		if n := counts[kind]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, kind))
		}
	}
	return strings.Join(parts, ", ")
}

// ticketInLoad says whether a connection of recs to r's server name and
// over r's transport made a full handshake before r opened: a ticket r may
// have resumed within the load. Where a server does not record when a
// connection opened (Caddy's resumed ones), any time counts; where it does
// not record a transport (Caddy's connections that served no request),
// either counts, and so does any name where it is not sure of the name.
func ticketInLoad(recs []server.ConnRecord, r server.ConnRecord) bool {
	for _, f := range recs {
		before := f.OpenedAt.Before(r.OpenedAt) || f.OpenedAt.IsZero() || r.OpenedAt.IsZero()
		transport := f.Transport == r.Transport || f.Transport == ""
		if f.Handshake == server.HandshakeFull && (f.ServerName == r.ServerName || f.ServerName == "") && transport && before {
			return true
		}
	}
	return false
}

// loadedFromTestbed counts the requests of req's page that the browser
// reports loaded: the document and each expected resource it lists.
func loadedFromTestbed(req client.Request, m client.PageMetrics) int {
	listed := map[string]bool{}
	for _, r := range m.Resources {
		listed[r.URL] = true
	}
	n := 1
	for _, u := range req.Expected {
		if listed[u] {
			n++
		}
	}
	return n
}

// reachedHosts counts the distinct host names the browser loaded the
// document and resources from (address literals need no lookup).
func reachedHosts(m client.PageMetrics) int {
	hosts := map[string]bool{}
	for _, raw := range append([]string{m.DocumentURL}, resourceURLs(m)...) {
		u, err := url.Parse(raw)
		if err != nil || u.Hostname() == "" || isAddress(u.Hostname()) {
			continue
		}
		hosts[u.Hostname()] = true
	}
	return len(hosts)
}

// resourceURLs are the URLs of m's resources.
func resourceURLs(m client.PageMetrics) []string {
	urls := make([]string, 0, len(m.Resources))
	for _, r := range m.Resources {
		urls = append(urls, r.URL)
	}
	return urls
}

// isAddress says whether host is an IP address rather than a name.
func isAddress(host string) bool {
	_, err := netip.ParseAddr(host)
	return err == nil
}
