// Package sitetest writes site archives in the recording formats quicbench
// imports (Mahimahi, HAR, WebPageReplay), as the tools that make them
// would, so that tests can import and replay real files of each format.
package sitetest

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/quicbench/quicbench/internal/har"
	"github.com/quicbench/quicbench/internal/site"
)

// WriteMahimahi writes a as an mm-webrecord directory: one protobuf file
// per exchange, bodies chunked as a server sends them when chunk is true.
// old writes the format of recordings from before mid-2014. An http://
// URL is recorded on port 80 over HTTP, any other on 443 over HTTPS.
func WriteMahimahi(dir string, a *site.Archive, old, chunk bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i, ex := range a.Exchanges {
		u, err := url.Parse(ex.URL)
		if err != nil {
			return err
		}
		req := message(ex.Method+" "+u.RequestURI()+" HTTP/1.1", []site.Field{{Name: "Host", Value: u.Host}, {Name: "Accept-Encoding", Value: "gzip, br"}}, nil, old)
		header, body := ex.Header, ex.Body
		if chunk {
			header = append(header, site.Field{Name: "Transfer-Encoding", Value: "chunked"})
			body = chunked(body)
		} else {
			header = append(header, site.Field{Name: "Content-Length", Value: strconv.Itoa(len(body))})
		}
		resp := message(fmt.Sprintf("HTTP/1.1 %d %s", ex.Status, http.StatusText(ex.Status)), header, body, old)
		port, scheme, schemeNumber := uint64(443), "HTTPS", uint64(2)
		if u.Scheme == "http" {
			port, scheme, schemeNumber = 80, "HTTP", 1
		}
		var rec []byte
		if old {
			rec = protowire.AppendTag(rec, 1, protowire.VarintType)
			rec = protowire.AppendVarint(rec, port)
			rec = appendBytes(rec, 2, []byte(scheme))
			rec = appendBytes(rec, 3, []byte("203.0.113.7"))
		} else {
			rec = appendBytes(rec, 1, []byte("203.0.113.7"))
			rec = protowire.AppendTag(rec, 2, protowire.VarintType)
			rec = protowire.AppendVarint(rec, port)
			rec = protowire.AppendTag(rec, 3, protowire.VarintType)
			rec = protowire.AppendVarint(rec, schemeNumber)
		}
		rec = appendBytes(rec, 4, req)
		rec = appendBytes(rec, 5, resp)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("save.%06d", i)), rec, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// message encodes an HTTPMessage.
func message(firstLine string, header []site.Field, body []byte, old bool) []byte {
	m := appendBytes(nil, 1, []byte(firstLine))
	for _, f := range header {
		if old {
			m = appendBytes(m, 2, []byte(f.Name+": "+f.Value))
			continue
		}
		h := appendBytes(appendBytes(nil, 1, []byte(f.Name)), 2, []byte(f.Value))
		m = appendBytes(m, 2, h)
	}
	return appendBytes(m, 3, body)
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// chunked frames body in chunks of at most 1000 bytes.
func chunked(body []byte) []byte {
	var b bytes.Buffer
	for len(body) > 0 {
		n := min(len(body), 1000)
		fmt.Fprintf(&b, "%x\r\n", n)
		b.Write(body[:n])
		b.WriteString("\r\n")
		body = body[n:]
	}
	b.WriteString("0\r\n\r\n")
	return b.Bytes()
}

// WriteHAR writes a as a HAR 1.2 file with bodies as browsers export
// them: decoded (gzip undone), text or base64, the Content-Encoding field
// kept.
func WriteHAR(path string, a *site.Archive) error {
	h := har.New("sitetest", "1")
	h.Log.Pages = append(h.Log.Pages, har.Page{ID: "page_1", Title: a.Document})
	for _, ex := range a.Exchanges {
		body := ex.Body
		if site.Get(ex.Header, "content-encoding") == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				return err
			}
			if body, err = io.ReadAll(zr); err != nil {
				return err
			}
		}
		text := base64.StdEncoding.EncodeToString(body)
		e := har.Entry{Pageref: "page_1", Request: har.Request{Method: ex.Method, URL: ex.URL, HTTPVersion: "h2"},
			Response: har.Response{Status: ex.Status, HTTPVersion: "h2",
				Content: har.Content{Size: int64(len(body)), MimeType: site.Get(ex.Header, "content-type"), Text: &text, Encoding: "base64"}}}
		for _, f := range ex.Header {
			e.Response.Headers = append(e.Response.Headers, har.NameValue{Name: f.Name, Value: f.Value})
		}
		h.Log.Entries = append(h.Log.Entries, e)
	}
	return h.WriteFile(path)
}

// WriteWPR writes a as a .wprgo archive: gzip-compressed JSON of HTTP/1
// messages by host and URL.
func WriteWPR(path string, a *site.Archive) error {
	type entry struct{ SerializedRequest, SerializedResponse []byte }
	requests := map[string]map[string][]entry{}
	for _, ex := range a.Exchanges {
		u, err := url.Parse(ex.URL)
		if err != nil {
			return err
		}
		req, err := http.NewRequest(ex.Method, ex.URL, nil)
		if err != nil {
			return err
		}
		var rq, rs bytes.Buffer
		if err := req.Write(&rq); err != nil {
			return err
		}
		resp := &http.Response{StatusCode: ex.Status, ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{},
			Body: io.NopCloser(bytes.NewReader(ex.Body)), ContentLength: -1, Request: req}
		for _, f := range ex.Header {
			resp.Header.Add(f.Name, f.Value)
		}
		if err := resp.Write(&rs); err != nil { // chunked: the length is not given
			return err
		}
		if requests[u.Host] == nil {
			requests[u.Host] = map[string][]entry{}
		}
		requests[u.Host][ex.URL] = append(requests[u.Host][ex.URL], entry{rq.Bytes(), rs.Bytes()})
	}
	data, err := json.Marshal(map[string]any{"Requests": requests, "Certs": map[string][]byte{}, "NegotiatedProtocol": map[string]string{}})
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(f)
	zw.Write(data)
	if err := zw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
