package site

import (
	"slices"
	"strings"
)

// Matcher finds the response to replay for a request, as WebPageReplay
// does: the resource of the same host, method and request target (an exact
// match); failing that, among those of the same host, method and path, the
// one whose query parameters agree best with the request's (a fuzzy match,
// so that a query a script changed, such as a time stamp or a random
// identifier, still finds its response). Agreement is WebPageReplay's
// ratio 2M/T: M is one plus the number of the request's parameters whose
// values equal the recorded ones, T the number of parameters of both
// (ParseQuery); ties go to the smallest key. A HEAD request matches GET
// resources. Failing both, a request for an image or media file the
// recording holds only at other sizes is answered with the nearest such
// variant (variantOf): same host and method, as many path segments, the
// same file name, at most MaxVariantSegments other segments differing
// (the size, the transform, its hash), as WebPageReplay's matching lets a
// query's size parameters differ. Nothing else matches: a request for
// another path is unmatched, never served a neighbour. The servers of servers/ implement
// the same rule (servers/common/src/site.rs);
// servers/common/testdata/match.txt holds the cases both check.
type Matcher struct {
	// byPath maps host, then "METHOD path", to the resources with that
	// method and path, in key order.
	byPath map[string]map[string][]*candidate
	// byName maps host, then "METHOD name" (the path's last segment), to
	// the resources with that method and file name, in key order: the
	// siblings of a request, and among them (Media) the variants it may be
	// answered with.
	byName map[string]map[string][]*candidate
	// byDensity maps host, then "METHOD key" (densityName), to whether
	// each resource with that key had a density marker in its name.
	byDensity map[string]map[string][]bool
}

// candidate is a resource with its parsed query.
type candidate struct {
	res    *Resource
	params Params
}

// MatchKind says how a request matched.
type MatchKind uint8

// How a request matched: not at all (a 404), its exact target, the
// nearest recorded query of its path, or the nearest recorded size of an
// image or media file.
const (
	Unmatched MatchKind = iota
	Exact
	Fuzzy
	Variant
)

// MaxVariantSegments is how many path segments, besides the file name, a
// variant may differ in: a size and a transform's hash (wayfair's
// /im/HASH/resize-hH-wW/…/name.jpg), a size alone (bbc's
// /images/ic/WxH/name.jpg).
const MaxVariantSegments = 2

// String names the kind as servers/common/testdata/match.txt does.
func (k MatchKind) String() string {
	return [...]string{"none", "exact", "fuzzy", "variant"}[k]
}

// NewMatcher indexes the resources of s.
func NewMatcher(s *Site) *Matcher {
	m := &Matcher{byPath: map[string]map[string][]*candidate{}, byName: map[string]map[string][]*candidate{},
		byDensity: map[string]map[string][]bool{}}
	for _, o := range s.Origins {
		paths, names, densities := map[string][]*candidate{}, map[string][]*candidate{}, map[string][]bool{}
		for _, r := range o.Resources {
			dkey, marked := densityName(r.Path)
			densities[methodOf(r)+" "+dkey] = append(densities[methodOf(r)+" "+dkey], marked)
			c := &candidate{res: r, params: ParseQuery(r.Query)}
			key := methodOf(r) + " " + r.Path
			paths[key] = append(paths[key], c)
			name := methodOf(r) + " " + fileName(r.Path)
			names[name] = append(names[name], c)
		}
		// ties in matching go the same way on every run
		for _, index := range []map[string][]*candidate{paths, names} {
			for _, cs := range index {
				slices.SortFunc(cs, func(a, b *candidate) int { return strings.Compare(a.res.Key(), b.res.Key()) })
			}
		}
		m.byPath[o.Host], m.byName[o.Host], m.byDensity[o.Host] = paths, names, densities
	}
	return m
}

// fileName is a path's last segment ("" for a path that ends in "/").
func fileName(path string) string { return path[strings.LastIndexByte(path, '/')+1:] }

// Media says whether r can answer for a variant of itself: a successful
// response whose Content-Type is an image, video or audio type.
func (r *Resource) Media() bool {
	if r.StatusCode() < 200 || r.StatusCode() > 299 {
		return false
	}
	t := strings.ToLower(strings.TrimSpace(r.ContentType))
	return strings.HasPrefix(t, "image/") || strings.HasPrefix(t, "video/") || strings.HasPrefix(t, "audio/")
}

// methodOf is the resource's method, GET for "".
func methodOf(r *Resource) string {
	if r.Method == "" {
		return "GET"
	}
	return r.Method
}

// Match returns the resource to answer method on host for the escaped
// path and raw query, and how it matched; nil and Unmatched for a request
// the site does not have.
func (m *Matcher) Match(host, method, path, query string) (*Resource, MatchKind) {
	if method == "HEAD" {
		method = "GET"
	}
	candidates := m.byPath[host][method+" "+path]
	if len(candidates) == 0 {
		if r := m.variantOf(host, method, path); r != nil {
			return r, Variant
		}
		return nil, Unmatched
	}
	want := target(path, query)
	for _, c := range candidates {
		if c.res.Target() == want {
			return c.res, Exact
		}
	}
	params := ParseQuery(query)
	best := candidates[0]
	bestM, bestT := agreement(params, best.params)
	for _, c := range candidates[1:] {
		if m, t := agreement(params, c.params); better(m, t, bestM, bestT) {
			best, bestM, bestT = c, m, t
		}
	}
	return best.res, Fuzzy
}

// variantOf is the recorded media resource nearest to a request for path
// that none answers (see Matcher): of those on host with method, the same
// file name and as many segments, the one whose segments differ from the
// request's in the fewest places, at most MaxVariantSegments; ties to the
// smallest key. Nil when none is near enough.
func (m *Matcher) variantOf(host, method, path string) *Resource {
	return m.nearestSibling(host, method, path, (*Resource).Media)
}

// HasSibling says whether the site holds a sibling of a request for path
// on host with method that matches nothing: a resource of any type that
// would be its variant were it an image (same file name, as many
// segments, at most MaxVariantSegments others differing). An unmatched
// request with a sibling is a request the recording could have answered,
// not one it never saw.
func (m *Matcher) HasSibling(host, method, path string) bool {
	if method == "HEAD" {
		method = "GET"
	}
	return m.nearestSibling(host, method, path, func(*Resource) bool { return true }) != nil
}

// nearestSibling is, of the resources on host with method, the same file
// name as path and as many segments that ok accepts, the one whose
// segments differ from path's in the fewest places, at most
// MaxVariantSegments; ties to the smallest key. Nil when none is near
// enough.
func (m *Matcher) nearestSibling(host, method, path string, ok func(*Resource) bool) *Resource {
	name := fileName(path)
	if name == "" {
		return nil
	}
	want := strings.Split(path, "/")
	var best *Resource
	bestDiffer := MaxVariantSegments + 1
	for _, c := range m.byName[host][method+" "+name] {
		if d := differingSegments(want, c.res.Path); d < bestDiffer && ok(c.res) {
			best, bestDiffer = c.res, d
		}
	}
	return best
}

// differingSegments counts the segments of path that differ from want's
// at the same place; a path with another number of segments differs in
// all of them.
func differingSegments(want []string, path string) int {
	got := strings.Split(path, "/")
	if len(got) != len(want) {
		return len(want) + 1
	}
	n := 0
	for i := range got {
		if got[i] != want[i] {
			n++
		}
	}
	return n
}

// agreement is the M and T of WebPageReplay's ratio 2M/T for a request's
// parameters req against a recorded request's rec.
func agreement(req, rec Params) (m, t int) {
	m = 1
	for _, p := range req {
		if values, ok := rec.Values(p.Key); ok && slices.Equal(values, p.Values) {
			m++
		}
	}
	return m, len(req) + len(rec)
}

// better reports whether the ratio m1/t1 is above m2/t2 (a T of 0, two
// requests without parameters, is the highest).
func better(m1, t1, m2, t2 int) bool {
	switch {
	case t1 == 0:
		return t2 != 0
	case t2 == 0:
		return false
	}
	return m1*t2 > m2*t1
}

// Params are a query's parameters: each key once, with its values in
// order, the keys in their first order.
type Params []Param

// Param is one key of a query and its values.
type Param struct {
	Key    string
	Values []string
}

// Values returns the values of key, and whether the query has it.
func (ps Params) Values(key string) ([]string, bool) {
	for _, p := range ps {
		if p.Key == key {
			return p.Values, true
		}
	}
	return nil, false
}

// ParseQuery splits a raw query at "&" into key=value parameters (a part
// without "=" is a key with the empty value, empty parts are skipped),
// decoding "+" to a space and "%XX" to its byte; a "%" not followed by
// two hex digits stays as it is. It never fails, so that any request can
// be matched, and quicbench-h3 decodes the same way.
func ParseQuery(raw string) Params {
	var ps Params
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		key, value := unescapeQuery(k), unescapeQuery(v)
		i := slices.IndexFunc(ps, func(p Param) bool { return p.Key == key })
		if i < 0 {
			ps = append(ps, Param{Key: key})
			i = len(ps) - 1
		}
		ps[i].Values = append(ps[i].Values, value)
	}
	return ps
}

// unescapeQuery decodes one key or value of a query (see ParseQuery).
func unescapeQuery(s string) string {
	if !strings.ContainsAny(s, "+%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '+':
			b.WriteByte(' ')
		case c == '%' && i+2 < len(s) && hexDigit(s[i+1]) && hexDigit(s[i+2]):
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// hexDigit reports whether c is a hexadecimal digit, of either case.
func hexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// unhex is the value of the hexadecimal digit c.
func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}
