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
	"net/http"
	"net/netip"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"

	"github.com/quicbench/quicbench/internal/origin"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/site"
)

// accessLogger is the name of the access logs' logger: Caddy logs each
// request of the server named serverName under it.
const (
	serverName   = "quicbench"
	accessLogger = "http.log.access." + serverName
	// handshakeLogger is the logger of certificate selection, which logs
	// at debug level once per full TLS handshake (a resumed one picks no
	// certificate), with the client's address.
	handshakeLogger = "tls.handshake"
)

// confParams is what caddy.json is made of.
type confParams struct {
	dir       string // Caddy's directory: site, storage, log
	certFile  string
	keyFile   string
	port      int
	tcp, quic bool // which protocols it serves: h1 and h2, h3
	cache     bool
	altSvc    string // the Alt-Svc field of every response; "" none
	addrs     map[string]netip.Addr
	hosts     []string
	site      *site.Site
	answers   *answers
	// matchAddr is the matching service's address (matchService); ""
	// for none: what no route takes exactly is a 404.
	matchAddr string
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
			"default": obj{"level": "INFO", "exclude": []string{accessLogger, handshakeLogger}},
			"access": obj{"level": "INFO", "include": []string{accessLogger}, "encoder": obj{"format": "json"},
				"writer": obj{"output": "file", "filename": filepath.Join(p.dir, "access.log"), "roll": false}},
			"handshakes": obj{"level": "DEBUG", "include": []string{handshakeLogger}, "encoder": obj{"format": "json"},
				"writer": obj{"output": "file", "filename": filepath.Join(p.dir, "handshake.log"), "roll": false}},
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

// routes answer each host's requests with its resources (answerRoute),
// and anything else with the answer the matching service names, or 404
// (askRoute). A resource that is the only one of its method and path
// takes every query of it; the others only their own.
func routes(p confParams) []obj {
	notFound := obj{"handle": []obj{{"handler": "static_response", "status_code": "404"}}}
	var out []obj
	for _, host := range p.hosts {
		var hostRoutes []obj
		for _, an := range p.answers.list {
			if an.host == host {
				hostRoutes = append(hostRoutes, answerRoute(p, an))
			}
		}
		if p.matchAddr != "" {
			hostRoutes = append(hostRoutes, askRoute(p, host))
		} else {
			hostRoutes = append(hostRoutes, notFound)
		}
		out = append(out, obj{"match": []obj{{"host": []string{host}}}, "handle": []obj{{"handler": "subroute", "routes": hostRoutes}}, "terminal": true})
	}
	return append(out, notFound)
}

// requestMatch matches the requests an answers: its method (GET answering
// HEAD too) and its request target as sent, or with a fallback, its path
// with any query.
func requestMatch(an *answer) obj {
	methods := []string{an.method}
	if an.method == http.MethodGet {
		methods = append(methods, http.MethodHead)
	}
	const target = "{http.request.orig_uri}"
	if an.fallback {
		pattern := "^" + regexp.QuoteMeta(an.path) + `(\?.*)?$`
		return obj{"method": methods, "vars_regexp": obj{target: obj{"pattern": pattern}}}
	}
	return obj{"method": methods, "vars": obj{target: []string{an.target}}}
}

// answerRoute answers the requests match selects with an's resource as
// the Go origin does: its header fields (origin.ResponseHeader), 304 to
// a revalidation with the cache on (origin.NotModified), else its status
// and body.
func answerRoute(p confParams, an *answer) obj {
	return obj{"match": []obj{requestMatch(an)}, "handle": []obj{{"handler": "subroute", "routes": answerSteps(p, an)}}, "terminal": true}
}

// answerSteps are the routes that send an's resource as the Go origin
// does (see answerRoute).
func answerSteps(p confParams, an *answer) []obj {
	h := origin.ResponseHeader(p.site, an.res, an.etag, p.cache)
	if p.altSvc != "" {
		h.Set("Alt-Svc", p.altSvc) // on h3's responses too: a browser that uses h3 already knows
	}
	steps := []obj{{"handle": responseHeaders(h)}}
	if p.cache {
		steps = append(steps, notModifiedRoutes(h)...)
	}
	return append(steps, obj{"handle": bodyHandlers(p, an)})
}

// ownFields are the fields Caddy or its file server adds that the Go
// origin does not send unless the resource has them.
var ownFields = []string{"Server", "Alt-Svc", "Etag", "Last-Modified", "Accept-Ranges"}

// responseHeaders give the response exactly h's fields over Caddy's own
// (deferred: applied as the response is written, the later handler's
// first). The later one sets each one-valued field and deletes the rest;
// the earlier one then adds each value of a repeated field (Set-Cookie),
// which Caddy's set would join into one.
func responseHeaders(h http.Header) []obj {
	set, add := obj{}, obj{}
	del := []string{}
	for name, values := range h {
		escaped := make([]string, len(values))
		for i, v := range values {
			escaped[i] = escapeBraces(v)
		}
		if len(values) == 1 {
			set[escapeBraces(name)] = escaped
		} else {
			add[escapeBraces(name)] = escaped
			del = append(del, escapeBraces(name))
		}
	}
	for _, name := range ownFields {
		if _, ok := h[http.CanonicalHeaderKey(name)]; !ok {
			del = append(del, name)
		}
	}
	slices.Sort(del)
	return []obj{
		{"handler": "headers", "response": obj{"add": add, "deferred": true}},
		{"handler": "headers", "response": obj{"set": set, "delete": del, "deferred": true}},
	}
}

// notModifiedRoutes answer 304 where origin.NotModified would: an
// If-None-Match equal to the ETag, or without an ETag asked for, an
// If-Modified-Since equal to the Last-Modified.
func notModifiedRoutes(h http.Header) []obj {
	notModified := []obj{{"handler": "static_response", "status_code": "304"}}
	var out []obj
	etag, modified := h.Get("Etag"), h.Get("Last-Modified")
	if etag != "" {
		out = append(out, obj{"match": []obj{{"header": obj{"If-None-Match": []string{escapeBraces(etag)}}}}, "handle": notModified, "terminal": true})
	}
	if modified != "" {
		cond := obj{"If-Modified-Since": []string{escapeBraces(modified)}}
		if etag != "" {
			cond["If-None-Match"] = nil // present, it decides
		}
		out = append(out, obj{"match": []obj{{"header": cond}}, "handle": notModified, "terminal": true})
	}
	return out
}

// requestConditions are the request fields the file server would act on
// by itself (ranges and revalidation), which the Go origin ignores or
// decides as notModifiedRoutes do.
var requestConditions = []string{"Range", "If-Range", "If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since"}

// bodyHandlers send an's status and, if it has one, its body from its
// file: whole, whatever range or condition the request names.
func bodyHandlers(p confParams, an *answer) []obj {
	status := an.res.StatusCode()
	if an.file == "" {
		return []obj{{"handler": "static_response", "status_code": strconv.Itoa(status)}}
	}
	files := obj{"handler": "file_server", "root": filepath.Join(p.dir, "site")}
	if status != http.StatusOK {
		files["status_code"] = strconv.Itoa(status)
	}
	return []obj{
		{"handler": "headers", "request": obj{"delete": requestConditions}},
		{"handler": "rewrite", "uri": "/" + an.file},
		files,
	}
}
