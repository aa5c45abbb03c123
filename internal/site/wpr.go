package site

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"

	"github.com/quicbench/quicbench/internal/safefs"
)

// A WebPageReplay archive (.wprgo, Chromium's record and replay tool) is
// gzip-compressed JSON: Requests maps host, then absolute URL, to a list
// of entries whose SerializedRequest and SerializedResponse are HTTP/1
// messages on the wire (base64 in the JSON), besides Certs and
// NegotiatedProtocol per host, which replay here does not need.

// wprArchive is the part of a .wprgo archive an import reads.
type wprArchive struct {
	Requests map[string]map[string][]wprEntry
}

// wprEntry is one recorded exchange; an empty response is a failed request.
type wprEntry struct {
	SerializedRequest  []byte
	SerializedResponse []byte
}

// ImportWPR reads the WebPageReplay archive at path. document names the
// page ("" for the archive's one HTML page). The JSON has no order, so
// exchanges are taken by host and URL in sorted order.
func ImportWPR(path, document string) (*Archive, ImportReport, error) {
	f, err := safefs.OpenRegular(path)
	if err != nil {
		return nil, ImportReport{}, fmt.Errorf("wpr archive: %w", err)
	}
	defer f.Close()
	a, rep, err := importWPR(f, document)
	if err != nil {
		return nil, rep, fmt.Errorf("wpr archive %s: %w", path, err)
	}
	return a, rep, nil
}

// importWPR reads a .wprgo archive from r.
func importWPR(r io.Reader, document string) (*Archive, ImportReport, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, ImportReport{}, errors.New("not gzip-compressed: a .wprgo archive is gzip-compressed JSON")
	}
	data, err := io.ReadAll(io.LimitReader(gz, 2*MaxArchiveBytes+1))
	if err != nil {
		return nil, ImportReport{}, fmt.Errorf("the gzip stream is damaged: %v", err)
	}
	if len(data) > 2*MaxArchiveBytes {
		return nil, ImportReport{}, fmt.Errorf("more than %d MiB of JSON", 2*MaxArchiveBytes>>20)
	}
	var w wprArchive
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, ImportReport{}, fmt.Errorf("not a WebPageReplay archive: its JSON does not decode (%v)", jsonProblem(err))
	}
	c := &collector{archive: &Archive{Source: "wpr"}}
	for _, host := range slices.Sorted(maps.Keys(w.Requests)) {
		urls := w.Requests[host]
		for _, u := range slices.Sorted(maps.Keys(urls)) {
			for i, e := range urls[u] {
				if err := c.addWPR(u, e); err != nil {
					return nil, c.report, fmt.Errorf("entry %d of %.200s: %w", i+1, u, err)
				}
			}
		}
	}
	return c.finish(document, "")
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
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxArchiveBytes+1)) // chunked framing removed
	if err != nil {
		return fmt.Errorf("the response body is damaged: %v", err)
	}
	var header []Field
	for _, name := range slices.Sorted(maps.Keys(resp.Header)) {
		for _, v := range resp.Header[name] {
			header = append(header, Field{name, v})
		}
	}
	_, err = c.add(req.Method, rawURL, "", resp.StatusCode, header, body)
	return err
}

// jsonProblem describes a JSON decoding error without quoting the input.
func jsonProblem(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("syntax error at byte %d", syntax.Offset)
	case errors.As(err, &typ):
		return fmt.Sprintf("%s is a JSON %s, not %s", typ.Field, typ.Value, typ.Type)
	}
	return "not a JSON object"
}
