package loader

import (
	"bytes"
	"net/url"
	"regexp"
	"strings"

	"golang.org/x/net/html"
)

// Kinds of sub-resources, as the document references them.
const (
	KindImage      = "image"
	KindScript     = "script"
	KindStylesheet = "stylesheet"
	KindCSSURL     = "css-url" // url() in a stylesheet or style attribute
	KindFrame      = "frame"   // an iframe's document (fetched, not parsed)
)

// Ref is a sub-resource found in a document or stylesheet.
type Ref struct {
	URL  string // absolute
	Kind string
}

// Discover lists the sub-resources of an HTML document in document order:
// <img src>, <script src>, <link rel=stylesheet href>, <iframe src>, and
// url() in <style> elements and style attributes, resolved against base. Each URL is
// listed once; data: and javascript: URLs and fragments-only are skipped.
func Discover(base *url.URL, doc []byte) []Ref {
	var refs []Ref
	seen := map[string]bool{}
	add := func(raw, kind string) {
		if u := resolve(base, raw); u != "" && !seen[u] {
			seen[u] = true
			refs = append(refs, Ref{URL: u, Kind: kind})
		}
	}
	z := html.NewTokenizer(bytes.NewReader(doc))
	inStyle := false
	for {
		switch z.Next() {
		case html.ErrorToken:
			return refs
		case html.TextToken:
			if inStyle {
				for _, u := range CSSURLs(base, z.Text()) {
					add(u, KindCSSURL)
				}
			}
		case html.EndTagToken:
			if name, _ := z.TagName(); string(name) == "style" {
				inStyle = false
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			attrs := map[string]string{}
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				attrs[string(k)] = string(v)
			}
			if style, ok := attrs["style"]; ok {
				for _, u := range CSSURLs(base, []byte(style)) {
					add(u, KindCSSURL)
				}
			}
			switch string(name) {
			case "img":
				add(attrs["src"], KindImage)
			case "script":
				add(attrs["src"], KindScript)
			case "iframe":
				add(attrs["src"], KindFrame)
			case "link":
				if hasToken(attrs["rel"], "stylesheet") {
					add(attrs["href"], KindStylesheet)
				}
			case "style":
				inStyle = true
			}
		}
	}
}

// cssURL matches url(x), url('x') and url("x").
var cssURL = regexp.MustCompile(`url\(\s*(?:"([^"]*)"|'([^']*)'|([^)"'\s]*))\s*\)`)

// CSSURLs lists the absolute URLs of url() references in css, resolved
// against base, in order and without repeats.
func CSSURLs(base *url.URL, css []byte) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range cssURL.FindAllSubmatch(css, -1) {
		raw := string(m[1]) + string(m[2]) + string(m[3])
		if u := resolve(base, raw); u != "" && !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	return out
}

// resolve makes raw absolute against base; "" for what a loader does not
// fetch (empty, data:, javascript:, a fragment, a non-HTTP scheme).
func resolve(base *url.URL, raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" || strings.HasPrefix(raw, "#") {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	abs := base.ResolveReference(u)
	if abs.Scheme != "http" && abs.Scheme != "https" {
		return ""
	}
	abs.Fragment = ""
	return abs.String()
}

// hasToken reports whether the space-separated list has tok, ignoring case.
func hasToken(list, tok string) bool {
	for _, f := range strings.Fields(list) {
		if strings.EqualFold(f, tok) {
			return true
		}
	}
	return false
}

// countImages counts the <img> elements of a document.
func countImages(doc []byte) int {
	n := 0
	z := html.NewTokenizer(bytes.NewReader(doc))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return n
		case html.StartTagToken, html.SelfClosingTagToken:
			if name, _ := z.TagName(); string(name) == "img" {
				n++
			}
		}
	}
}
