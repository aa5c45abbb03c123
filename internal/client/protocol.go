// Package client loads pages and measures them. The Chromium loader drives a
// real headless Chromium (chromedp) inside the client namespace with one
// protocol forced per load, reads Navigation Timing and Resource Timing, and
// verifies that every resource arrived over the requested protocol.
package client

import (
	"fmt"
	"strings"
)

// Protocol is an HTTP version under test.
type Protocol string

// The protocols quicbench compares.
const (
	H1 Protocol = "h1" // HTTP/1.1 over TLS 1.3 over TCP
	H2 Protocol = "h2" // HTTP/2 over TLS 1.3 over TCP
	H3 Protocol = "h3" // HTTP/3 over QUIC
)

// AllProtocols lists every protocol, in the order tables show them.
var AllProtocols = []Protocol{H1, H2, H3}

// NextHop is the nextHopProtocol value that Resource Timing reports for p.
func (p Protocol) NextHop() string {
	switch p {
	case H1:
		return "http/1.1"
	case H2:
		return "h2"
	case H3:
		return "h3"
	}
	return ""
}

// ParseProtocols parses a comma-separated list such as "h1,h2,h3". It
// rejects unknown names and duplicates.
func ParseProtocols(s string) ([]Protocol, error) {
	var out []Protocol
	seen := map[Protocol]bool{}
	for _, f := range strings.Split(s, ",") {
		p := Protocol(strings.ToLower(strings.TrimSpace(f)))
		if p.NextHop() == "" {
			return nil, fmt.Errorf("protocol %q is unknown: use h1, h2 or h3, comma-separated", strings.TrimSpace(f))
		}
		if seen[p] {
			return nil, fmt.Errorf("protocol %s is listed twice", p)
		}
		seen[p] = true
		out = append(out, p)
	}
	return out, nil
}
