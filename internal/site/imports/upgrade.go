package imports

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/site"
)

// Options are what an import is told beyond the recording itself.
type Options struct {
	// Document is the page's absolute URL; "" lets the import choose (a
	// HAR's page record, else chooseDocument).
	Document string
	// UpgradeHTTP keeps a recording's exchanges over http:// (port 80) as
	// https:// ones and rewrites the http:// URLs of their hosts in text
	// bodies (HTML, CSS, JavaScript, JSON, XML, SVG, plain text) and in
	// Location fields, so that a page recorded before its site moved to
	// HTTPS replays over h1, h2 and h3. The bodies then differ from the
	// recorded ones by one byte per rewritten URL; Report counts both.
	UpgradeHTTP bool
	// Viewport, when SetViewport, is the archive's viewport (zero: the
	// default, a desktop's); else the import takes the one the recording's
	// User-Agent implies (factor.ViewportOfUserAgent).
	Viewport    factor.Viewport
	SetViewport bool
}

// upgrades is what an import with UpgradeHTTP changed so far.
type upgrades struct {
	// exchanges are those recorded over http://, kept as https://.
	exchanges map[*site.Exchange]bool
	// hosts are the (lower-case) host names of those exchanges: their
	// http:// URLs in bodies are rewritten.
	hosts map[string]bool
}

// upgradeURL turns an http:// URL on port 80 (or none) into https:// with
// no port, noting its host; ok is false when the import does not upgrade
// or the URL has another port.
func (c *collector) upgradeURL(scheme, host, port string) (newHost string, ok bool) {
	if !c.options.UpgradeHTTP || scheme != "http" || (port != "" && port != "80") {
		return "", false
	}
	host = strings.ToLower(host)
	if c.upgraded.hosts == nil {
		c.upgraded = upgrades{exchanges: map[*site.Exchange]bool{}, hosts: map[string]bool{}}
	}
	c.upgraded.hosts[host] = true
	return host, true
}

// MaxRewriteDecodedBytes bounds the bytes an upgrading import decodes to
// rewrite URLs in, over all its bodies: twice the most a page may hold.
// A recording whose compressed text decodes to more (a gzip bomb: 40
// bodies of 256 MiB from 10 MB on disk took 57 s and 1.78 GB) is refused.
const MaxRewriteDecodedBytes = 2 * site.MaxArchiveBytes

// applyUpgrades finishes an upgrading import: an upgraded exchange whose
// method and URL a native https exchange also has is left out (counted
// as plain http: the https one is what the site served over TLS), and
// the http:// URLs of upgraded hosts are rewritten in every text body and
// Location field. It stops between exchanges when c.ctx is done, and
// fails when the bodies decoded pass MaxRewriteDecodedBytes.
func (c *collector) applyUpgrades() error {
	if len(c.upgraded.exchanges) == 0 {
		return nil
	}
	native := map[string]bool{}
	for _, ex := range c.archive.Exchanges {
		if !c.upgraded.exchanges[ex] {
			native[ex.Method+" "+ex.URL] = true
		}
	}
	kept := c.archive.Exchanges[:0]
	budget := int64(MaxRewriteDecodedBytes)
	for _, ex := range c.archive.Exchanges {
		if c.ctx != nil && c.ctx.Err() != nil {
			return c.ctx.Err()
		}
		if c.upgraded.exchanges[ex] && native[ex.Method+" "+ex.URL] {
			c.report.PlainHTTP++
			continue
		}
		if c.upgraded.exchanges[ex] {
			c.report.Upgraded++
		}
		if err := c.rewriteExchange(ex, &budget); err != nil {
			return err
		}
		kept = append(kept, ex)
	}
	c.archive.Exchanges = kept
	c.archive.Upgraded = c.report.Upgraded
	return nil
}

// rewriteExchange rewrites ex's Location field and, for a text body, its
// upgraded hosts' http:// URLs, coding the body again as it was; budget
// is the bytes still to be decoded, less this body's.
func (c *collector) rewriteExchange(ex *site.Exchange, budget *int64) error {
	for i, f := range ex.Header {
		if f.Name == "location" {
			if v, n := rewriteHTTP([]byte(f.Value), c.upgraded.hosts); n > 0 {
				ex.Header[i].Value = string(v)
			}
		}
	}
	if !textual(site.Get(ex.Header, "content-type")) {
		return nil
	}
	decoded, err := site.DecodeContentWithin(site.Get(ex.Header, "content-encoding"), ex.Body, min(*budget, site.MaxDecodedBytes))
	var tooLarge *site.DecodedTooLargeError
	if errors.As(err, &tooLarge) {
		// What was decoded counts, whether the body fit or not.
		if *budget -= tooLarge.Limit; *budget <= 0 {
			return fmt.Errorf("--upgrade-http: the recording's compressed text bodies decode to more than %d MiB in all (%.200q passed it): it holds a decompression bomb or more than a page; import it without --upgrade-http", MaxRewriteDecodedBytes>>20, ex.URL)
		}
		return nil // one body too large to rewrite: served as recorded
	}
	if err != nil {
		return nil // a coding it cannot read: served as recorded
	}
	*budget -= int64(len(decoded))
	out, n := rewriteHTTP(decoded, c.upgraded.hosts)
	if n == 0 {
		return nil
	}
	c.report.RewrittenBodies++
	c.report.RewrittenURLs += n
	ex.Body, ex.Header, _ = codeAsRecorded(ex.Header, out)
	return nil
}

// textual says whether a content type is text whose URLs a browser
// follows: HTML, CSS, JavaScript, JSON, XML, SVG, or text/*.
func textual(contentType string) bool {
	switch site.TypeOf(contentType) {
	case "html", "css", "javascript", "json":
		return true
	}
	ct := strings.ToLower(strings.TrimSpace(strings.Split(contentType, ";")[0]))
	return strings.HasPrefix(ct, "text/") || strings.HasSuffix(ct, "xml") // application/xml, image/svg+xml
}

// httpPrefixes are how an http:// URL starts in a body: plainly, and with
// its slashes escaped as JSON and JavaScript strings may write them.
var httpPrefixes = [][]byte{[]byte("http://"), []byte(`http:\/\/`)}

// rewriteHTTP rewrites in text every http:// URL (either spelling of
// httpPrefixes, the scheme in any case) whose host is one of hosts as
// https://, dropping an explicit ":80" (a URL with another port is left);
// n is how many it rewrote. A host must end where the URL's host ends:
// http://a.test.example is not a.test.
func rewriteHTTP(text []byte, hosts map[string]bool) (out []byte, n int) {
	var b bytes.Buffer
	last := 0
	for i := 0; i+7 <= len(text); i++ {
		if text[i] != 'h' && text[i] != 'H' {
			continue
		}
		prefix := matchPrefix(text[i:])
		if prefix == nil {
			continue
		}
		start := i + len(prefix)
		end := start
		for end < len(text) && hostByte(text[end]) {
			end++
		}
		end = bytes.LastIndexFunc(text[:end], func(r rune) bool { return r != '.' }) + 1 // "see http://a.test."
		if end <= start || !hosts[strings.ToLower(string(text[start:end]))] {
			continue
		}
		host := bytes.ToLower(text[start:end])
		if end < len(text) && text[end] == ':' {
			portEnd := end + 1
			for portEnd < len(text) && digit(text[portEnd]) {
				portEnd++
			}
			if string(text[end+1:portEnd]) != "80" {
				continue // another port: not what the import upgraded
			}
			end = portEnd
		}
		b.Write(text[last:i])
		b.WriteString("https")
		b.Write(prefix[len("http"):])
		b.Write(host)
		last, i, n = end, end-1, n+1
	}
	if n == 0 {
		return text, 0
	}
	b.Write(text[last:])
	return b.Bytes(), n
}

// matchPrefix is the one of httpPrefixes text starts with (the scheme's
// letters in any case), or nil.
func matchPrefix(text []byte) []byte {
	for _, p := range httpPrefixes {
		if len(text) >= len(p) && bytes.EqualFold(text[:4], p[:4]) && bytes.Equal(text[4:len(p)], p[4:]) {
			return p
		}
	}
	return nil
}

// hostByte says whether c may be part of a host name.
func hostByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || digit(c) || c == '-' || c == '.'
}

// digit says whether c is an ASCII digit.
func digit(c byte) bool { return c >= '0' && c <= '9' }
