// Package site models the pages quicbench serves: a site is a set of origins
// (host names), each holding resources (path, content type, bytes). Every
// protocol and server stack serves the same Site, so they serve identical
// bytes. This file holds the model; synthetic.go generates synthetic pages.
package site

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"

	"github.com/quicbench/quicbench/internal/factor"
)

// Resource is one file of a site.
type Resource struct {
	Path        string // absolute URL path, such as "/obj/3.png"
	ContentType string // the Content-Type header value
	// Encoding is the Content-Encoding header value, such as "gzip", of
	// a Body stored as it goes on the wire; "" for none.
	Encoding string
	Body     []byte
}

// Origin is one host name and the resources it serves.
type Origin struct {
	Host      string // host name without port, such as "www.quicbench.test"
	Resources map[string]*Resource
}

// Site is a page and everything it loads.
type Site struct {
	// Origins are the origins of the site; Origins[0] serves the document.
	Origins []*Origin
	// DocumentPath is the path of the main document on Origins[0].
	DocumentPath string
	// Subresources are the absolute URLs the document loads (in document
	// order for synthetic pages, sorted for generated ones). A load is
	// complete only when every one of them arrived.
	Subresources []string
	// Late are the URLs scripts fetch without holding up the load event
	// (fetch()): served, but not required of a load.
	Late []string
	// Scripted are the Subresources that only running the page's scripts
	// requests (injected scripts and images): a client without JavaScript
	// cannot load them.
	Scripted []string
}

// WithoutScripts is Subresources less Scripted: what a client that runs
// no JavaScript can load.
func (s *Site) WithoutScripts() []string { return without(s.Subresources, s.Scripted) }

// DocumentURL is the https URL of the main document.
func (s *Site) DocumentURL() string {
	return (&url.URL{Scheme: "https", Host: s.Origins[0].Host, Path: s.DocumentPath}).String()
}

// Hosts lists the host names of the origins, in order.
func (s *Site) Hosts() []string {
	hosts := make([]string, len(s.Origins))
	for i, o := range s.Origins {
		hosts[i] = o.Host
	}
	return hosts
}

// Bytes is the size of every file of the site, the document included.
func (s *Site) Bytes() int64 {
	var n int64
	for _, o := range s.Origins {
		for _, r := range o.Resources {
			n += int64(len(r.Body))
		}
	}
	return n
}

// Lookup returns the resource at path on host, or nil.
func (s *Site) Lookup(host, path string) *Resource {
	for _, o := range s.Origins {
		if o.Host == host {
			return o.Resources[path]
		}
	}
	return nil
}

// Validate checks that origin names are unique and that the document and
// every subresource exist.
func (s *Site) Validate() error {
	if len(s.Origins) == 0 {
		return fmt.Errorf("site has no origins")
	}
	seen := map[string]bool{}
	for _, o := range s.Origins {
		if seen[o.Host] {
			return fmt.Errorf("site has two origins named %q: give each origin its own host name", o.Host)
		}
		seen[o.Host] = true
	}
	if s.Origins[0].Resources[s.DocumentPath] == nil {
		return fmt.Errorf("site: document %s%s is missing", s.Origins[0].Host, s.DocumentPath)
	}
	for _, raw := range slices.Concat(s.Subresources, s.Late) {
		u, err := url.Parse(raw)
		if err != nil {
			return fmt.Errorf("site: subresource %q: %w", raw, err)
		}
		if s.Lookup(u.Hostname(), u.Path) == nil {
			return fmt.Errorf("site: subresource %s is missing from the archive", raw)
		}
	}
	return nil
}

// Files builds a site of one origin that serves, for each size in bytes, a
// file of incompressible bytes from seed at "/file/<size>". The document
// at "/" lists them.
func Files(host string, sizes []int64, seed uint64) (*Site, error) {
	rng := rand.New(rand.NewPCG(seed, 0xf11e))
	o := &Origin{Host: host, Resources: map[string]*Resource{}}
	s := &Site{Origins: []*Origin{o}, DocumentPath: "/"}
	var index strings.Builder
	for _, size := range sizes {
		if size < 1 || size > factor.MaxObjectBytes {
			return nil, fmt.Errorf("file size %d B is outside 1 B to 1 GiB", size)
		}
		body := make([]byte, size)
		for i := range body {
			body[i] = byte(rng.Uint32())
		}
		path := FilePath(size)
		o.Resources[path] = &Resource{Path: path, ContentType: "application/octet-stream", Body: body}
		fmt.Fprintln(&index, path)
	}
	o.Resources["/"] = &Resource{Path: "/", ContentType: "text/plain; charset=utf-8", Body: []byte(index.String())}
	return s, s.Validate()
}

// FilePath is where Files serves the file of size bytes.
func FilePath(size int64) string { return fmt.Sprintf("/file/%d", size) }
