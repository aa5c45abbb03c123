package site

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// TestMatchCases checks the matching rule against the cases quicbench-h3
// checks too (servers/common/testdata/match.txt).
func TestMatchCases(t *testing.T) {
	f, err := os.Open("../../servers/common/testdata/match.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var origin *Origin
	reset := func() { origin = &Origin{Host: "h.test", Resources: map[string]*Resource{}} }
	reset()
	cases := 0
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		switch fields[0] {
		case "reset":
			reset()
		case "have":
			path, query, _ := strings.Cut(fields[2], "?")
			r := &Resource{Path: path, Query: query}
			if fields[1] != "GET" {
				r.Method = fields[1]
			}
			if len(fields) > 3 && fields[3] == "media" {
				r.ContentType = "image/jpeg"
			}
			origin.Resources[r.Key()] = r
		case "want":
			cases++
			path, query, _ := strings.Cut(fields[2], "?")
			res, kind := NewMatcher(&Site{Origins: []*Origin{origin}}).Match("h.test", fields[1], path, query)
			got := kind.String()
			if res != nil {
				got += " " + res.Target()
			}
			if want := strings.Join(fields[3:], " "); got != want {
				t.Errorf("line %d: %s %s matched %q, want %q", line, fields[1], fields[2], got, want)
			}
		default:
			t.Fatalf("line %d: unknown directive %q", line, fields[0])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cases < 20 {
		t.Errorf("only %d cases", cases)
	}
}

// TestParseQuery: keys once with their values in order, decoding, and
// nothing refused.
func TestParseQuery(t *testing.T) {
	got := ParseQuery("a=1&b&a=2&&c=x%2By+z&d=%g1%")
	want := Params{{"a", []string{"1", "2"}}, {"b", []string{""}}, {"c", []string{"x+y z"}}, {"d", []string{"%g1%"}}}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i].Key != want[i].Key || strings.Join(got[i].Values, "|") != strings.Join(want[i].Values, "|") {
			t.Errorf("param %d: got %q, want %q", i, got[i], want[i])
		}
	}
	if ParseQuery("") != nil {
		t.Error("an empty query has parameters")
	}
}

// TestSiblings: a sibling is what a variant would be for an image (same
// host, method and file name, as many segments, at most two others
// differing), whatever the recorded response's type.
func TestSiblings(t *testing.T) {
	o := &Origin{Host: "h.test", Resources: map[string]*Resource{}}
	for _, r := range []*Resource{
		{Path: "/ic/480x270/p1.jpg", ContentType: "image/jpeg"},
		{Path: "/a/b/c/story.html", ContentType: "text/html"},
		{Path: "/post/form", Method: "POST"},
	} {
		o.Resources[r.Key()] = r
	}
	m := NewMatcher(&Site{Origins: []*Origin{o}})
	for _, c := range []struct {
		host, method, path string
		want               bool
	}{
		{"h.test", "GET", "/ic/960x540/p1.jpg", true},
		{"h.test", "HEAD", "/ic/960x540/p1.jpg", true},
		{"h.test", "GET", "/x/y/c/story.html", true},
		{"h.test", "GET", "/x/y/z/story.html", false},
		{"h.test", "GET", "/ic/p1.jpg", false},
		{"h.test", "GET", "/ic/960x540/", false},
		{"h.test", "POST", "/get/form", true},
		{"h.test", "GET", "/get/form", false},
		{"other.test", "GET", "/ic/960x540/p1.jpg", false},
	} {
		if got := m.HasSibling(c.host, c.method, c.path); got != c.want {
			t.Errorf("HasSibling(%s %s%s) = %v, want %v", c.method, c.host, c.path, got, c.want)
		}
	}
}

// TestDensitySiblings: a request for a file at another pixel density than
// the recorded one (yelp's restaurants@2x.yji-HASH.png beside
// restaurants.yji-OTHERHASH.png, apple's hero_small_2x.jpg beside
// hero_small.jpg, or the other way round) has a sibling; names that differ
// only by a content hash, with no density marker on either, do not; nor
// does another directory, host or method.
func TestDensitySiblings(t *testing.T) {
	o := &Origin{Host: "h.test", Resources: map[string]*Resource{}}
	for _, r := range []*Resource{
		{Path: "/assets/restaurants.yji-bd314b2e68342d8df2208cbee9603c6b.png"},
		{Path: "/v/heroes/hero_small.jpg"},
		{Path: "/i/logo@2x.png"},
		{Path: "/js/chunk.0123abcd.js"},
	} {
		o.Resources[r.Key()] = r
	}
	m := NewMatcher(&Site{Origins: []*Origin{o}})
	for _, c := range []struct {
		host, method, path string
		want               bool
	}{
		{"h.test", "GET", "/assets/restaurants@2x.yji-bcc82edfc5c6c1b93b586600c46d41d3.png", true},
		{"h.test", "GET", "/v/heroes/hero_small_2x.jpg", true},
		{"h.test", "HEAD", "/v/heroes/hero_small_1.5x.jpg", true},
		{"h.test", "GET", "/i/logo.png", true},
		{"h.test", "GET", "/i/logo@3x.png", true},
		{"h.test", "GET", "/js/chunk.4567cdef.js", false},
		{"h.test", "GET", "/x/heroes/hero_small_2x.jpg", false},
		{"h.test", "POST", "/v/heroes/hero_small_2x.jpg", false},
		{"other.test", "GET", "/v/heroes/hero_small_2x.jpg", false},
		{"h.test", "GET", "/v/heroes/", false},
	} {
		if got := m.HasDensitySibling(c.host, c.method, c.path); got != c.want {
			t.Errorf("HasDensitySibling(%s %s%s) = %v, want %v", c.method, c.host, c.path, got, c.want)
		}
	}
}
