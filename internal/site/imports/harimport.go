package imports

import (
	"context"
	"encoding/base64"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	"golang.org/x/text/encoding/htmlindex"

	"github.com/quicbench/quicbench/internal/har"
	"github.com/quicbench/quicbench/internal/site"
)

// HAR reads the HAR 1.2 file at path, with bodies
// (response.content.text). A HAR holds bodies decoded: one whose
// Content-Encoding is gzip, deflate or br is compressed again so that it
// goes on the wire as recorded; others are served decoded. Entries without
// a body are left out and counted. opts.Document names the page ("" for
// the HAR's first page).
func HAR(ctx context.Context, path string, opts Options) (*site.Archive, Report, error) {
	h, err := har.ReadFileWithin(path, site.MaxArchiveBytes)
	if err != nil {
		return nil, Report{}, err
	}
	if err := ctx.Err(); err != nil {
		return nil, Report{}, err
	}
	a, rep, err := importHAR(ctx, h, opts)
	if err != nil {
		return nil, rep, fmt.Errorf("har %s: %w", path, err)
	}
	return a, rep, nil
}

// importHAR turns a parsed HAR into an archive.
func importHAR(ctx context.Context, h *har.HAR, opts Options) (*site.Archive, Report, error) {
	c := &collector{ctx: ctx, options: opts, archive: &site.Archive{Source: "har", RecordedAt: harRecordedAt(h)}}
	docs := pageDocuments{}
	for i, e := range h.Log.Entries {
		if err := ctx.Err(); err != nil { // before the body's coding, which takes time
			return nil, c.report, err
		}
		ex, err := c.addHAREntry(e)
		if err != nil {
			return nil, c.report, fmt.Errorf("entry %d (%.200q): %w", i+1, e.Request.URL, err)
		}
		docs.see(e, ex)
	}
	if opts.Document != "" {
		return c.finish(opts.Document, "")
	}
	page, err := docs.choose(h.Log.Pages, &c.report)
	if err != nil {
		return nil, c.report, err
	}
	if page == nil {
		return c.finish("", "")
	}
	if !page.StartedDateTime.IsZero() {
		c.archive.RecordedAt = page.StartedDateTime.UTC()
	}
	return c.finish("", docs[page.ID].exchange.URL)
}

// pageDocument is a HAR page's document: the page's first answered GET
// (status 200, or a 304 whose body the browser stored) of HTML, else its
// first answered GET of any type; and its exchange (nil if the import
// left it out).
type pageDocument struct {
	entry    har.Entry
	exchange *site.Exchange
	html     bool
}

// pageDocuments are the documents of a HAR's pages by page ID.
type pageDocuments map[string]pageDocument

// see notes entry e (kept as ex, or left out if ex is nil) if it is the
// page's first answered GET, or its first of HTML where the first was not.
func (d pageDocuments) see(e har.Entry, ex *site.Exchange) {
	answered := e.Response.Status == http.StatusOK || revalidated(e.Response)
	if e.Pageref == "" || !strings.EqualFold(e.Request.EffectiveMethod(), "GET") || !answered {
		return
	}
	html := site.TypeOf(e.Response.Content.MimeType) == "html"
	if seen, ok := d[e.Pageref]; ok && (seen.html || !html) {
		return
	}
	d[e.Pageref] = pageDocument{entry: e, exchange: ex, html: html}
}

// choose is the HAR's first page whose document the import kept, counting
// the pages before it in report.PagesLeftAside; nil when no page names a
// document (the import then chooses among the HTML pages). It fails when
// pages name documents but the import kept none of them.
func (d pageDocuments) choose(pages []har.Page, report *Report) (*har.Page, error) {
	var first *pageDocument
	aside := 0
	for i, p := range pages {
		doc, ok := d[p.ID]
		if !ok {
			continue
		}
		if doc.exchange != nil && !doc.html {
			return nil, fmt.Errorf("the page's document would be %.200q, a %.40q response, not an HTML page: name the page with --document URL", doc.entry.Request.URL, doc.entry.Response.Content.MimeType)
		}
		if doc.exchange != nil {
			report.PagesLeftAside += aside
			return &pages[i], nil
		}
		aside++
		if first == nil {
			first = &doc
		}
	}
	if first != nil {
		return nil, leftOutDocument(first.entry)
	}
	return nil, nil
}

// addHAREntry keeps one entry and returns its exchange, or nil for an
// entry left out (counted).
func (c *collector) addHAREntry(e har.Entry) (*site.Exchange, error) {
	kind, answerHeader, answer := classifyBrowserMade(e.Response)
	switch kind {
	case hstsUpgrade:
		c.report.Entries++
		c.report.HSTSUpgrades++
		return nil, nil
	case redirectedElsewhere:
		c.report.Entries++
		c.report.BrowserMade++
		return nil, nil
	case answeredInBrowser:
		c.report.AnsweredInBrowser++
		return c.add(http.MethodGet, e.Request.URL, e.ServerIPAddress, http.StatusOK, answerHeader, answer)
	}
	body, ok, err := c.harBody(e)
	if err != nil || !ok {
		return nil, err
	}
	header := make([]site.Field, 0, len(e.Response.Headers))
	for _, f := range e.Response.Headers {
		header = append(header, site.Field{Name: f.Name, Value: f.Value})
	}
	for _, f := range e.Request.Headers {
		if strings.EqualFold(f.Name, "user-agent") {
			c.agents.note(f.Value)
		}
	}
	method := e.Request.EffectiveMethod()
	switch {
	case e.Request.Method == "" && method != "":
		c.report.PseudoMethods++
	case method == "" && e.Request.BodySize <= 0:
		method = http.MethodGet // no method, no request body, a whole response
		c.report.NoMethods++
	}
	status := e.Response.Status
	switch {
	case revalidated(e.Response):
		c.report.Revalidated++
		status, header = http.StatusOK, withContentType(header, e.Response.Content.MimeType)
	case wholeWithoutStatus(e.Response):
		c.report.NoStatus++
		status, header = http.StatusOK, withContentType(header, e.Response.Content.MimeType)
	}
	return c.addDecoded(method, e.Request.URL, e.ServerIPAddress, status, header, body)
}

// revalidated says whether r is a 304 whose body the recording browser
// stored from its cache (Firefox writes it into content.text): the page
// was loaded with that body, so it replays as a 200 with it.
func revalidated(r har.Response) bool {
	return r.Status == http.StatusNotModified && r.Content.Text != nil && *r.Content.Text != ""
}

// wholeWithoutStatus says whether r has status 0 yet a whole response:
// its header fields and a body (Firefox writes a response it served from
// its cache so). The page was loaded with that body: it replays as a 200.
func wholeWithoutStatus(r har.Response) bool {
	return r.Status == 0 && len(r.Headers) > 0 && r.Content.Text != nil && *r.Content.Text != ""
}

// withContentType is header with a Content-Type of mimeType where it has
// none (a 304 carries its resource's type only in the HAR's content).
func withContentType(header []site.Field, mimeType string) []site.Field {
	if mimeType == "" || site.Get(lowerNames(header), "content-type") != "" {
		return header
	}
	return append(header, site.Field{Name: "Content-Type", Value: mimeType})
}

// harBody is the entry's decoded body; ok is false for an entry left out
// (no response, or no body where one was sent), counted in the report.
func (c *collector) harBody(e har.Entry) (body []byte, ok bool, err error) {
	r := e.Response
	switch {
	case r.Status == 0 && !wholeWithoutStatus(r):
		c.report.Entries++
		c.report.NoResponse++
		return nil, false, nil
	case r.Status == http.StatusNotModified && !revalidated(r), r.Content.Text == nil && r.Content.Size > 0: // a 304's body came from the recording browser's cache, and this HAR lacks it
		c.report.Entries++
		c.report.NoBody++
		return nil, false, nil
	case r.Content.Text == nil:
		if r.Status == http.StatusOK && strings.HasPrefix(strings.ToLower(r.Content.MimeType), "image/") {
			c.report.BodilessImages++
		}
		return nil, true, nil
	case r.Content.Encoding == "base64":
		body, err := base64.StdEncoding.DecodeString(*r.Content.Text)
		if err != nil {
			return nil, false, fmt.Errorf("content.text is not valid base64")
		}
		return body, true, nil
	case r.Content.Encoding != "":
		return nil, false, fmt.Errorf("content.encoding %.40q is not base64, the one HAR 1.2 names", r.Content.Encoding)
	}
	return c.inCharset(*r.Content.Text, r), true, nil
}

// inCharset is a HAR's text body (which the browser decoded into the
// JSON's Unicode) in the charset its Content-Type names, as it was sent;
// in UTF-8 when it names none or UTF-8, or when the charset cannot hold
// the text (counted).
func (c *collector) inCharset(text string, r har.Response) []byte {
	ct := r.Content.MimeType
	for _, h := range r.Headers {
		if strings.EqualFold(h.Name, "content-type") {
			ct = h.Value
		}
	}
	_, params, err := mime.ParseMediaType(ct)
	charset := strings.ToLower(strings.TrimSpace(params["charset"]))
	if err != nil || charset == "" || charset == "utf-8" || charset == "utf8" {
		return []byte(text)
	}
	enc, err := htmlindex.Get(charset)
	if err != nil {
		c.report.KeptUTF8++
		return []byte(text)
	}
	b, err := enc.NewEncoder().Bytes([]byte(text))
	if err != nil {
		c.report.KeptUTF8++
		return []byte(text)
	}
	return b
}

// harRecordedAt is when the HAR's page started loading (its first page's
// startedDateTime; importHAR takes the replayed page's when it replays
// another), else its earliest entry's start; zero if none says.
func harRecordedAt(h *har.HAR) time.Time {
	if len(h.Log.Pages) > 0 && !h.Log.Pages[0].StartedDateTime.IsZero() {
		return h.Log.Pages[0].StartedDateTime.UTC()
	}
	var first time.Time
	for _, e := range h.Log.Entries {
		if t := e.StartedDateTime; !t.IsZero() && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	return first.UTC()
}

// leftOutDocument says why the import left out a page's document e, and
// the fix: --upgrade-http for one over plain http (its body, if the HAR
// has it, then replays as https), else another page.
func leftOutDocument(e har.Entry) error {
	u := e.Request.URL
	plain := len(u) >= 7 && strings.EqualFold(u[:7], "http://")
	switch {
	case plain && e.Response.Content.Text != nil:
		return fmt.Errorf("the page's document %.200q is over plain http, which the testbed does not serve: import again with --upgrade-http to replay it (and the page's other http:// exchanges) over https", u)
	case plain:
		return fmt.Errorf("the page's document %.200q is over plain http and the HAR holds no body for it: export the HAR with content and import it with --upgrade-http, or name another page with --document URL", u)
	case e.Response.Content.Text == nil:
		return fmt.Errorf("the page's document %.200q was left out: the HAR holds no body for it (export the HAR with content), or name another page with --document URL", u)
	}
	return fmt.Errorf("the page's document %.200q was left out: it is not an https exchange on port 443 to a host name; name another page with --document URL", u)
}
