package site

import (
	"slices"
	"strings"
)

// Matcher finds the response to replay for a request, as Mahimahi's
// replay server does: the resource of the same host, method and request
// target; failing that, among those of the same host, method and path, the
// one whose request target shares the longest prefix with the request's
// (so that a query a script changed, such as a timestamp, still finds its
// response; ties go to the smallest key). A HEAD request matches GET
// resources. Nothing else matches: a request for another path is
// unmatched, never served a neighbour.
type Matcher struct {
	// byPath maps host, then "METHOD path", to the resources with that
	// method and path, in key order.
	byPath map[string]map[string][]*Resource
}

// NewMatcher indexes the resources of s.
func NewMatcher(s *Site) *Matcher {
	m := &Matcher{byPath: map[string]map[string][]*Resource{}}
	for _, o := range s.Origins {
		paths := map[string][]*Resource{}
		for _, r := range o.Resources {
			key := methodOf(r) + " " + r.Path
			paths[key] = append(paths[key], r)
		}
		for _, rs := range paths {
			// ties in matching go the same way on every run
			slices.SortFunc(rs, func(a, b *Resource) int { return strings.Compare(a.Key(), b.Key()) })
		}
		m.byPath[o.Host] = paths
	}
	return m
}

// methodOf is the resource's method, GET for "".
func methodOf(r *Resource) string {
	if r.Method == "" {
		return "GET"
	}
	return r.Method
}

// Match returns the resource to answer method on host for the escaped
// path and raw query, or nil for an unmatched request.
func (m *Matcher) Match(host, method, path, query string) *Resource {
	if method == "HEAD" {
		method = "GET"
	}
	candidates := m.byPath[host][method+" "+path]
	if len(candidates) == 0 {
		return nil
	}
	want := target(path, query)
	var best *Resource
	bestLen := -1
	for _, r := range candidates {
		rt := r.Target()
		if rt == want {
			return r
		}
		if n := commonPrefix(rt, want); n > bestLen {
			best, bestLen = r, n
		}
	}
	return best
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
