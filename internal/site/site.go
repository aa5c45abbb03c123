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
	"time"

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
	// Recorded responses (site archives) may also have these; the zero
	// values are those of a generated resource.
	Query  string  // the request's raw query, without "?"
	Method string  // the request's method; "" for GET
	Status int     // the response's status code; 0 for 200
	Header []Field // further response header fields, replayed as recorded
}

// Origin is one host name and the resources it serves.
type Origin struct {
	Host string // host name without port, such as "www.quicbench.test"
	// Resources are keyed by Resource.Key: the path, for a resource
	// without query and method.
	Resources map[string]*Resource
}

// Site is a page and everything it loads.
type Site struct {
	// Origins are the origins of the site; Origins[0] serves the document.
	Origins []*Origin
	// DocumentPath is the path of the main document on Origins[0], and
	// DocumentQuery its query without "?" ("" for none).
	DocumentPath, DocumentQuery string
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
	// Parents maps a subresource's URL to the URL whose response reveals
	// it (a font to its style sheet, an injected image to its script);
	// one not listed is revealed by the document. Recordings say nothing
	// of it: their resources all count as the document's.
	Parents map[string]string
	// Recorded says the site replays a recording: its responses carry
	// their recorded statuses and header fields, cache policy included.
	Recorded bool
	// RecordedAt is when a recorded site was recorded (Archive.RecordedAt);
	// zero when unknown and for generated sites.
	RecordedAt time.Time
}

// WithoutScripts is Subresources less Scripted: what a client that runs
// no JavaScript can load.
func (s *Site) WithoutScripts() []string { return without(s.Subresources, s.Scripted) }

// DocumentURL is the https URL of the main document.
func (s *Site) DocumentURL() string {
	u := url.URL{Scheme: "https", Host: s.Origins[0].Host, Path: s.DocumentPath, RawQuery: s.DocumentQuery}
	if path, err := url.PathUnescape(s.DocumentPath); err == nil {
		u.Path, u.RawPath = path, s.DocumentPath // as recorded, escapes kept
	}
	return u.String()
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

// Lookup returns the resource of key (see Resource.Key) on host, or nil.
func (s *Site) Lookup(host, key string) *Resource {
	for _, o := range s.Origins {
		if o.Host == host {
			return o.Resources[key]
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
	doc := target(s.DocumentPath, s.DocumentQuery)
	if s.Origins[0].Resources[doc] == nil {
		return fmt.Errorf("site: document %s%s is missing", s.Origins[0].Host, doc)
	}
	for _, raw := range slices.Concat(s.Subresources, s.Late) {
		u, err := url.Parse(raw)
		if err != nil {
			return fmt.Errorf("site: subresource %q: %w", raw, err)
		}
		if s.Lookup(u.Hostname(), u.RequestURI()) == nil {
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
