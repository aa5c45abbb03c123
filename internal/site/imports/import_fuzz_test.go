package imports

import (
	"bytes"
	"compress/gzip"
	"context"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/quicbench/quicbench/internal/har"
)

// FuzzParseMahimahi: any bytes give a record or an error, never a panic;
// a record always has its request line.
func FuzzParseMahimahi(f *testing.F) {
	msg := func(first string) []byte {
		m := protowire.AppendTag(nil, 1, protowire.BytesType)
		return protowire.AppendBytes(m, []byte(first))
	}
	rec := protowire.AppendTag(nil, 1, protowire.BytesType)
	rec = protowire.AppendBytes(rec, []byte("192.0.2.1"))
	rec = protowire.AppendTag(rec, 4, protowire.BytesType)
	rec = protowire.AppendBytes(rec, msg("GET / HTTP/1.1"))
	rec = protowire.AppendTag(rec, 5, protowire.BytesType)
	rec = protowire.AppendBytes(rec, msg("HTTP/1.1 200 OK"))
	f.Add(rec)
	f.Add(rec[:len(rec)-3])
	f.Add([]byte{0x08, 0xbb, 0x03, 0x12, 0x05, 'H', 'T', 'T', 'P', 'S'})
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseMahimahi(data)
		if err == nil && r.request.firstLine == "" {
			t.Error("a record without a request line was accepted")
		}
	})
}

// FuzzImportWPR: any bytes give an archive or an error, never a panic;
// an archive passes Check.
func FuzzImportWPR(f *testing.F) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(`{"Requests":{"a.test":{"https://a.test/":[{"SerializedRequest":"R0VUIC8gSFRUUC8xLjENCkhvc3Q6IGEudGVzdA0KDQo=","SerializedResponse":"SFRUUC8xLjEgMjAwIE9LDQpDb250ZW50LVR5cGU6IHRleHQvaHRtbA0KQ29udGVudC1MZW5ndGg6IDINCg0KaGk="}]}}}`))
	zw.Close()
	f.Add(buf.Bytes())
	f.Add([]byte("not gzip"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, _, err := importWPR(context.Background(), bytes.NewReader(data), Options{})
		if err == nil {
			if cerr := a.Check(); cerr != nil {
				t.Errorf("an archive that fails its check: %v", cerr)
			}
		}
	})
}

// FuzzImportHAR: any HAR text gives an archive or an error, never a panic.
func FuzzImportHAR(f *testing.F) {
	f.Add([]byte(`{"log":{"version":"1.2","pages":[{"id":"p"}],"entries":[{"pageref":"p","request":{"method":"GET","url":"https://a.test/"},"response":{"status":200,"headers":[{"name":"Content-Type","value":"text/html"},{"name":"Content-Encoding","value":"br"}],"content":{"size":2,"text":"hi"}}}]}}`))
	f.Add([]byte(`{"log":{"version":"1.2","entries":[{"request":{"method":"GET","url":"http://a.test:81/"},"response":{"status":304,"content":{"size":9}}}]}}`))
	// TracerBench's shape (empty times, :method only), a revalidated
	// document, and a redirect loop.
	f.Add([]byte(`{"log":{"version":"1.2","pages":[{"id":"p","startedDateTime":""}],"entries":[{"pageref":"p","startedDateTime":"","request":{"method":"","url":"https://a.test/","headers":[{"name":":method","value":"GET"}]},"response":{"status":304,"content":{"mimeType":"text/html","text":"<p>"}}}]}}`))
	f.Add([]byte(`{"log":{"version":"1.2","entries":[{"request":{"method":"GET","url":"https://a.test/"},"response":{"status":302,"headers":[{"name":"Location","value":"/b"}],"content":{"text":""}}},{"request":{"method":"GET","url":"https://a.test/b"},"response":{"status":301,"headers":[{"name":"Location","value":"/"}],"content":{"text":""}}},{"request":{"method":"GET","url":"https://a.test/"},"response":{"status":200,"headers":[{"name":"Content-Type","value":"text/html"}],"content":{"text":"<p>"}}}]}}`))
	// An extension's 307 Internal Redirects to about:blank and to a data:
	// URL, a cached response of status 0, an image without its body.
	f.Add([]byte(`{"log":{"version":"1.2","entries":[{"request":{"method":"GET","url":"https://a.test/"},"response":{"status":200,"headers":[{"name":"Content-Type","value":"text/html"}],"content":{"text":"<p>"}}},{"request":{"method":"GET","url":"https://b.test/f.html"},"response":{"status":307,"statusText":"Internal Redirect","redirectURL":"about:blank","headers":[{"name":"Non-Authoritative-Reason","value":"Delegate"}],"content":{}}},{"request":{"method":"GET","url":"https://c.test/a.js"},"response":{"status":307,"headers":[{"name":"Non-Authoritative-Reason","value":"Delegate"},{"name":"Location","value":"data:text/javascript;base64,YT0x"}],"content":{}}},{"request":{"method":"GET","url":"https://a.test/s.css"},"response":{"status":0,"headers":[{"name":"Content-Type","value":"text/css"}],"content":{"text":"p{}"}}},{"request":{"method":"GET","url":"https://a.test/i.png"},"response":{"status":200,"content":{"mimeType":"image/png"}}}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := har.Parse(data)
		if err != nil {
			return
		}
		if a, _, err := importHAR(context.Background(), h, Options{}); err == nil {
			if cerr := a.Check(); cerr != nil {
				t.Errorf("an archive that fails its check: %v", cerr)
			}
		}
	})
}
