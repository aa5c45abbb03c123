package site

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"image"
	_ "image/gif" // image.DecodeConfig reads GIF headers
	_ "image/jpeg"
	_ "image/png"
	"io"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/andybalholm/brotli"
	"golang.org/x/net/html"
)

// MaxDecodedBytes bounds a body DecodeContent decodes: 256 MiB.
const MaxDecodedBytes = 256 << 20

// DecodedBody is r's body with its Content-Encoding undone
// (DecodeContent).
func (r *Resource) DecodedBody() ([]byte, error) { return DecodeContent(r.Encoding, r.Body) }

// DecodeContent undoes the content coding of a body as it went on the
// wire: gzip, deflate (zlib-wrapped, as HTTP names it) or br; an error for
// another coding, a body that does not decode, or one that passes
// MaxDecodedBytes decoded.
func DecodeContent(coding string, body []byte) ([]byte, error) {
	return DecodeContentWithin(coding, body, MaxDecodedBytes)
}

// DecodeContentWithin is DecodeContent with limit (bytes) in place of
// MaxDecodedBytes: a body that decodes to more fails with a
// *DecodedTooLargeError once limit bytes are read, never decoded whole.
func DecodeContentWithin(coding string, body []byte, limit int64) ([]byte, error) {
	var rd io.Reader
	var err error
	in := bytes.NewReader(body)
	switch coding = strings.ToLower(strings.TrimSpace(coding)); coding {
	case "", "identity":
		return body, nil
	case "gzip", "x-gzip":
		rd, err = gzip.NewReader(in)
	case "deflate":
		rd, err = zlib.NewReader(in)
	case "br":
		rd = brotli.NewReader(in)
	default:
		return nil, fmt.Errorf("content encoding %.40q is not one of gzip, deflate and br", coding)
	}
	if err != nil {
		return nil, fmt.Errorf("%s body: %w", coding, err)
	}
	out, err := io.ReadAll(io.LimitReader(rd, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s body: %w", coding, err)
	}
	if int64(len(out)) > limit {
		return nil, &DecodedTooLargeError{Coding: coding, Limit: limit}
	}
	return out, nil
}

// DecodedTooLargeError is a body that decodes to more than Limit bytes.
type DecodedTooLargeError struct {
	Coding string
	Limit  int64
}

// Error names the coding and the limit the decoded body passes.
func (e *DecodedTooLargeError) Error() string {
	return fmt.Sprintf("%s body larger than %d bytes decoded", e.Coding, e.Limit)
}

// ImageOK says whether r is a response a browser shows as an image: a 2xx
// status and a body in a format browsers decode (PNG, JPEG, GIF, WebP,
// AVIF, BMP, ICO, SVG) whose header is sound. A recorded image that is not
// OK is broken in the recording itself, whatever protocol serves it.
func ImageOK(r *Resource) bool {
	if r.Status != 0 && (r.Status < 200 || r.Status > 299) {
		return false
	}
	body, err := r.DecodedBody()
	return err == nil && ImageBytesOK(body)
}

// ImageBytesOK says whether body is an image in a format browsers decode
// (PNG, JPEG, GIF, WebP, AVIF, BMP, ICO, SVG), with a sound header for
// PNG, JPEG and GIF.
func ImageBytesOK(body []byte) bool {
	if len(body) == 0 {
		return false
	}
	switch {
	case bytes.HasPrefix(body, []byte("\x89PNG\r\n\x1a\n")), bytes.HasPrefix(body, []byte("\xff\xd8\xff")),
		bytes.HasPrefix(body, []byte("GIF87a")), bytes.HasPrefix(body, []byte("GIF89a")):
		cfg, _, err := image.DecodeConfig(bytes.NewReader(body))
		return err == nil && cfg.Width > 0 && cfg.Height > 0
	case len(body) >= 12 && string(body[:4]) == "RIFF" && string(body[8:12]) == "WEBP":
		return true
	case len(body) >= 12 && string(body[4:8]) == "ftyp" && (string(body[8:12]) == "avif" || string(body[8:12]) == "avis"):
		return true
	case bytes.HasPrefix(body, []byte("BM")), bytes.HasPrefix(body, []byte("\x00\x00\x01\x00")):
		return len(body) > 14
	}
	head := body[:min(len(body), 4096)]
	return bytes.Contains(bytes.ToLower(head), []byte("<svg"))
}

// BrowserOwn lists the URLs, without query, that a browser asks for on
// its own when it loads the site's document rather than because the page
// needs them: /favicon.ico of the document's origin and the icons, web
// app manifest and OpenSearch description (Chromium fetches it to offer
// the site's search) the document's <link> elements name. A recording
// often lacks them; their 404s say nothing about the replay.
func (s *Site) BrowserOwn() []string {
	doc, err := url.Parse(s.DocumentURL())
	if err != nil {
		return nil
	}
	own := []string{(&url.URL{Scheme: "https", Host: doc.Host, Path: "/favicon.ico"}).String()}
	r := s.Origins[0].Resources[target(s.DocumentPath, s.DocumentQuery)]
	if r == nil {
		return own
	}
	body, err := r.DecodedBody()
	if err != nil {
		return own
	}
	for _, href := range iconLinks(body) {
		u, err := doc.Parse(href)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
			continue
		}
		u.RawQuery, u.Fragment = "", ""
		own = append(own, u.String())
	}
	return own
}

// iconLinks are the hrefs of the document's <link> elements whose rel
// names an icon or a manifest, up to the end of its <head>.
func iconLinks(doc []byte) []string {
	var hrefs []string
	z := html.NewTokenizer(bytes.NewReader(doc))
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken: // the end, or a document too broken to read on
			return hrefs
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if string(name) == "body" {
				return hrefs
			}
			if string(name) != "link" || !hasAttr {
				continue
			}
			if href, ok := iconHref(z); ok {
				hrefs = append(hrefs, href)
			}
		}
	}
}

// iconHref is the href of the <link> z is at when its rel names an icon,
// a manifest or a search description.
func iconHref(z *html.Tokenizer) (string, bool) {
	var rel, href string
	for {
		k, v, more := z.TagAttr()
		switch string(k) {
		case "rel":
			rel = strings.ToLower(string(v))
		case "href":
			href = strings.TrimSpace(string(v))
		}
		if !more {
			break
		}
	}
	for _, word := range strings.Fields(rel) {
		switch word {
		case "icon", "manifest", "apple-touch-icon", "apple-touch-icon-precomposed", "mask-icon", "search":
			return href, href != ""
		}
	}
	return "", false
}

// Documents are the URLs, without query, a tab may navigate to and stay
// within the recording: its GET resources that are HTML documents or
// redirects, sorted. A page's scripts that send the tab anywhere else
// (Google's new tab page does, outside Chrome's own new tab) leave the
// recording; the browser holds such a navigation (client.Request.Documents).
func (s *Site) Documents() []string {
	seen := map[string]bool{}
	for _, o := range s.Origins {
		for _, r := range o.Resources {
			if (r.Method == "" || r.Method == "GET") && (IsRedirect(r.StatusCode()) || TypeOf(r.ContentType) == "html") {
				seen[(&url.URL{Scheme: "https", Host: o.Host, Path: r.Path}).String()] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// IsRedirect says whether a response of status sends the browser
// elsewhere (3xx, but 304 Not Modified).
func IsRedirect(status int) bool { return status >= 300 && status < 400 && status != 304 }
