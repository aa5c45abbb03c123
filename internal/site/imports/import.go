package imports

import (
	"bytes"
	"cmp"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/quicbench/quicbench/internal/site"
)

// Report says what an import kept of a recording and what it left
// out, and why.
type Report struct {
	Entries   int // exchanges in the recording
	PlainHTTP int // over http://: left out, the testbed serves https only
	// OtherSchemes counts entries of schemes other than http and https
	// (wss, ws, data, blob, extensions, ftp): left out.
	OtherSchemes int
	// Informational counts 1xx responses (a WebSocket's 101): left out.
	Informational int
	OtherPorts    int // on another port than 443: left out
	IPHosts       int // to an IP address rather than a host name: left out
	NoBody        int // the recording lacks the body (a HAR exporter dropped it, a 304): left out
	NoResponse    int // requests that got no response (failed, blocked): left out
	// HSTSUpgrades counts the recording browser's own redirects of an
	// http URL to the same https URL (Chrome's "307 Internal Redirect",
	// Non-Authoritative-Reason: HSTS): left out, no server sent them.
	HSTSUpgrades int
	// BrowserMade counts the recording browser's other own redirects to an
	// http(s) URL (an extension's, Non-Authoritative-Reason: Delegate):
	// left out, no server sent them.
	BrowserMade int
	// AnsweredInBrowser counts requests an extension of the recording
	// browser sent to about:blank or a data: URL (a blocked frame or
	// script): kept as a 200 with what the browser showed instead, so the
	// replayed page gets the same empty frame or stub.
	AnsweredInBrowser int
	// PagesLeftAside counts a HAR's pages before the replayed one whose
	// document the import left out (no body recorded).
	PagesLeftAside int
	// Reencoded counts bodies a HAR holds decoded that were compressed
	// again as their Content-Encoding says; Decoded those whose coding
	// cannot be redone here (zstd), served uncompressed.
	Reencoded, Decoded int
	// KeptUTF8 counts a HAR's text bodies kept in UTF-8 because the
	// charset their Content-Type names is unknown or cannot hold them.
	KeptUTF8 int
	// Redirects counts the recorded redirects the replay starts with: the
	// load begins at Start and follows them to the document, as the
	// recorded load did.
	Redirects int
	Start     string
	// PseudoMethods counts a HAR's entries whose method was empty but for
	// the :method pseudo-header among their headers, taken from it.
	PseudoMethods int
	// NoMethods counts a HAR's entries with no method at all (TracerBench's)
	// but a whole response: imported as the GET a response without a
	// request body answers.
	NoMethods int
	// NoStatus counts a HAR's responses of status 0 with header fields and
	// a body (Firefox's from its cache): kept as 200 with that body.
	NoStatus int
	// BodilessImages counts a HAR's image responses (200) that hold no
	// body and name no size (Firefox's exporter leaves images out): kept
	// empty, so the replayed page shows them broken, as the recording
	// cannot show them.
	BodilessImages int
	// Revalidated counts 304 responses whose body the recording browser
	// stored (Firefox's HARs): kept as 200 with that body.
	Revalidated int
	// Upgraded counts exchanges over http:// kept as https://
	// (Options.UpgradeHTTP); RewrittenBodies the text bodies whose
	// http:// URLs of those hosts were rewritten, RewrittenURLs the URLs.
	Upgraded, RewrittenBodies, RewrittenURLs int
}

// nothingToReplay says why an import kept no exchange: when every one
// of them got no response, that; else none was an https response on
// port 443, with the reasons the report counted.
func (r Report) nothingToReplay() error {
	if r.Entries > 0 && r.NoResponse == r.Entries {
		return fmt.Errorf("nothing to replay: none of the recording's %d requests has a response (each failed or was blocked while it was recorded, status 0): record the page again", r.Entries)
	}
	var why []string
	for _, c := range []struct {
		n    int
		text string
	}{
		{r.PlainHTTP, "over plain http: --upgrade-http keeps them as https"},
		{r.NoResponse, "without a response"},
		{r.NoBody, "without their body in the recording"},
		{r.OtherPorts, "on another port than 443"},
		{r.IPHosts, "to an IP address"},
		{r.OtherSchemes, "of other schemes"},
		{r.Informational, "informational (1xx)"},
		{r.HSTSUpgrades + r.BrowserMade, "made up by the recording browser"},
	} {
		if c.n > 0 {
			why = append(why, fmt.Sprintf("%d %s", c.n, c.text))
		}
	}
	msg := fmt.Sprintf("nothing to replay: of %d exchanges none is an https response on port 443", r.Entries)
	if len(why) > 0 {
		msg += " (" + strings.Join(why, "; ") + ")"
	}
	return errors.New(msg)
}

// String lists what was left out, one line each, or "" for nothing.
func (r Report) String() string {
	var b strings.Builder
	line := func(n int, what string) {
		if n > 0 {
			fmt.Fprintf(&b, "  %d %s\n", n, what)
		}
	}
	if r.Upgraded > 0 {
		line(r.PlainHTTP, "exchanges over plain http left out (on another port than 80, or the recording has the URL over https too)")
	} else {
		line(r.PlainHTTP, "exchanges over plain http left out (the testbed serves https only; a page's http:// requests will be unmatched; --upgrade-http keeps them as https)")
	}
	line(r.Upgraded, "exchanges over plain http kept as https (--upgrade-http)")
	if r.RewrittenURLs > 0 {
		fmt.Fprintf(&b, "  %d http:// URLs of those hosts rewritten as https:// in %d text bodies (each one byte longer than recorded)\n", r.RewrittenURLs, r.RewrittenBodies)
	}
	line(r.OtherSchemes, "entries of other schemes than http and https (wss, data, blob, extensions, ftp) left out")
	line(r.Informational, "informational (1xx) responses left out")
	line(r.OtherPorts, "exchanges on ports other than 443 left out")
	line(r.IPHosts, "exchanges with an IP address for host left out (the testbed gives each host name its own address)")
	line(r.NoBody, "responses without their body in the recording left out (they would replay as empty)")
	line(r.NoResponse, "requests without a response left out")
	line(r.HSTSUpgrades, "HSTS upgrades the recording browser made itself (307 Internal Redirect, Non-Authoritative-Reason: HSTS) left out: no server sent them")
	line(r.BrowserMade, "other redirects the recording browser made itself (307 Internal Redirect, such as an extension's) left out: no server sent them")
	line(r.AnsweredInBrowser, "requests the recording browser's extensions sent to about:blank or a data: URL kept as a 200 with that content, as the page got it")
	line(r.PagesLeftAside, "pages of the HAR before the replayed one left aside: the recording lacks their document")
	line(r.Reencoded, "bodies recorded decoded compressed again as their Content-Encoding says")
	line(r.Decoded, "bodies whose Content-Encoding cannot be redone served uncompressed")
	line(r.KeptUTF8, "text bodies kept in UTF-8: the charset their Content-Type names is unknown or cannot hold them")
	if r.Redirects > 0 {
		fmt.Fprintf(&b, "  %d recorded redirects replayed before the document, as the recording paid them: loads start at %.200q\n", r.Redirects, r.Start)
	}
	line(r.PseudoMethods, "entries without a method but for the :method pseudo-header took it from there")
	line(r.NoMethods, "entries with no method at all but a whole response imported as GET")
	line(r.Revalidated, "304 responses whose body the recording browser stored kept as 200 with that body")
	line(r.NoStatus, "responses of status 0 with their header fields and body (served from the recording browser's cache) kept as 200")
	line(r.BodilessImages, "images without their body in the recording (its exporter left them out) kept empty: the replayed page shows them broken, counted as \"no image recorded\"")
	return b.String()
}

// collector gathers a recording's exchanges into an archive.
type collector struct {
	// ctx stops an import between exchanges (Ctrl-C).
	ctx      context.Context
	options  Options
	archive  *site.Archive
	report   Report
	upgraded upgrades
	// bodyBytes is the bodies kept so far: an import stops as soon as
	// they pass MaxArchiveBytes, not after reading everything.
	bodyBytes int64
	// agents counts the User-Agents of the recorded requests, in the
	// order first seen.
	agents agentCounts
}

// agentCounts counts User-Agent values in the order first seen.
type agentCounts struct {
	order []string
	n     map[string]int
}

// note counts one request's User-Agent ("" for none: not counted).
func (a *agentCounts) note(ua string) {
	if ua == "" {
		return
	}
	if a.n == nil {
		a.n = map[string]int{}
	}
	if a.n[ua] == 0 {
		a.order = append(a.order, ua)
	}
	a.n[ua]++
}

// common is the User-Agent most requests sent (ties to the first seen),
// "" for none.
func (a *agentCounts) common() string {
	best := ""
	for _, ua := range a.order {
		if a.n[ua] > a.n[best] {
			best = ua
		}
	}
	return best
}

// room is how many more body bytes the archive may hold.
func (c *collector) room() int64 { return site.MaxArchiveBytes - c.bodyBytes }

// add keeps one exchange if the testbed can replay it and returns it, or
// counts why not and returns nil. header is filtered as ArchiveHeader does.
func (c *collector) add(method, rawURL, ip string, status int, header []site.Field, body []byte) (*site.Exchange, error) {
	if c.ctx != nil && c.ctx.Err() != nil {
		return nil, c.ctx.Err()
	}
	c.report.Entries++
	scheme, _, _ := strings.Cut(rawURL, ":")
	switch scheme = strings.ToLower(scheme); {
	case scheme != "http" && scheme != "https" && validScheme(scheme):
		c.report.OtherSchemes++
		return nil, nil
	case status >= 100 && status < 200:
		c.report.Informational++
		return nil, nil
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("URL %.200q is not an absolute URL", rawURL)
	}
	upgraded := false
	if host, ok := c.upgradeURL(u.Scheme, u.Hostname(), u.Port()); ok {
		u.Scheme, u.Host, upgraded = "https", host, true
	}
	switch {
	case u.Scheme == "http":
		c.report.PlainHTTP++
		return nil, nil
	case u.Port() != "" && u.Port() != "443":
		c.report.OtherPorts++
		return nil, nil
	case net.ParseIP(u.Hostname()) != nil:
		c.report.IPHosts++
		return nil, nil
	}
	u.Host = strings.ToLower(u.Hostname())
	u.Fragment = ""
	if len(c.archive.Exchanges) >= site.MaxExchanges {
		return nil, fmt.Errorf("more than %d responses: split the recording", site.MaxExchanges)
	}
	if int64(len(body)) > c.room() {
		return nil, fmt.Errorf("the recording's bodies add up to more than %d MiB, the most a page may have: split the recording", site.MaxArchiveBytes>>20)
	}
	ex := &site.Exchange{Method: strings.ToUpper(method), URL: u.String(), IP: ip, Status: status, Header: site.ArchiveHeader(header), Body: body}
	if err := ex.Check(); err != nil {
		return nil, err
	}
	c.bodyBytes += int64(len(body))
	c.archive.Exchanges = append(c.archive.Exchanges, ex)
	if upgraded {
		c.upgraded.exchanges[ex] = true
	}
	return ex, nil
}

// validScheme says whether s is a URL scheme (RFC 3986: a letter, then
// letters, digits, "+", "-" and ".").
func validScheme(s string) bool {
	for i, c := range s {
		letter := c >= 'a' && c <= 'z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return s != ""
}

// addDecoded is add for a body recorded decoded (a HAR's, the browser's),
// coded again as its Content-Encoding says (codeAsRecorded).
func (c *collector) addDecoded(method, rawURL, ip string, status int, header []site.Field, body []byte) (*site.Exchange, error) {
	body, header, coded := codeAsRecorded(header, body)
	switch coded {
	case recoded:
		c.report.Reencoded++
	case leftDecoded:
		c.report.Decoded++
	}
	return c.add(method, rawURL, ip, status, header, body)
}

// recoding is what codeAsRecorded did to a body.
type recoding int

const (
	uncoded     recoding = iota // no content coding (or identity), or an empty body
	recoded                     // compressed again as its Content-Encoding says
	leftDecoded                 // a coding that cannot be redone here: kept decoded, the field dropped
)

// codeAsRecorded compresses a decoded body again as header's
// Content-Encoding says (gzip, deflate or br), so that it goes on the wire
// coded as recorded; a body of another coding (zstd) is kept decoded and
// the field dropped. header's names may be in any case.
func codeAsRecorded(header []site.Field, body []byte) ([]byte, []site.Field, recoding) {
	enc := site.Get(lowerNames(header), "content-encoding")
	if enc == "" || strings.EqualFold(strings.TrimSpace(enc), "identity") || len(body) == 0 {
		return body, header, uncoded
	}
	if encoded, ok := encode(body, enc); ok {
		return encoded, header, recoded
	}
	return body, withoutField(header, "content-encoding"), leftDecoded
}

// Recording gathers the responses a browser received into an archive, as
// `quicbench record` does.
type Recording struct{ c collector }

// NewRecording starts an archive whose Source is source.
func NewRecording(source string) *Recording {
	return &Recording{c: collector{archive: &site.Archive{Source: source}}}
}

// AddDecoded keeps one response whose body the browser decoded (see
// collector.addDecoded), or counts why it cannot be replayed.
func (r *Recording) AddDecoded(method, rawURL, ip string, status int, header []site.Field, body []byte) error {
	_, err := r.c.addDecoded(method, rawURL, ip, status, header, body)
	return err
}

// Report is what the recording kept and left out so far.
func (r *Recording) Report() Report { return r.c.report }

// Finish returns the archive of the page document.
func (r *Recording) Finish(document string) (*site.Archive, Report, error) {
	return r.c.finish(document, "")
}

// finish picks the document: document if given, else hint (a page the
// recording names) if given, else the one chooseDocument finds; and takes
// the recording's time from the document's Date field when the recording
// did not say it.
func (c *collector) finish(document, hint string) (*site.Archive, Report, error) {
	if err := c.applyUpgrades(); err != nil {
		return nil, c.report, err
	}
	a := c.archive
	if len(a.Exchanges) == 0 {
		return nil, c.report, c.report.nothingToReplay()
	}
	document = cmp.Or(document, hint)
	if rest, ok := strings.CutPrefix(document, "http://"); ok && c.options.UpgradeHTTP {
		document = "https://" + rest
	}
	if document == "" {
		var err error
		if document, err = chooseDocument(a.Exchanges); err != nil {
			return nil, c.report, err
		}
	}
	if u, err := url.Parse(document); err == nil {
		u.Host = strings.ToLower(u.Host)
		document = u.String()
	}
	if c.options.Document == "" {
		document = c.redirectChainStart(document)
	}
	a.Document = document
	if err := a.Check(); err != nil {
		return nil, c.report, err
	}
	if a.RecordedAt.IsZero() {
		a.RecordedAt = documentDate(a)
	}
	a.UserAgent = c.agents.common()
	a.Viewport, a.ViewportSource = c.screenOf(a)
	return a, c.report, nil
}

// maxRedirects bounds the recorded redirects an import follows back
// from the document (browsers follow 20).
const maxRedirects = 20

// redirectChainStart is where the recorded load of document began: the
// URL of the recorded GET redirect (3xx with a Location) to it recorded
// before it, and of the redirect to that, and so on; document when none
// leads to it. The replay then starts there and the load pays the
// redirects' round trips as the recorded one did (a www. page that sent
// phones to m.). Counted in the report.
func (c *collector) redirectChainStart(document string) string {
	exchanges := c.archive.Exchanges
	before := slices.IndexFunc(exchanges, func(ex *site.Exchange) bool { return ex.Method == "GET" && ex.URL == document })
	if before < 0 {
		return document
	}
	seen := map[string]bool{document: true}
	for range maxRedirects {
		from := redirectTo(exchanges[:before], document)
		if from < 0 || seen[exchanges[from].URL] {
			break
		}
		document, before = exchanges[from].URL, from
		seen[document] = true
		c.report.Redirects++
		c.report.Start = document
	}
	return document
}

// redirectTo is the index of the last GET redirect in exchanges whose
// Location, resolved against its URL, is target; −1 for none.
func redirectTo(exchanges []*site.Exchange, target string) int {
	for i := len(exchanges) - 1; i >= 0; i-- {
		ex := exchanges[i]
		if ex.Method != "GET" || !site.IsRedirect(ex.Status) {
			continue
		}
		loc := site.Get(ex.Header, "location")
		base, err := url.Parse(ex.URL)
		if loc == "" || err != nil {
			continue
		}
		next, err := base.Parse(loc)
		if err != nil {
			continue
		}
		next.Host, next.Fragment = strings.ToLower(next.Host), ""
		if next.String() == target {
			return i
		}
	}
	return -1
}

// maxCandidates bounds the pages an import that cannot choose lists.
const maxCandidates = 5

// chooseDocument picks a recording's page among its HTML responses (GET,
// 200): the only one; else the one at path "/" of the host with the most
// requests among the hosts that have one (without a query first); else
// none, and the error lists the likeliest, each as the --document to pass.
func chooseDocument(exchanges []*site.Exchange) (string, error) {
	requests := map[string]int{}
	var pages []*site.Exchange
	for _, ex := range exchanges {
		u, err := url.Parse(ex.URL)
		if err != nil {
			continue
		}
		requests[u.Hostname()]++
		if ex.Method == "GET" && ex.Status == 200 && site.TypeOf(site.Get(ex.Header, "content-type")) == "html" {
			pages = append(pages, ex)
		}
	}
	if len(pages) == 0 {
		return "", fmt.Errorf("the recording has no HTML page: name the page with --document URL")
	}
	rank := pageRanks(pages, requests)
	slices.SortStableFunc(pages, func(a, b *site.Exchange) int { return rank[b].compare(rank[a]) })
	if len(pages) == 1 || rank[pages[0]].atRoot {
		return pages[0].URL, nil
	}
	var list []string
	for _, p := range pages[:min(len(pages), maxCandidates)] {
		list = append(list, fmt.Sprintf("--document %.200q", p.URL))
	}
	return "", fmt.Errorf("the recording has %d HTML pages and none at path / to take: name the page, likeliest first: %s", len(pages), strings.Join(list, ", "))
}

// pageRank orders candidate documents: at path "/" first, then by their
// host's requests, then without a query, then by body size.
type pageRank struct {
	atRoot       bool
	hostRequests int
	noQuery      bool
	bytes        int
}

// pageRanks ranks each page.
func pageRanks(pages []*site.Exchange, requests map[string]int) map[*site.Exchange]pageRank {
	out := map[*site.Exchange]pageRank{}
	for _, p := range pages {
		u, _ := url.Parse(p.URL)
		out[p] = pageRank{atRoot: u.EscapedPath() == "/" || u.EscapedPath() == "", hostRequests: requests[u.Hostname()],
			noQuery: u.RawQuery == "", bytes: len(p.Body)}
	}
	return out
}

// compare orders ranks, the lesser first.
func (r pageRank) compare(o pageRank) int {
	b := func(v bool) int {
		if v {
			return 1
		}
		return 0
	}
	return cmp.Or(cmp.Compare(b(r.atRoot), b(o.atRoot)), cmp.Compare(r.hostRequests, o.hostRequests),
		cmp.Compare(b(r.noQuery), b(o.noQuery)), cmp.Compare(r.bytes, o.bytes))
}

// documentDate is the Date field of a's document response, zero if it has
// none that parses.
func documentDate(a *site.Archive) time.Time {
	for _, ex := range a.Exchanges {
		if ex.URL == a.Document && ex.Method == "GET" {
			if t, err := http.ParseTime(site.Get(ex.Header, "date")); err == nil {
				return t.UTC()
			}
			return time.Time{}
		}
	}
	return time.Time{}
}

// dechunk removes HTTP/1.1 chunked framing from body.
func dechunk(body []byte) ([]byte, error) {
	out, err := io.ReadAll(httputil.NewChunkedReader(bytes.NewReader(body)))
	if err != nil {
		return nil, fmt.Errorf("the body's chunked framing is damaged: %v", err)
	}
	return out, nil
}

// chunked reports whether header says the body is chunked.
func chunked(header []site.Field) bool {
	for _, f := range header {
		if strings.EqualFold(f.Name, "transfer-encoding") && strings.Contains(strings.ToLower(f.Value), "chunked") {
			return true
		}
	}
	return false
}

// encode compresses a decoded body as coding says (gzip, deflate, br);
// ok is false for a coding it cannot produce.
func encode(body []byte, coding string) (out []byte, ok bool) {
	var buf bytes.Buffer
	var w io.WriteCloser
	switch strings.ToLower(strings.TrimSpace(coding)) {
	case "gzip", "x-gzip":
		w, _ = gzip.NewWriterLevel(&buf, 6)
	case "deflate": // zlib-wrapped, as browsers expect
		w, _ = zlib.NewWriterLevel(&buf, flate.DefaultCompression)
	case "br":
		w = brotli.NewWriterLevel(&buf, 5)
	default:
		return nil, false
	}
	w.Write(body)
	w.Close()
	return buf.Bytes(), true
}

// withoutField is h less the fields named name (lower case).
func withoutField(h []site.Field, name string) []site.Field {
	out := make([]site.Field, 0, len(h))
	for _, f := range h {
		if !strings.EqualFold(f.Name, name) {
			out = append(out, f)
		}
	}
	return out
}
