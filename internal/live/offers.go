package live

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"
)

// Offer is what one origin of a live site offers, as a probe from
// beyond the emulator found it before the run.
type Offer struct {
	// Host is the origin's host name, and Addr the address it was
	// reached at (port 443).
	Host string
	Addr netip.Addr
	// H2 says its TLS handshake chose HTTP/2 where h2 and http/1.1 were
	// offered; H3 says its response advertised HTTP/3 on port 443 of the
	// same host (Alt-Svc: h3=":443").
	H2, H3 bool
	// AltSvc is the response's Alt-Svc field as sent ("" for none), cut
	// at MaxAltSvcBytes.
	AltSvc string
	// Status is the probe's HTTP status.
	Status int
	// LeafSPKI is the base64 SHA-256 of the served leaf's public key when
	// its chain verified only against the roots the run was given (a
	// staging CA): the browser is told to accept that key. "" when the
	// system's roots verified it.
	LeafSPKI string
}

// Protocols are the protocols the origin offers, newest first, as text
// ("h3 h2 http/1.1").
func (o Offer) Protocols() string {
	out := []string{}
	if o.H3 {
		out = append(out, "h3")
	}
	if o.H2 {
		out = append(out, "h2")
	}
	return strings.Join(append(out, "http/1.1"), " ")
}

// MaxProbeBody bounds the body a probe reads, in bytes.
const MaxProbeBody = 1 << 20

// FirstPaths finds, for each of hosts, the path (and query) of the first
// absolute reference to it in a document ("//host/path", as in
// https://host/path or a protocol-relative URL): a resource the page
// loads from that host, which answers a probe as the page's requests are
// answered (a server may leave Alt-Svc off a 404). A host the document
// does not name is left out.
func FirstPaths(document []byte, hosts []string) map[string]string {
	text := string(document)
	lower := asciiLower(text) // byte for byte: indexes into text too
	out := map[string]string{}
	for _, h := range hosts {
		at := strings.Index(lower, "//"+asciiLower(h)+"/")
		if at < 0 {
			continue
		}
		rest := text[at+2+len(h):]
		end := strings.IndexAny(rest, "\"' <>()\\\n\r\t#")
		if end < 0 {
			end = len(rest)
		}
		if path := rest[:end]; len(path) <= MaxPathBytes {
			out[h] = path
		}
	}
	return out
}

// asciiLower is s with its ASCII letters in lower case, every other byte
// as it was.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// MaxPathBytes bounds a path FirstPaths keeps.
const MaxPathBytes = 2048

// MaxAltSvcBytes bounds the Alt-Svc field an Offer keeps.
const MaxAltSvcBytes = 512

// AdvertisesH3 reports whether an Alt-Svc field value offers HTTP/3 on
// port 443 of the same host: an alternative "h3" whose authority is
// ":443" (or "host:443" naming host itself). "clear" offers nothing.
func AdvertisesH3(altSvc, host string) bool {
	for _, alt := range strings.Split(altSvc, ",") {
		proto, authority, ok := strings.Cut(strings.TrimSpace(alt), "=")
		if !ok || strings.TrimSpace(proto) != "h3" {
			continue
		}
		authority, _, _ = strings.Cut(authority, ";")
		authority = strings.Trim(strings.TrimSpace(authority), `"`)
		if authority == ":443" || strings.EqualFold(authority, host+":443") {
			return true
		}
	}
	return false
}

// Probe asks host, at addr:443, for path over TLS offering h2 and
// http/1.1, with agent as its User-Agent, and says what the origin
// offers. roots are the certificates to trust beside the system's (nil:
// the system's alone). The body is read up to MaxProbeBody into body
// (nil: dropped). An error is one line that names the host, what failed
// and the fix.
func Probe(ctx context.Context, dial DialFunc, host string, addr netip.Addr, path, agent string, roots *x509.CertPool, timeout time.Duration, body io.Writer) (Offer, error) {
	offer := Offer{Host: host, Addr: addr}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var state tls.ConnectionState
	transport := &http.Transport{
		ForceAttemptHTTP2: true,
		DialTLSContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			c, err := tlsDial(ctx, dial, host, addr, roots, &offer)
			if err == nil {
				state = c.ConnectionState()
			}
			return c, err
		},
	}
	defer transport.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+host+path, nil)
	if err != nil {
		return offer, fmt.Errorf("probe %s: %w", host, err)
	}
	req.Header.Set("User-Agent", agent)
	resp, err := (&http.Client{Transport: transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		return offer, probeError(host, addr, err)
	}
	if body == nil {
		body = io.Discard
	}
	io.Copy(body, io.LimitReader(resp.Body, MaxProbeBody))
	resp.Body.Close()
	offer.Status, offer.H2 = resp.StatusCode, state.NegotiatedProtocol == "h2"
	offer.AltSvc = resp.Header.Get("Alt-Svc")
	offer.AltSvc = offer.AltSvc[:min(len(offer.AltSvc), MaxAltSvcBytes)]
	offer.H3 = AdvertisesH3(offer.AltSvc, host)
	return offer, nil
}

// tlsDial connects to host at addr:443 and completes TLS, verifying the
// chain against the system's roots, else against roots (then noting the
// leaf's key in offer).
func tlsDial(ctx context.Context, dial DialFunc, host string, addr netip.Addr, roots *x509.CertPool, offer *Offer) (*tls.Conn, error) {
	raw, err := dial(ctx, "tcp4", netip.AddrPortFrom(addr, 443).String())
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{ServerName: host, NextProtos: []string{"h2", "http/1.1"}, MinVersion: tls.VersionTLS12,
		InsecureSkipVerify: true, // verified below: the system's roots, else the run's
		VerifyConnection: func(cs tls.ConnectionState) error {
			spki, err := verifyChain(cs, host, roots)
			offer.LeafSPKI = spki
			return err
		}}
	c := tls.Client(raw, cfg)
	if err := c.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, err
	}
	return c, nil
}

// verifyChain verifies the served chain for host against the system's
// roots, else against roots; it gives the leaf's key hash when roots
// alone verified it.
func verifyChain(cs tls.ConnectionState, host string, roots *x509.CertPool) (leafSPKI string, err error) {
	if len(cs.PeerCertificates) == 0 {
		return "", errors.New("the server sent no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	leaf := cs.PeerCertificates[0]
	opts := x509.VerifyOptions{DNSName: host, Intermediates: inter}
	_, sysErr := leaf.Verify(opts)
	if sysErr == nil {
		return "", nil
	}
	if roots == nil {
		return "", sysErr
	}
	opts.Roots = roots
	if _, err := leaf.Verify(opts); err != nil {
		return "", sysErr
	}
	sum := sha256.Sum256(leaf.RawSubjectPublicKeyInfo)
	return base64.StdEncoding.EncodeToString(sum[:]), nil
}

// probeError is a probe's failure as one line with the fix for its kind.
func probeError(host string, addr netip.Addr, err error) error {
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var netErr net.Error
	switch {
	case errors.As(err, &unknownCA):
		return fmt.Errorf("%s (%s): its certificate is signed by an authority this machine does not trust: for a staging server, give its CA's PEM file with --ca FILE", host, addr)
	case errors.As(err, &hostErr):
		return fmt.Errorf("%s (%s): its certificate is not valid for that name (%s): check the URL, or the address --resolve gives it", host, addr, hostErr.Error())
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		return fmt.Errorf("%s (%s): no answer on port 443 in time: check that the site is up and reachable from this machine", host, addr)
	case strings.Contains(err.Error(), "connection refused"):
		return fmt.Errorf("%s (%s): port 443 refused the connection: check the address, or that the server listens there", host, addr)
	}
	return fmt.Errorf("%s (%s): %w", host, addr, err)
}
