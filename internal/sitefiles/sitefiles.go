// Package sitefiles writes a site as the files an external server stack
// (nginx, Caddy) serves it from: every resource at <dir>/<sub>/<host>/<path>
// (a path ending in "/" as its index.html), each file's time the Go
// origin's Last-Modified, and per host the exact paths to configure with
// their content type and encoding, so that such a server sends the bytes
// and the header fields the Go origin sends.
package sitefiles

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/origin"
	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/site"
)

// lastModified is the modification time of every file, so that a server
// sends the Last-Modified the Go origin sends (origin.LastModified).
var lastModified = func() time.Time {
	t, err := time.Parse(time.RFC1123, origin.LastModified)
	if err != nil {
		panic(err)
	}
	return t
}()

// Location is an exact path of a host and the header fields its file is
// served with.
type Location struct {
	// Path is the URL path, such as "/obj/3.png" or "/".
	Path string
	// ContentType is the Content-Type field's value.
	ContentType string
	// Encoding is the Content-Encoding field's value; "" for none.
	Encoding string
}

// Write writes every resource of s below dir/sub and returns, per host,
// the exact-match locations to configure (a path ending in "/" is listed
// with its index.html too). who names the server in errors. A path
// another server's configuration could not hold safely (PlainPath) is
// refused, and so is a site whose "/" and "/index.html" differ.
func Write(s *site.Site, dir, sub, who string) (map[string][]Location, error) {
	locations := map[string][]Location{}
	for _, o := range s.Origins {
		for _, path := range sortedPaths(o) {
			res := o.Resources[path]
			if !PlainPath(path) {
				return nil, fmt.Errorf("%s: resource path %q of %s has characters its configuration cannot hold: use letters, digits and / . _ ~ -", who, path, o.Host)
			}
			file := path
			if strings.HasSuffix(path, "/") {
				file += "index.html"
				if o.Resources[file] != nil {
					return nil, fmt.Errorf("%s: %s serves both %s and %s, which are one file for it", who, o.Host, path, file)
				}
			}
			rel := filepath.Join(sub, o.Host, filepath.FromSlash(file))
			if err := safefs.WriteFile(dir, rel, res.Body, 0o644); err != nil {
				return nil, fmt.Errorf("%s: site: %w", who, err)
			}
			if err := os.Chtimes(filepath.Join(dir, rel), lastModified, lastModified); err != nil {
				return nil, fmt.Errorf("%s: site: %w", who, err)
			}
			locations[o.Host] = append(locations[o.Host], Location{path, res.ContentType, res.Encoding})
			if file != path {
				locations[o.Host] = append(locations[o.Host], Location{file, res.ContentType, res.Encoding})
			}
		}
	}
	return locations, nil
}

func sortedPaths(o *site.Origin) []string {
	paths := make([]string, 0, len(o.Resources))
	for p := range o.Resources {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	return paths
}

// PlainPath reports whether p is an absolute URL path of letters, digits
// and / . _ ~ - only: safe inside a quoted string of any configuration.
func PlainPath(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	for _, r := range p {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._~-", r)
		if !ok {
			return false
		}
	}
	return true
}
