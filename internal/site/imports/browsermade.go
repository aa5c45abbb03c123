package imports

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"

	"github.com/quicbench/quicbench/internal/har"
	"github.com/quicbench/quicbench/internal/site"
)

// browserMade is what the recording browser did with a request it
// answered itself ("307 Internal Redirect" with a
// Non-Authoritative-Reason field, Chrome's HARs).
type browserMade int

const (
	// fromServer: a server sent the response.
	fromServer browserMade = iota
	// hstsUpgrade: an http URL upgraded to the same https URL (reason
	// HSTS); the https exchange is in the recording, so it is left out
	// (replayed, it would point at itself).
	hstsUpgrade
	// answeredInBrowser: an extension (reason Delegate) sent the request
	// to about:blank or to a data: URL, so the page got that content
	// without any server; replayed as a 200 with it at the request's URL,
	// so the page gets what it got (an empty frame, a stub script) rather
	// than an error page from a host the recording lacks.
	answeredInBrowser
	// redirectedElsewhere: a browser-made redirect to another http(s)
	// URL: left out; the recording holds that URL's exchange if the
	// browser fetched it.
	redirectedElsewhere
)

// classifyBrowserMade says whether r came from a server or how the
// recording browser made it up; for answeredInBrowser it returns the
// answer to replay in its place (Content-Type and body). It reads no
// more than the response's own fields.
func classifyBrowserMade(r har.Response) (kind browserMade, header []site.Field, body []byte) {
	reason, target := "", r.RedirectURL
	for _, f := range r.Headers {
		switch {
		case strings.EqualFold(f.Name, "non-authoritative-reason"):
			reason = f.Value
		case strings.EqualFold(f.Name, "location") && target == "":
			target = f.Value
		}
	}
	if reason == "" && !isInternalRedirect(r) {
		return fromServer, nil, nil
	}
	if strings.EqualFold(strings.TrimSpace(reason), "HSTS") {
		return hstsUpgrade, nil, nil
	}
	if contentType, body, ok := inBrowserContent(target); ok {
		return answeredInBrowser, []site.Field{{Name: "Content-Type", Value: contentType}}, body
	}
	return redirectedElsewhere, nil, nil
}

// isInternalRedirect says whether r is Chrome's "307 Internal Redirect"
// without the reason field (some exporters drop response headers).
func isInternalRedirect(r har.Response) bool {
	return r.Status == http.StatusTemporaryRedirect && strings.EqualFold(strings.TrimSpace(r.StatusText), "Internal Redirect")
}

// inBrowserContent is what a browser shows for a redirect target that
// no server answers: about:blank is an empty HTML document, a data: URL
// its own content; ok is false for any other target.
func inBrowserContent(target string) (contentType string, body []byte, ok bool) {
	t := strings.TrimSpace(target)
	switch {
	case strings.EqualFold(t, "about:blank"):
		return "text/html; charset=utf-8", []byte{}, true
	case len(t) > 5 && strings.EqualFold(t[:5], "data:"):
		return dataURL(t[5:])
	}
	return "", nil, false
}

// dataURL decodes the part of a data: URL after its scheme (RFC 2397):
// [mediatype][;base64],data. The media type defaults to
// text/plain;charset=US-ASCII, or text/plain with the parameters given.
func dataURL(rest string) (contentType string, body []byte, ok bool) {
	meta, data, found := strings.Cut(rest, ",")
	if !found {
		return "", nil, false
	}
	base64Coded := false
	if m, cut := strings.CutSuffix(meta, ";base64"); cut {
		meta, base64Coded = m, true
	}
	switch {
	case strings.TrimSpace(meta) == "":
		meta = "text/plain;charset=US-ASCII"
	case strings.HasPrefix(meta, ";"):
		meta = "text/plain" + meta
	}
	unescaped, err := url.PathUnescape(data)
	if err != nil {
		return "", nil, false
	}
	if !base64Coded {
		return meta, []byte(unescaped), true
	}
	decoded, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(unescaped, "="))
	if err != nil {
		return "", nil, false
	}
	return meta, decoded, true
}
