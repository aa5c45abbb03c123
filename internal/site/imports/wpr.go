package imports

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/flate"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/site"
)

// A WebPageReplay archive (.wprgo, Chromium's record and replay tool) is
// gzip-compressed JSON: Requests maps host, then absolute URL, to a list
// of entries whose SerializedRequest and SerializedResponse are HTTP/1
// messages on the wire (base64 in the JSON), besides Certs and
// NegotiatedProtocol per host, which replay here does not need.

// wprEntry is one recorded exchange; an empty response is a failed request.
type wprEntry struct {
	SerializedRequest  []byte
	SerializedResponse []byte
}

// wprItem is an entry with the host and URL it is recorded under, and its
// place among that URL's entries.
type wprItem struct {
	host, url string
	index     int
	entry     wprEntry
}

// Bounds of a .wprgo archive's decoding: the recorded messages hold the
// bodies (at most MaxArchiveBytes) and their request and header fields;
// the JSON holds them in base64 (4 bytes for 3) beside the certificates.
const (
	wprMessageBytes = site.MaxArchiveBytes + 64<<20
	wprJSONBytes    = wprMessageBytes/3*4 + 16<<20
)

// WPR reads the WebPageReplay archive at path. opts.Document names
// the page ("" to let the import choose). The JSON has no order, so
// exchanges are taken by host and URL in sorted order.
func WPR(ctx context.Context, path string, opts Options) (*site.Archive, Report, error) {
	f, err := safefs.OpenRegular(path)
	if err != nil {
		return nil, Report{}, fmt.Errorf("wpr archive: %w", err)
	}
	defer f.Close()
	a, rep, err := importWPR(ctx, f, opts)
	if err != nil {
		return nil, rep, fmt.Errorf("wpr archive %s: %w", path, err)
	}
	return a, rep, nil
}

// importWPR reads a .wprgo archive from r, reading its JSON as a stream
// (jsonStream) that stops once the recorded messages pass
// wprMessageBytes, or the JSON wprJSONBytes: what it holds is the messages
// it keeps, never the JSON.
func importWPR(ctx context.Context, r io.Reader, opts Options) (*site.Archive, Report, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, Report{}, errors.New("not gzip-compressed: a .wprgo archive is gzip-compressed JSON")
	}
	items, recordedAt, err := readWPR(&jsonStream{r: bufio.NewReader(&boundedReader{ctx: ctx, r: gz, left: wprJSONBytes})})
	if err != nil {
		return nil, Report{}, err
	}
	slices.SortStableFunc(items, func(a, b wprItem) int {
		return cmp.Or(strings.Compare(a.host, b.host), strings.Compare(a.url, b.url))
	})
	c := &collector{ctx: ctx, options: opts, archive: &site.Archive{Source: "wpr", RecordedAt: recordedAt}}
	for _, it := range items {
		if err := c.addWPR(it.url, it.entry); err != nil {
			return nil, c.report, fmt.Errorf("entry %d of %.200q: %w", it.index+1, it.url, err)
		}
	}
	return c.finish(opts.Document, "")
}

// errTooMuchJSON is a .wprgo whose JSON passes wprJSONBytes.
var errTooMuchJSON = fmt.Errorf("more than %d MiB of JSON: the archive's pages add up to more than %d MiB", wprJSONBytes>>20, site.MaxArchiveBytes>>20)

// errTooManyMessages is a .wprgo whose recorded messages pass
// wprMessageBytes.
var errTooManyMessages = fmt.Errorf("its recorded messages add up to more than %d MiB: the archive's pages add up to more than %d MiB", wprMessageBytes>>20, site.MaxArchiveBytes>>20)

// errNotWPR is JSON of another shape than a .wprgo archive's.
var errNotWPR = errors.New("its JSON has another shape than a .wprgo archive's")

// boundedReader reads at most left bytes, then fails with errTooMuchJSON;
// it stops when ctx is done.
type boundedReader struct {
	ctx  context.Context
	r    io.Reader
	left int64
}

// Read reads from the underlying reader until its limit, then fails;
// it stops once ctx ends.
func (b *boundedReader) Read(p []byte) (int, error) {
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	if b.left <= 0 {
		return 0, errTooMuchJSON
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

// readWPR reads the archive's JSON object and returns the entries of its
// Requests (host → URL → entries), skipping the other keys.
func readWPR(s *jsonStream) ([]wprItem, time.Time, error) {
	var items []wprItem
	var recordedAt time.Time
	budget := int64(wprMessageBytes)
	err := s.object(func(key string) error {
		if key == "DeterministicTimeSeedMs" {
			var err error
			recordedAt, err = wprTimeSeed(s)
			return err
		}
		if key != "Requests" {
			return s.skip()
		}
		return s.object(func(host string) error {
			return s.object(func(url string) error {
				return s.array(func(i int) error {
					e, err := readWPREntry(s, &budget)
					items = append(items, wprItem{host: host, url: url, index: i, entry: e})
					return err
				})
			})
		})
	})
	return items, recordedAt, wprProblem(err)
}

// wprTimeSeed reads the archive's DeterministicTimeSeedMs, the time its
// replay's clock starts at (when it was recorded); zero for a value that
// is no time in ms since 1970 after 1995.
func wprTimeSeed(s *jsonStream) (time.Time, error) {
	c, err := s.peek()
	if err != nil || c == '"' || c == '{' || c == '[' {
		return time.Time{}, cmp.Or(err, s.skip())
	}
	text, err := s.scalarText()
	if err != nil {
		return time.Time{}, err
	}
	ms, err := strconv.ParseInt(text, 10, 64)
	if err != nil || ms < 800_000_000_000 || ms > 1<<50 {
		return time.Time{}, nil
	}
	return time.UnixMilli(ms).UTC(), nil
}

// readWPREntry reads one entry, its messages decoded from base64 as they
// stream, taking their bytes off budget.
func readWPREntry(s *jsonStream, budget *int64) (wprEntry, error) {
	var e wprEntry
	err := s.object(func(key string) error {
		var dst *[]byte
		switch key {
		case "SerializedRequest":
			dst = &e.SerializedRequest
		case "SerializedResponse":
			dst = &e.SerializedResponse
		default:
			return s.skip()
		}
		text, err := s.stringValue()
		if err != nil || text == nil {
			return err
		}
		b, err := io.ReadAll(io.LimitReader(base64.NewDecoder(base64.StdEncoding, text), *budget+1))
		var corrupt base64.CorruptInputError
		switch {
		case errors.As(err, &corrupt):
			return fmt.Errorf("%s is not base64", key)
		case err != nil:
			return err
		case int64(len(b)) > *budget:
			return errTooManyMessages
		}
		*budget -= int64(len(b))
		*dst = b
		return nil
	})
	return e, err
}

// wprProblem says what is wrong with an archive whose reading failed with
// err, without quoting it.
func wprProblem(err error) error {
	var corrupt flate.CorruptInputError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errTooMuchJSON), errors.Is(err, errTooManyMessages),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, gzip.ErrChecksum), errors.Is(err, gzip.ErrHeader), errors.As(err, &corrupt):
		return fmt.Errorf("the gzip stream is damaged: %v", err)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("not a WebPageReplay archive: its JSON ends early")
	case errors.Is(err, errNotWPR), errors.Is(err, errJSON):
		return fmt.Errorf("not a WebPageReplay archive: %w", err)
	}
	return fmt.Errorf("not a WebPageReplay archive: %v", err)
}

// addWPR decodes one entry's HTTP/1 messages and adds the exchange.
func (c *collector) addWPR(rawURL string, e wprEntry) error {
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(e.SerializedRequest)))
	if err != nil {
		return fmt.Errorf("SerializedRequest is not an HTTP request: %v", err)
	}
	if len(e.SerializedResponse) == 0 {
		c.report.Entries++
		c.report.NoResponse++
		return nil
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(e.SerializedResponse)), req)
	if err != nil {
		return fmt.Errorf("SerializedResponse is not an HTTP response: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, site.MaxArchiveBytes+1)) // chunked framing removed
	if err != nil {
		return fmt.Errorf("the response body is damaged: %v", err)
	}
	var header []site.Field
	for _, name := range slices.Sorted(maps.Keys(resp.Header)) {
		for _, v := range resp.Header[name] {
			header = append(header, site.Field{Name: name, Value: v})
		}
	}
	c.agents.note(req.Header.Get("User-Agent"))
	_, err = c.add(req.Method, rawURL, "", resp.StatusCode, header, body)
	return err
}
