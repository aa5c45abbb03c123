// Package nginx runs Debian's nginx as quicbench's second, external server
// stack: it serves a site's archive over HTTP/1.1 and HTTP/2 with TLS 1.3
// inside the servers namespace, with the same bytes and the same cache
// headers as the Go origin, and reads per-connection records from its
// access log and the kernel (ss). HTTP/3 stays with quic-go: Debian's nginx
// 1.22 has no QUIC.
//
// This file writes nginx.conf (package sitefiles writes the site); server.go
// runs nginx.
package nginx

import (
	"crypto/rand"
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"

	"github.com/quicbench/quicbench/internal/origin"
	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/sitefiles"
)

// accessLogFormat is one line per request: connection serial number,
// client address, HTTP version, "r" if the TLS session was resumed (else
// "."), TLS version, SNI, status, bytes sent, body bytes sent, and the
// request's method and URL (a 404 is a request the site does not have:
// TakeReplay).
const accessLogFormat = `$connection $remote_addr:$remote_port $server_protocol $ssl_session_reused $ssl_protocol $ssl_server_name $status $bytes_sent $body_bytes_sent $request_method https://$host$request_uri`

// confParams is what nginx.conf is made of.
type confParams struct {
	dir       string // nginx's working directory (prefix)
	root      string // the archive
	certFile  string
	keyFile   string
	port      int
	workers   int // 0: auto
	cache     bool
	altSvc    string // the Alt-Svc field of every response; "" none
	addrs     map[string]netip.Addr
	hosts     []string
	locations map[string][]sitefiles.Location
}

// conf renders nginx.conf. HTTP/2's stream limit is Go's default (250), the
// idle timeout Go origin's (5 min), and session tickets use a key file so
// that they stay valid across reloads.
func conf(p confParams) string {
	var b strings.Builder
	workers := "auto"
	if p.workers > 0 {
		workers = fmt.Sprint(p.workers)
	}
	fmt.Fprintf(&b, `# written by quicbench; nginx runs it in the servers namespace
daemon off;
master_process on;
user root;
worker_processes %s;
pid %s;
error_log %s warn;
# A reload closes idle keepalive connections at once; this closes the rest
# (such as a connection that has not sent its first request) after 1 s.
worker_shutdown_timeout 1s;
events { worker_connections 4096; }
http {
    log_format quicbench '%s';
    access_log %s quicbench;
    client_body_temp_path %s;
    proxy_temp_path %s;
    fastcgi_temp_path %s;
    uwsgi_temp_path %s;
    scgi_temp_path %s;
    sendfile on;
    server_tokens off;
    keepalive_timeout 300s;
    keepalive_requests 1000000;
    http2_max_concurrent_streams 250;
    large_client_header_buffers 4 %s;
    types { }
    ssl_protocols TLSv1.3;
    ssl_certificate %s;
    ssl_certificate_key %s;
    ssl_session_tickets on;
    ssl_session_ticket_key %s;
    ssl_session_cache off;
`, workers, q(filepath.Join(p.dir, "nginx.pid")), q(filepath.Join(p.dir, "error.log")), accessLogFormat,
		q(filepath.Join(p.dir, "access.log")),
		q(filepath.Join(p.dir, "tmp", "body")), q(filepath.Join(p.dir, "tmp", "proxy")), q(filepath.Join(p.dir, "tmp", "fastcgi")),
		q(filepath.Join(p.dir, "tmp", "uwsgi")), q(filepath.Join(p.dir, "tmp", "scgi")), fmt.Sprintf("%dk", server.MaxHeaderBytes>>10),
		q(p.certFile), q(p.keyFile), q(filepath.Join(p.dir, "ticket.key")))
	b.WriteString("    " + commonHeaders(p) + "\n")
	if p.cache {
		b.WriteString("    etag on;\n    if_modified_since exact;\n")
	} else {
		b.WriteString("    etag off;\n    if_modified_since off;\n")
	}
	for _, host := range p.hosts {
		writeServer(&b, p, host)
	}
	b.WriteString("}\n")
	return b.String()
}

// writeServer writes host's server block into b: its address, its root,
// a location for each of its files (their type, and their coding where
// encoded) and a 404 for any other path.
func writeServer(b *strings.Builder, p confParams, host string) {
	fmt.Fprintf(b, "    server {\n        listen %s ssl http2;\n        server_name %s;\n        root %s;\n        index index.html;\n",
		netip.AddrPortFrom(p.addrs[host], uint16(p.port)), q(host), q(filepath.Join(p.root, host)))
	for _, loc := range p.locations[host] {
		// A location's own add_header replaces the inherited ones:
		// an encoded file repeats them.
		extra := ""
		if loc.Encoding != "" {
			extra = fmt.Sprintf(" add_header Content-Encoding %s always; %s", q(loc.Encoding), commonHeaders(p))
		}
		fmt.Fprintf(b, "        location = %s { default_type %s;%s }\n", q(loc.Path), q(loc.ContentType), extra)
	}
	b.WriteString("        location / { return 404; }\n    }\n")
}

// q quotes s for nginx.conf.
func q(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// writeTicketKey writes an 80-byte session ticket key (nginx's AES-256
// format) to dir/name.
func writeTicketKey(dir, name string) error {
	key := make([]byte, 80)
	rand.Read(key)
	return safefs.WriteFile(dir, name, key, 0o600)
}

// commonHeaders are the headers of every response, as the Go origin sends
// them: Timing-Allow-Origin, Access-Control-Allow-Origin, the cache
// policy's Cache-Control, and Alt-Svc where h3 is offered.
func commonHeaders(p confParams) string {
	cc := `"no-store"`
	if p.cache {
		cc = q(origin.CacheControl)
	}
	out := `add_header Timing-Allow-Origin "*" always; add_header Access-Control-Allow-Origin "*" always; add_header Cache-Control ` + cc + ` always;`
	if p.altSvc != "" {
		out += ` add_header Alt-Svc ` + q(p.altSvc) + ` always;`
	}
	return out
}
