package site

import (
	"cmp"
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/factor"
)

// Archive is a recorded site: every exchange a recording kept, as the
// importers (Mahimahi, HAR, WebPageReplay) and `quicbench record` produce
// it and an archive directory holds it. Its Site replays it.
type Archive struct {
	// Source names where the recording came from: "mahimahi", "har",
	// "wpr" or "record".
	Source string
	// Document is the absolute https URL of the page's main document.
	Document string
	// RecordedAt is when the page was recorded: a HAR's page start, a
	// WebPageReplay archive's time seed, the document response's Date
	// field, or when `quicbench record` ran; zero when nothing says. A
	// deterministic replay starts the page's clock there.
	RecordedAt time.Time
	// UserAgent is the User-Agent of the browser that made the recording,
	// as its requests sent it; "" when the recording does not say.
	UserAgent string
	// Viewport is the viewport the recording was made at, as the
	// recording says or implies (factor.ViewportOfUserAgent: a phone's
	// browser); zero for the default, a desktop's. A replay loads the page
	// at it, so that it asks for the responsive images recorded.
	Viewport factor.Viewport
	// ViewportSource says what decided Viewport: the recording's own
	// requests (which image candidates it fetched), its User-Agent, the
	// import's --viewport, or the default; "" in archives made before it
	// was recorded.
	ViewportSource string
	// Upgraded counts exchanges recorded over http:// that the import kept
	// as https:// (imports.Options.UpgradeHTTP): their text bodies' URLs
	// were rewritten, so the page is not byte for byte as recorded.
	Upgraded int
	// Exchanges are the recorded requests and responses, in recorded order.
	Exchanges []*Exchange
}

// Exchange is one recorded request and its response.
type Exchange struct {
	Method string // request method, such as "GET"
	URL    string // absolute URL of the request, such as "https://a.test/x.css?v=2"
	IP     string // the server's recorded address, "" when not recorded
	Status int    // response status code, such as 200
	// Header are the response's header fields in recorded order, without
	// hop-by-hop fields and Content-Length (ArchiveHeader keeps the rest).
	Header []Field
	// Body is the response body as it went on the wire: content-coded as
	// its Content-Encoding says, chunked framing removed.
	Body []byte
}

// Field is one header field.
type Field struct{ Name, Value string }

// Limits of an archive: as many responses as a synthetic page may have
// objects, and as many bytes as a page may weigh.
const (
	MaxExchanges    = factor.MaxObjects
	MaxArchiveBytes = factor.MaxPageBytes
)

// dropped are the response header fields an archive does not keep:
// hop-by-hop fields and HTTP/1-only framing (RFC 9110 section 7.6.1,
// RFC 9113 section 8.2.2), the length (the server sets it from the body),
// and Alt-Svc (it would point the browser at other endpoints than the
// testbed chooses).
var dropped = map[string]bool{
	"connection": true, "keep-alive": true, "proxy-connection": true, "transfer-encoding": true,
	"upgrade": true, "te": true, "trailer": true, "content-length": true, "alt-svc": true,
}

// ArchiveHeader is h without the fields an archive does not keep, names in
// lower case as h2 and h3 send them.
func ArchiveHeader(h []Field) []Field {
	out := make([]Field, 0, len(h))
	for _, f := range h {
		name := strings.ToLower(strings.TrimSpace(f.Name))
		if name == "" || dropped[name] || strings.HasPrefix(name, ":") {
			continue
		}
		out = append(out, Field{name, f.Value})
	}
	return out
}

// Get returns the value of the first field named name (lower case), or "".
func Get(h []Field, name string) string {
	for _, f := range h {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

// Check validates the archive: a document URL, every exchange's method,
// URL and status, and the limits.
func (a *Archive) Check() error {
	doc, err := replayURL(a.Document)
	if err != nil {
		return fmt.Errorf("archive: document %w", err)
	}
	if len(a.Exchanges) == 0 || len(a.Exchanges) > MaxExchanges {
		return fmt.Errorf("archive: %d responses, outside 1 to %d", len(a.Exchanges), MaxExchanges)
	}
	if err := a.Viewport.Check(); err != nil {
		return fmt.Errorf("archive: viewport %v: %w", a.Viewport, err)
	}
	var bytes int64
	found := false
	for i, ex := range a.Exchanges {
		if err := ex.Check(); err != nil {
			return fmt.Errorf("archive: exchange %d: %w", i+1, err)
		}
		bytes += int64(len(ex.Body))
		found = found || (ex.Method == "GET" && sameResource(ex.URL, doc))
	}
	if bytes > MaxArchiveBytes {
		return fmt.Errorf("archive: bodies add up to %d MB, above the limit of %d MiB", bytes/1e6, MaxArchiveBytes>>20)
	}
	if !found {
		return fmt.Errorf("archive: no GET response for the document %s", a.Document)
	}
	return nil
}

// Check validates one exchange: method, status, header fields and body size.
func (ex *Exchange) Check() error {
	if !validMethod(ex.Method) {
		return fmt.Errorf("method %q is not an HTTP method", ex.Method)
	}
	if _, err := replayURL(ex.URL); err != nil {
		return err
	}
	if ex.Status < 100 || ex.Status > 599 {
		return fmt.Errorf("%s: status %d is outside 100 to 599", ex.URL, ex.Status)
	}
	for _, f := range ex.Header {
		if !ValidFieldName(f.Name) || strings.ContainsAny(f.Value, "\r\n\x00") {
			return fmt.Errorf("%s: header field %q is not a valid field", ex.URL, f.Name)
		}
	}
	return nil
}

// replayURL parses an absolute https URL on port 443 of a host name.
func replayURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, fmt.Errorf("URL is not valid: %v", err)
	case u.Scheme != "https" || u.Hostname() == "" || u.User != nil || u.Opaque != "":
		return nil, fmt.Errorf("URL %.200q is not an https URL of a host", raw)
	case u.Port() != "" && u.Port() != "443":
		return nil, fmt.Errorf("URL %.200q is on port %s: the testbed serves every origin on port 443", raw, u.Port())
	case !validHost(u.Hostname()) || net.ParseIP(u.Hostname()) != nil:
		return nil, fmt.Errorf("URL %.200q: host %.100q is not a host name", raw, u.Hostname())
	}
	return u, nil
}

// sameResource reports whether raw names the same host, path and query as u.
func sameResource(raw string, u *url.URL) bool {
	v, err := url.Parse(raw)
	return err == nil && v.Hostname() == u.Hostname() && v.EscapedPath() == u.EscapedPath() && v.RawQuery == u.RawQuery
}

// validHost accepts DNS names (letters, digits, hyphens, dots) and IPv4
// addresses, the names the testbed can map and certify.
func validHost(h string) bool {
	if len(h) > 253 || h == "" {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// validMethod accepts the methods a page load makes.
func validMethod(m string) bool {
	return slices.Contains([]string{"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"}, m)
}

// ValidFieldName accepts a header field name (an RFC 9110 token).
func ValidFieldName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c <= ' ' || c >= 0x7f || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, c) {
			return false
		}
	}
	return true
}

// Site turns the archive into a site to replay: one origin per host, the
// document's first, the others in the order the recording first used
// them; per origin one resource per method and request target, the first
// recorded (Duplicates counts the rest).
func (a *Archive) Site() (*Site, error) {
	if err := a.Check(); err != nil {
		return nil, err
	}
	doc, _ := replayURL(a.Document)
	s := &Site{DocumentPath: doc.EscapedPath(), DocumentQuery: doc.RawQuery, Recorded: true, RecordedAt: a.RecordedAt, Viewport: a.Viewport}
	if s.DocumentPath == "" {
		s.DocumentPath = "/"
	}
	byHost := map[string]*Origin{}
	origin := func(host string) *Origin {
		if o := byHost[host]; o != nil {
			return o
		}
		o := &Origin{Host: host, Resources: map[string]*Resource{}}
		byHost[host] = o
		s.Origins = append(s.Origins, o)
		return o
	}
	origin(strings.ToLower(doc.Hostname()))
	for _, ex := range a.Exchanges {
		u, _ := url.Parse(ex.URL)
		res := ex.resource(u)
		o := origin(strings.ToLower(u.Hostname()))
		if o.Resources[res.Key()] == nil {
			o.Resources[res.Key()] = res
		}
	}
	return s, s.Validate()
}

// resource is the exchange as a resource of its origin.
func (ex *Exchange) resource(u *url.URL) *Resource {
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	res := &Resource{Path: path, Query: u.RawQuery, Method: ex.Method, Status: ex.Status, Body: ex.Body}
	if ex.Method == "GET" {
		res.Method = ""
	}
	if ex.Status == 200 {
		res.Status = 0
	}
	for _, f := range ArchiveHeader(ex.Header) {
		switch f.Name {
		case "content-type":
			res.ContentType = f.Value
		case "content-encoding":
			res.Encoding = f.Value
		default:
			res.Header = append(res.Header, f)
		}
	}
	return res
}

// Duplicates counts the exchanges whose method and URL an earlier exchange
// already has: replay serves the first.
func (a *Archive) Duplicates() int {
	seen := map[string]bool{}
	n := 0
	for _, ex := range a.Exchanges {
		key := ex.Method + " " + ex.URL
		if seen[key] {
			n++
		}
		seen[key] = true
	}
	return n
}

// Key is the resource's key in its origin's Resources: the request target
// (path, and "?query" if it has one), preceded by the method and a space
// for methods other than GET.
func (r *Resource) Key() string {
	if r.Method != "" {
		return r.Method + " " + r.Target()
	}
	return r.Target()
}

// Target is the resource's request target: its path, and "?query" if it
// has one.
func (r *Resource) Target() string { return target(r.Path, r.Query) }

// target joins an escaped path and a raw query into a request target.
func target(path, query string) string {
	if query == "" {
		return path
	}
	return path + "?" + query
}

// StatusCode is the resource's response status (200 unless recorded otherwise).
func (r *Resource) StatusCode() int { return cmp.Or(r.Status, 200) }

// TypeSummary is what an archive holds of one content type.
type TypeSummary struct {
	Type      string // such as "javascript", "image", "css"; "other" for the rest
	Responses int
	Bytes     int64 // body bytes as on the wire
}

// ArchiveSummary is what an import prints: the archive's origins,
// responses, bytes by content type, and what it could not keep.
type ArchiveSummary struct {
	Origins, Responses, Duplicates int
	Bytes                          int64
	ByType                         []TypeSummary
}

// Summary counts the archive's origins, responses and bytes by type.
func (a *Archive) Summary() ArchiveSummary {
	sum := ArchiveSummary{Responses: len(a.Exchanges), Duplicates: a.Duplicates()}
	hosts := map[string]bool{}
	types := map[string]*TypeSummary{}
	for _, ex := range a.Exchanges {
		if u, err := url.Parse(ex.URL); err == nil {
			hosts[strings.ToLower(u.Hostname())] = true
		}
		name := TypeOf(Get(ArchiveHeader(ex.Header), "content-type"))
		t := types[name]
		if t == nil {
			t = &TypeSummary{Type: name}
			types[name] = t
		}
		t.Responses++
		t.Bytes += int64(len(ex.Body))
		sum.Bytes += int64(len(ex.Body))
	}
	sum.Origins = len(hosts)
	for _, t := range types {
		sum.ByType = append(sum.ByType, *t)
	}
	slices.SortFunc(sum.ByType, func(x, y TypeSummary) int { return cmp.Or(cmp.Compare(y.Bytes, x.Bytes), cmp.Compare(x.Type, y.Type)) })
	return sum
}

// TypeOf names the kind of a content type as the HTTP Archive counts them.
func TypeOf(contentType string) string {
	ct := strings.ToLower(strings.TrimSpace(strings.Split(contentType, ";")[0]))
	switch {
	case ct == "text/html" || ct == "application/xhtml+xml":
		return "html"
	case ct == "text/css":
		return "css"
	case strings.Contains(ct, "javascript") || strings.Contains(ct, "ecmascript"):
		return "javascript"
	case strings.HasPrefix(ct, "font/") || strings.Contains(ct, "font"):
		return "font"
	case strings.HasPrefix(ct, "image/"):
		return "image"
	case strings.HasPrefix(ct, "video/") || strings.HasPrefix(ct, "audio/"):
		return "media"
	case ct == "application/json" || strings.HasSuffix(ct, "+json"):
		return "json"
	case ct == "":
		return "none"
	}
	return "other"
}

// count is "1 origin" or "N origins".
func count(n int, noun string) string { return fmt.Sprintf("%d %s", n, plural(n, noun)) }

// plural is noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// String prints the summary as import shows it.
func (s ArchiveSummary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %s, %s", count(s.Origins, "origin"), count(s.Responses, "response"), megabytes(s.Bytes))
	if s.Duplicates > 0 {
		fmt.Fprintf(&b, ", %d duplicates (the first of each is replayed)", s.Duplicates)
	}
	b.WriteString("\n")
	for _, t := range s.ByType {
		fmt.Fprintf(&b, "  %-10s %5d %-9s %12s\n", t.Type, t.Responses, plural(t.Responses, "response"), megabytes(t.Bytes))
	}
	return b.String()
}

// megabytes formats n bytes in kB or MB.
func megabytes(n int64) string {
	if n < 1e6 {
		return strconv.FormatFloat(float64(n)/1e3, 'f', 1, 64) + " kB"
	}
	return strconv.FormatFloat(float64(n)/1e6, 'f', 2, 64) + " MB"
}

// ArchiveOf records s as the servers send it without a cache: each
// resource's response with its type, encoding and the cross-origin fields
// of the Go origin, the document first, the rest by host and key. It turns
// a generated page into an archive (for tests, and for replaying it
// through the archive path).
func ArchiveOf(s *Site, source string) *Archive {
	a := &Archive{Source: source, Document: s.DocumentURL()}
	var docRes *Exchange
	for _, o := range s.Origins {
		keys := slices.Sorted(maps.Keys(o.Resources))
		for _, key := range keys {
			r := o.Resources[key]
			ex := &Exchange{Method: cmp.Or(r.Method, "GET"), URL: "https://" + o.Host + r.Target(), Status: r.StatusCode(), Body: r.Body}
			if r.ContentType != "" {
				ex.Header = append(ex.Header, Field{"content-type", r.ContentType})
			}
			if r.Encoding != "" {
				ex.Header = append(ex.Header, Field{"content-encoding", r.Encoding})
			}
			ex.Header = append(ex.Header, r.Header...)
			if !s.Recorded {
				ex.Header = append(ex.Header, Field{"timing-allow-origin", "*"}, Field{"access-control-allow-origin", "*"})
			}
			if ex.URL == a.Document && docRes == nil {
				docRes = ex
				continue
			}
			a.Exchanges = append(a.Exchanges, ex)
		}
	}
	if docRes != nil {
		a.Exchanges = slices.Insert(a.Exchanges, 0, docRes)
	}
	return a
}
