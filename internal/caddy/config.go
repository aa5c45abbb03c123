// Package caddy runs Debian's Caddy as a server stack of its own: one
// process that serves a site's files over HTTP/1.1 and HTTP/2 (TCP, TLS
// 1.3) and HTTP/3 (its own QUIC: quic-go inside Caddy) from one generated
// configuration, with the bytes and the header fields the Go origin sends.
// It is the server Nepomuceno et al. (2018) measured. Each request's
// protocol, TLS session and status come from Caddy's JSON access log,
// which verifies every load as the other stacks' records do.
//
// This file writes caddy.json; server.go runs Caddy and reads its log.
package caddy

import (
	"encoding/json"
	"net/netip"
	"path/filepath"

	"github.com/quicbench/quicbench/internal/origin"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/sitefiles"
)

// accessLogger is the name of the access logs' logger: Caddy logs each
// request of the server named serverName under it.
const (
	serverName   = "quicbench"
	accessLogger = "http.log.access." + serverName
)

// confParams is what caddy.json is made of.
type confParams struct {
	dir       string // Caddy's directory: site, storage, log
	certFile  string
	keyFile   string
	port      int
	tcp, quic bool // which protocols it serves: h1 and h2, h3
	cache     bool
	addrs     map[string]netip.Addr
	hosts     []string
	locations map[string][]sitefiles.Location
}

// adminAddr is Caddy's admin endpoint: on the loopback of the servers
// namespace, which only processes in that namespace reach.
const adminAddr = "127.0.0.1:2019"

// obj is a JSON object of the configuration.
type obj = map[string]any

// conf renders caddy.json: no admin endpoint, its storage and its session
// ticket keys in dir (keys that outlive a restart, so that a repeat visit
// resumes), an access log in JSON, and a route per exact path of each
// host; anything else is a 404.
func conf(p confParams) ([]byte, error) {
	var listen []string
	for _, host := range p.hosts {
		listen = append(listen, netip.AddrPortFrom(p.addrs[host], uint16(p.port)).String())
	}
	srv := obj{
		"listen":                  listen,
		"protocols":               protocols(p.tcp, p.quic),
		"automatic_https":         obj{"disable": true},
		"max_header_bytes":        server.MaxHeaderBytes,
		"idle_timeout":            "5m",
		"logs":                    obj{"default_logger_name": serverName},
		"tls_connection_policies": []obj{{"certificate_selection": obj{"any_tag": []string{"quicbench"}}, "protocol_min": "tls1.3"}},
		"routes":                  routes(p),
	}
	storage := obj{"module": "file_system", "root": filepath.Join(p.dir, "storage")}
	c := obj{
		"admin":   obj{"listen": adminAddr, "config": obj{"persist": false}},
		"storage": storage,
		"logging": obj{"logs": obj{
			"default": obj{"level": "INFO", "exclude": []string{accessLogger}},
			"access": obj{"level": "INFO", "include": []string{accessLogger}, "encoder": obj{"format": "json"},
				"writer": obj{"output": "file", "filename": filepath.Join(p.dir, "access.log"), "roll": false}},
		}},
		"apps": obj{
			"http": obj{"servers": obj{serverName: srv}, "grace_period": "1s"},
			"tls": obj{
				"certificates":    obj{"load_files": []obj{{"certificate": p.certFile, "key": p.keyFile, "tags": []string{"quicbench"}}}},
				"session_tickets": obj{"key_source": obj{"provider": "distributed", "storage": storage}},
			},
		},
	}
	return json.MarshalIndent(c, "", " ")
}

// protocols are Caddy's names of what it serves.
func protocols(tcp, quic bool) []string {
	var out []string
	if tcp {
		out = append(out, "h1", "h2")
	}
	if quic {
		out = append(out, "h3")
	}
	return out
}

// routes serve each host's exact paths from its files with the Go
// origin's header fields, and answer anything else with 404.
func routes(p confParams) []obj {
	var out []obj
	for _, host := range p.hosts {
		for _, loc := range p.locations[host] {
			out = append(out, obj{
				"match":    []obj{{"host": []string{host}, "path": []string{loc.Path}}},
				"handle":   []obj{headers(loc, p.cache), {"handler": "file_server", "root": filepath.Join(p.dir, "site", host)}},
				"terminal": true,
			})
		}
	}
	return append(out, obj{"handle": []obj{{"handler": "static_response", "status_code": "404"}}})
}

// headers is the handler that gives a response the Go origin's fields
// (origin.Server's policy): Timing-Allow-Origin and
// Access-Control-Allow-Origin, the cache policy's, the path's type and
// coding, and none of Caddy's own (Server, Alt-Svc); with the cache off,
// no ETag or Last-Modified either. Deferred: applied as the response is
// written, over what the file server set.
func headers(loc sitefiles.Location, cache bool) obj {
	set := obj{
		"Content-Type":                []string{loc.ContentType},
		"Timing-Allow-Origin":         []string{"*"},
		"Access-Control-Allow-Origin": []string{"*"},
		"Cache-Control":               []string{"no-store"},
	}
	del := []string{"Server", "Alt-Svc"}
	if cache {
		set["Cache-Control"] = []string{origin.CacheControl}
	} else {
		del = append(del, "Etag", "Last-Modified")
	}
	if loc.Encoding != "" {
		set["Content-Encoding"] = []string{loc.Encoding}
	}
	return obj{"handler": "headers", "response": obj{"set": set, "delete": del, "deferred": true}}
}
