package imports

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/har"
	"github.com/quicbench/quicbench/internal/site"
	"google.golang.org/protobuf/encoding/protowire"
)

// allocated is the bytes do allocates.
func allocated(do func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	do()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// writeSparseMahimahi writes an exchange file for https://a.test/N whose
// response body is size bytes of zeros, stored sparse: the header is
// written, the body is a hole.
func writeSparseMahimahi(t *testing.T, dir string, n int, size int) {
	t.Helper()
	req := protowire.AppendTag(nil, 1, protowire.BytesType)
	req = protowire.AppendBytes(req, []byte(fmt.Sprintf("GET /%d HTTP/1.1", n)))
	host := protowire.AppendTag(nil, 1, protowire.BytesType)
	host = protowire.AppendBytes(host, []byte("Host"))
	host = protowire.AppendTag(host, 2, protowire.BytesType)
	host = protowire.AppendBytes(host, []byte("a.test"))
	req = protowire.AppendTag(req, 2, protowire.BytesType)
	req = protowire.AppendBytes(req, host)
	resp := protowire.AppendTag(nil, 1, protowire.BytesType)
	resp = protowire.AppendBytes(resp, []byte("HTTP/1.1 200 OK"))
	resp = protowire.AppendTag(resp, 3, protowire.BytesType)
	resp = protowire.AppendVarint(resp, uint64(size)) // the body follows, all zeros
	rec := protowire.AppendTag(nil, 1, protowire.BytesType)
	rec = protowire.AppendBytes(rec, []byte("192.0.2.1"))
	rec = protowire.AppendTag(rec, 2, protowire.VarintType)
	rec = protowire.AppendVarint(rec, 443)
	rec = protowire.AppendTag(rec, 3, protowire.VarintType)
	rec = protowire.AppendVarint(rec, 2)
	rec = protowire.AppendTag(rec, 4, protowire.BytesType)
	rec = protowire.AppendBytes(rec, req)
	rec = protowire.AppendTag(rec, 5, protowire.BytesType)
	rec = protowire.AppendVarint(rec, uint64(len(resp)+size))
	rec = append(rec, resp...)
	path := filepath.Join(dir, fmt.Sprintf("save.%02d", n))
	if err := os.WriteFile(path, rec, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, int64(len(rec)+size)); err != nil {
		t.Fatal(err)
	}
}

// TestMahimahiStopsAtTheLimitAsItGoes: twelve exchanges of 250 MiB each
// (sparse files) are refused at the second one, without reading the
// rest: the allocation stays near two bodies, not twelve.
func TestMahimahiStopsAtTheLimitAsItGoes(t *testing.T) {
	dir := t.TempDir()
	for i := 1; i <= 12; i++ {
		writeSparseMahimahi(t, dir, i, 250<<20)
	}
	var err error
	start := time.Now()
	alloc := allocated(func() {
		_, _, err = Mahimahi(context.Background(), dir, Options{Document: "https://a.test/1"})
	})
	t.Logf("refused in %v after allocating %d MiB", time.Since(start), alloc>>20)
	if err == nil || !strings.Contains(err.Error(), "more than 256 MiB") {
		t.Fatalf("error %v, want the 256 MiB limit", err)
	}
	if alloc > 700<<20 {
		t.Errorf("allocated %d MiB before refusing, want under 700 (about one body and the file being read)", alloc>>20)
	}
}

// TestWPRGzipBombIsStoppedEarly: a .wprgo whose JSON unpacks to 1 GiB
// (one huge string) is refused, allocating far less than it unpacks to.
func TestWPRGzipBombIsStoppedEarly(t *testing.T) {
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	gz.Write([]byte(`{"Requests":{"a.test":{"https://a.test/":[{"SerializedRequest":"`))
	chunk := bytes.Repeat([]byte("A"), 1<<20)
	for range 1024 {
		gz.Write(chunk)
	}
	gz.Write([]byte(`","SerializedResponse":""}]}}}`))
	gz.Close()
	var err error
	alloc := allocated(func() { _, _, err = importWPR(context.Background(), bytes.NewReader(buf.Bytes()), Options{}) })
	t.Logf("a %d KB archive of 1 GiB of JSON: %v, after allocating %d MiB", buf.Len()>>10, err, alloc>>20)
	if err == nil || !strings.Contains(err.Error(), "MiB") {
		t.Fatalf("error %v, want a size limit", err)
	}
	if alloc > 1000<<20 {
		t.Errorf("allocated %d MiB before refusing, want under 1000", alloc>>20)
	}
}

// TestHARImportKeepsWhatWasSent: a text body goes back into the charset
// its Content-Type names, Content-Encoding identity is no coding to
// redo, a byte-order mark does not stop the file, and one response is
// "1 response".
func TestHARImportKeepsWhatWasSent(t *testing.T) {
	latin1, utf8Text := "café", "naïve ☃"
	entry := func(url, ct, coding string, text *string) har.Entry {
		e := har.Entry{Pageref: "page_1", Request: har.Request{Method: "GET", URL: url, HTTPVersion: "h2"},
			Response: har.Response{Status: 200, HTTPVersion: "h2", Content: har.Content{MimeType: ct, Text: text},
				Headers: []har.NameValue{{Name: "Content-Type", Value: ct}}}}
		if coding != "" {
			e.Response.Headers = append(e.Response.Headers, har.NameValue{Name: "Content-Encoding", Value: coding})
		}
		return e
	}
	h := har.New("test", "1")
	h.Log.Pages = []har.Page{{ID: "page_1", Title: "https://a.test/"}}
	h.Log.Entries = []har.Entry{
		entry("https://a.test/", "text/html; charset=ISO-8859-1", "identity", &latin1),
		entry("https://a.test/u.txt", "text/plain; charset=utf-8", "", &utf8Text),
	}
	var buf bytes.Buffer
	buf.WriteString("\xef\xbb\xbf")
	enc := json.NewEncoder(&buf)
	if err := enc.Encode(h); err != nil {
		t.Fatal(err)
	}
	parsed, err := har.Parse(buf.Bytes())
	if err != nil {
		t.Fatalf("a HAR with a byte-order mark: %v", err)
	}
	a, rep, err := importHAR(context.Background(), parsed, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(a.Exchanges[0].Body); got != "caf\xe9" {
		t.Errorf("the ISO-8859-1 page's body is %q, want it in ISO-8859-1", got)
	}
	if got := string(a.Exchanges[1].Body); got != utf8Text {
		t.Errorf("the UTF-8 text is %q", got)
	}
	if rep.Decoded != 0 || rep.KeptUTF8 != 0 {
		t.Errorf("report %+v: identity counted as a coding, or a charset refused", rep)
	}
	single := &site.Archive{Source: "test", Document: "https://a.test/", Exchanges: a.Exchanges[:1]}
	if got := single.Summary().String(); !strings.HasPrefix(got, "1 origin, 1 response, ") || strings.Contains(got, "1 responses") {
		t.Errorf("summary %q", got)
	}
}
