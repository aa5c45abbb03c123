// Package har models HTTP Archive 1.2 files (the W3C draft's format, which
// browsers' developer tools and HAR viewers read): what the built-in loader
// writes for each load. Times are in milliseconds; -1 means "does not
// apply", as the format says.
package har

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/quicbench/quicbench/internal/safefs"
)

// HAR is a whole file.
type HAR struct {
	Log Log `json:"log"`
}

// Log is the archive.
type Log struct {
	Version string  `json:"version"` // "1.2"
	Creator Creator `json:"creator"`
	Pages   []Page  `json:"pages"`
	Entries []Entry `json:"entries"`
}

// Creator names the program that wrote the file.
type Creator struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Page is one page load.
type Page struct {
	StartedDateTime time.Time   `json:"startedDateTime"`
	ID              string      `json:"id"`
	Title           string      `json:"title"`
	PageTimings     PageTimings `json:"pageTimings"`
}

// PageTimings are ms from the page's start.
type PageTimings struct {
	OnContentLoad float64 `json:"onContentLoad"`
	OnLoad        float64 `json:"onLoad"`
}

// Entry is one request and its response.
type Entry struct {
	Pageref         string    `json:"pageref"`
	StartedDateTime time.Time `json:"startedDateTime"`
	// Time is the sum of the timings that apply, in ms.
	Time            float64  `json:"time"`
	Request         Request  `json:"request"`
	Response        Response `json:"response"`
	Cache           struct{} `json:"cache"`
	Timings         Timings  `json:"timings"`
	ServerIPAddress string   `json:"serverIPAddress,omitempty"`
	Connection      string   `json:"connection,omitempty"`
}

// NameValue is a header or query parameter.
type NameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Request is the request of an entry.
type Request struct {
	Method      string      `json:"method"`
	URL         string      `json:"url"`
	HTTPVersion string      `json:"httpVersion"`
	Cookies     []NameValue `json:"cookies"`
	Headers     []NameValue `json:"headers"`
	QueryString []NameValue `json:"queryString"`
	HeadersSize int64       `json:"headersSize"`
	BodySize    int64       `json:"bodySize"`
}

// Response is the response of an entry.
type Response struct {
	Status      int         `json:"status"`
	StatusText  string      `json:"statusText"`
	HTTPVersion string      `json:"httpVersion"`
	Cookies     []NameValue `json:"cookies"`
	Headers     []NameValue `json:"headers"`
	Content     Content     `json:"content"`
	RedirectURL string      `json:"redirectURL"`
	HeadersSize int64       `json:"headersSize"`
	BodySize    int64       `json:"bodySize"`
}

// Content describes the response body.
type Content struct {
	Size     int64  `json:"size"`
	MimeType string `json:"mimeType"`
	// Text is the body, decoded from any Content-Encoding, as text or, if
	// Encoding is "base64", in base64; absent when the exporter left the
	// body out (quicbench's loader never includes it).
	Text     *string `json:"text,omitempty"`
	Encoding string  `json:"encoding,omitempty"`
}

// Timings are the phases of an entry in ms; Blocked, DNS, Connect and SSL
// are -1 when they do not apply (a reused connection).
type Timings struct {
	Blocked float64 `json:"blocked"`
	DNS     float64 `json:"dns"`
	Connect float64 `json:"connect"`
	SSL     float64 `json:"ssl"`
	Send    float64 `json:"send"`
	Wait    float64 `json:"wait"`
	Receive float64 `json:"receive"`
}

// Total is the entry's time: the phases that apply (SSL is part of
// Connect, as the format says).
func (t Timings) Total() float64 {
	total := t.Send + t.Wait + t.Receive
	for _, v := range []float64{t.Blocked, t.DNS, t.Connect} {
		if v > 0 {
			total += v
		}
	}
	return total
}

// New returns an empty archive written by creator.
func New(creator, version string) *HAR {
	return &HAR{Log: Log{Version: "1.2", Creator: Creator{Name: creator, Version: version}, Pages: []Page{}, Entries: []Entry{}}}
}

// WriteFile writes h as indented JSON.
func (h *HAR) WriteFile(path string) error {
	b, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return err
	}
	if err := safefs.WriteFile(filepath.Dir(path), filepath.Base(path), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("har: %w", err)
	}
	return nil
}

// ReadFile reads a HAR file.
func ReadFile(path string) (*HAR, error) { return ReadFileWithin(path, -1) }

// ReadFileWithin reads a HAR file one entry at a time, and stops with a
// BodiesTooLargeError as soon as its bodies add up to more than budget
// bytes (negative: no limit): a file far larger than what it can be used
// for is refused having read no more than that.
func ReadFileWithin(path string, budget int64) (*HAR, error) {
	f, err := safefs.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("har: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > MaxFileBytes {
		return nil, fmt.Errorf("har: %w", &safefs.TooLargeError{Path: path, Limit: MaxFileBytes})
	}
	h, err := parseFrom(f, budget)
	if err != nil {
		return nil, fmt.Errorf("har %s: %w", path, err)
	}
	return h, nil
}

// MaxFileBytes bounds a HAR file: the bodies of a large page, base64.
const MaxFileBytes = 1 << 30

// Parse decodes a HAR document; errors quote none of it.
func Parse(b []byte) (*HAR, error) { return parseFrom(bytes.NewReader(b), -1) }

// parseFrom decodes a HAR document from r within budget (decode), with
// errors that quote none of it.
func parseFrom(r io.Reader, budget int64) (*HAR, error) {
	h, err := decode(r, budget)
	if err != nil {
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		var when *time.ParseError
		var tooLarge *BodiesTooLargeError
		switch {
		case errors.As(err, &tooLarge):
			return nil, err
		case errors.As(err, &when):
			return nil, errors.New("a startedDateTime is neither an RFC 3339 time (such as 2024-05-01T10:00:00.000Z) nor empty")
		case errors.As(err, &syntax):
			return nil, fmt.Errorf("not JSON (byte %d): %s", syntax.Offset, syntax.Error())
		case errors.As(err, &typ):
			return nil, fmt.Errorf("%s is a JSON %s, not the %s HAR 1.2 has there", typ.Field, typ.Value, typ.Type)
		case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
			return nil, errors.New("not JSON: the document ends early")
		}
		return nil, errors.New("not a HAR document")
	}
	if h.Log.Version == "" {
		return nil, errors.New("no log.version: not a HAR file")
	}
	return h, nil
}

// lenientTime is a HAR's startedDateTime as some tools write it: an
// RFC 3339 time, or empty or null where they kept none (TracerBench's
// HARs), which reads as the zero time.
type lenientTime struct{ time.Time }

// UnmarshalJSON reads an RFC 3339 time, "" or null.
func (t *lenientTime) UnmarshalJSON(b []byte) error {
	if s := string(b); s == `""` || s == "null" {
		t.Time = time.Time{}
		return nil
	}
	return t.Time.UnmarshalJSON(b)
}

// UnmarshalJSON reads an entry whose startedDateTime may be empty (the
// zero time: the exporter kept none).
func (e *Entry) UnmarshalJSON(b []byte) error {
	type plain Entry // without this method
	var raw struct {
		plain
		StartedDateTime lenientTime `json:"startedDateTime"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*e = Entry(raw.plain)
	e.StartedDateTime = raw.StartedDateTime.Time
	return nil
}

// UnmarshalJSON reads a page whose startedDateTime may be empty.
func (p *Page) UnmarshalJSON(b []byte) error {
	type plain Page
	var raw struct {
		plain
		StartedDateTime lenientTime `json:"startedDateTime"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*p = Page(raw.plain)
	p.StartedDateTime = raw.StartedDateTime.Time
	return nil
}

// EffectiveMethod is the request's method: Method, or where an exporter left it
// empty, the HTTP/2 pseudo-header :method it kept among the headers
// (TracerBench's HARs); "" if neither says.
func (r Request) EffectiveMethod() string {
	if r.Method != "" {
		return r.Method
	}
	for _, h := range r.Headers {
		if h.Name == ":method" {
			return h.Value
		}
	}
	return ""
}
