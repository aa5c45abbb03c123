// Package h3server runs quicbench's HTTP/3 servers in their own processes
// (servers/: quicbench-h3 on quinn, quicbench-quiche on quiche), which
// share their manifest, matching rule, answers and control protocol
// (servers/common). They serve the same site with the same header fields
// as the Go origin: the header fields are computed here, by the Go
// origin's own function, and written into a manifest the server reads.
// The server gets the UDP sockets quicbench bound in the servers namespace
// and is driven over its standard input and output, one JSON line per
// command and reply; servers/common/testdata/control.txt is the protocol's
// transcript, which both sides are tested against (control_test.go).
// Packages quinn and quiche declare each server as a stack.
//
// This file writes the manifest and the bodies; server.go runs the server.
package h3server

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/quicbench/quicbench/internal/origin"
	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/site"
)

// manifest is what the servers read (servers/common/src/site.rs).
type manifest struct {
	Origins []manifestOrigin `json:"origins"`
}

type manifestOrigin struct {
	Host string `json:"host"`
	// Responses are in site.Matcher's tie-break order (by resource key).
	Responses []manifestResponse `json:"responses"`
}

type manifestResponse struct {
	Method       string      `json:"method"`
	Path         string      `json:"path"`
	Target       string      `json:"target"`
	Status       int         `json:"status"`
	HeaderOff    [][2]string `json:"header_off"`
	HeaderOn     [][2]string `json:"header_on"`
	Header304    [][2]string `json:"header_304"`
	ETag         string      `json:"etag"`
	LastModified string      `json:"last_modified"`
	BodyAllowed  bool        `json:"body_allowed"`
	// Media says the response may answer for a variant of itself
	// (site.Resource.Media).
	Media bool `json:"media"`
	// Body is the body's file name under the bodies directory: the hex
	// SHA-256 of its bytes.
	Body string `json:"body"`
}

// writeManifest writes dir/manifest.json and every body into dir/bodies.
func writeManifest(s *site.Site, dir string) error {
	if err := safefs.MkdirAll(dir, "bodies", 0o755); err != nil {
		return fmt.Errorf("h3 server: %w", err)
	}
	var m manifest
	written := map[string]bool{}
	for _, o := range s.Origins {
		mo := manifestOrigin{Host: o.Host}
		for _, res := range sortedResources(o) {
			r, err := responseOf(s, res)
			if err != nil {
				return fmt.Errorf("h3 server: %s%s: %w", o.Host, res.Target(), err)
			}
			if !written[r.Body] {
				if err := safefs.WriteFile(dir, filepath.Join("bodies", r.Body), res.Body, 0o644); err != nil {
					return fmt.Errorf("h3 server: body: %w", err)
				}
				written[r.Body] = true
			}
			mo.Responses = append(mo.Responses, r)
		}
		m.Origins = append(m.Origins, mo)
	}
	data, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("h3 server: manifest: %w", err)
	}
	if err := safefs.WriteFile(dir, "manifest.json", data, 0o644); err != nil {
		return fmt.Errorf("h3 server: manifest: %w", err)
	}
	return nil
}

// sortedResources lists o's resources by key, site.Matcher's order.
func sortedResources(o *site.Origin) []*site.Resource {
	out := make([]*site.Resource, 0, len(o.Resources))
	for _, r := range o.Resources {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b *site.Resource) int { return cmp.Compare(a.Key(), b.Key()) })
	return out
}

// responseOf describes res as the Go origin answers it, with the cache off
// and on.
func responseOf(s *site.Site, res *site.Resource) (manifestResponse, error) {
	etag := origin.ETag(res)
	on := origin.ResponseHeader(s, res, etag, true)
	off := origin.ResponseHeader(s, res, etag, false)
	status := res.StatusCode()
	r := manifestResponse{
		Method: cmp.Or(res.Method, http.MethodGet), Path: res.Path, Target: res.Target(), Status: status,
		Header304: fields(on), ETag: on.Get("ETag"), LastModified: on.Get("Last-Modified"),
		BodyAllowed: origin.BodyAllowed(status), Media: res.Media(),
	}
	if r.BodyAllowed {
		n := strconv.Itoa(len(res.Body))
		on.Set("Content-Length", n)
		off.Set("Content-Length", n)
	}
	r.HeaderOn, r.HeaderOff = fields(on), fields(off)
	for _, f := range slices.Concat(r.HeaderOn, r.HeaderOff) {
		if !httpguts.ValidHeaderFieldName(f[0]) || !httpguts.ValidHeaderFieldValue(f[1]) {
			return r, fmt.Errorf("header field %s has a name or value HTTP/3 cannot carry", f[0])
		}
	}
	sum := sha256.Sum256(res.Body)
	r.Body = hex.EncodeToString(sum[:])
	return r, nil
}

// fields lists h's fields in name order, names in lower case (HTTP/3).
func fields(h http.Header) [][2]string {
	names := slices.Sorted(func(yield func(string) bool) {
		for name := range h {
			if !yield(name) {
				return
			}
		}
	})
	out := [][2]string{} // a response without fields has [], never null
	for _, name := range names {
		for _, v := range h[name] {
			out = append(out, [2]string{strings.ToLower(name), v})
		}
	}
	return out
}
