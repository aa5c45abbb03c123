package imports_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/har"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/site/gen"
	"github.com/quicbench/quicbench/internal/site/imports"
	"github.com/quicbench/quicbench/internal/site/sitetest"
)

// generatedArchive is generated page 12 (15 requests on 3 origins, text
// gzip-compressed) as an archive.
func generatedArchive(t testing.TB) *site.Archive {
	s, err := gen.Web2024(factor.Page{Kind: factor.PageWeb2024, Number: 12, CorpusSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return site.ArchiveOf(s, "test")
}

// decoded is body with its gzip coding undone.
func decoded(t *testing.T, body []byte, coding string) []byte {
	if coding != "gzip" {
		return body
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestImportsGiveTheRecordedBytesBack writes one site in each recording
// format and imports it: every exchange comes back with its method,
// status, type, coding and body (the same bytes, or for a HAR, which holds
// bodies decoded, the same content compressed again).
func TestImportsGiveTheRecordedBytesBack(t *testing.T) {
	src := generatedArchive(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		write  func(path string) error
		read   func(path string) (*site.Archive, imports.Report, error)
		sameOn bool // bodies byte for byte
	}{
		{"mahimahi", func(p string) error { return sitetest.WriteMahimahi(p, src, false, true) }, mahimahi, true},
		{"mahimahi-2014", func(p string) error { return sitetest.WriteMahimahi(p, src, true, false) }, mahimahi, true},
		{"har", func(p string) error { return sitetest.WriteHAR(p, src) }, func(p string) (*site.Archive, imports.Report, error) {
			return imports.HAR(context.Background(), p, imports.Options{})
		}, false},
		{"wpr", func(p string) error { return sitetest.WriteWPR(p, src) }, func(p string) (*site.Archive, imports.Report, error) {
			return imports.WPR(context.Background(), p, imports.Options{})
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name)
			if err := tc.write(path); err != nil {
				t.Fatal(err)
			}
			got, rep, err := tc.read(path)
			if err != nil {
				t.Fatal(err)
			}
			if got.Document != src.Document || len(got.Exchanges) != len(src.Exchanges) || rep.Entries != len(src.Exchanges) {
				t.Fatalf("document %s, %d exchanges of %d (report %+v)", got.Document, len(got.Exchanges), len(src.Exchanges), rep)
			}
			byURL := map[string]*site.Exchange{}
			for _, ex := range got.Exchanges {
				byURL[ex.URL] = ex
			}
			for _, want := range src.Exchanges {
				checkImported(t, want, byURL[want.URL], tc.sameOn)
			}
		})
	}
}

// mahimahi imports a recording directory.
func mahimahi(p string) (*site.Archive, imports.Report, error) {
	return imports.Mahimahi(context.Background(), p, imports.Options{})
}

// checkImported compares an imported exchange with the one recorded.
func checkImported(t *testing.T, want, got *site.Exchange, sameBytes bool) {
	t.Helper()
	if got == nil {
		t.Errorf("%s not imported", want.URL)
		return
	}
	coding := site.Get(want.Header, "content-encoding")
	if got.Method != want.Method || got.Status != want.Status || site.Get(got.Header, "content-type") != site.Get(want.Header, "content-type") ||
		site.Get(got.Header, "content-encoding") != coding {
		t.Errorf("%s: imported %s %d %v, recorded %s %d %v", want.URL, got.Method, got.Status, got.Header, want.Method, want.Status, want.Header)
	}
	if sameBytes && !bytes.Equal(got.Body, want.Body) {
		t.Errorf("%s: %d bytes imported, %d recorded, not the same", want.URL, len(got.Body), len(want.Body))
	}
	if !sameBytes && !bytes.Equal(decoded(t, got.Body, coding), decoded(t, want.Body, coding)) {
		t.Errorf("%s: the imported body decodes to other content than recorded", want.URL)
	}
	for _, f := range got.Header {
		if f.Name == "transfer-encoding" || f.Name == "content-length" || f.Name == "connection" {
			t.Errorf("%s: kept the hop-by-hop or length field %s", want.URL, f.Name)
		}
	}
}

// TestImportBadInput: damaged and unusable recordings give one-line errors
// that name the file or entry; what cannot be replayed is counted.
func TestImportBadInput(t *testing.T) {
	dir := t.TempDir()
	src := generatedArchive(t)
	mm := filepath.Join(dir, "mm")
	if err := sitetest.WriteMahimahi(mm, src, false, true); err != nil {
		t.Fatal(err)
	}
	first := filepath.Join(mm, "save.000000")
	data, _ := os.ReadFile(first)
	os.WriteFile(first, data[:len(data)/2], 0o644)
	expectError(t, "truncated mahimahi file", mahimahi, mm, `file "save.000000": not a Mahimahi protobuf record`)
	os.WriteFile(first, []byte("GET / HTTP/1.1\r\nHost: a.test\r\n\r\n"), 0o644)
	expectError(t, "text in a mahimahi recording", mahimahi, mm, "not a Mahimahi protobuf record")
	os.Remove(first)
	os.Symlink("/etc/passwd", first)
	expectError(t, "link in a mahimahi recording", mahimahi, mm, "not a regular file")

	wpr := filepath.Join(dir, "site.wprgo")
	os.WriteFile(wpr, []byte(`{"Requests":{}}`), 0o644)
	expectError(t, "wprgo not gzip", func(p string) (*site.Archive, imports.Report, error) {
		return imports.WPR(context.Background(), p, imports.Options{})
	}, wpr, "not gzip-compressed")

	harPath := filepath.Join(dir, "nobodies.har")
	if err := sitetest.WriteHAR(harPath, src); err != nil {
		t.Fatal(err)
	}
	h, err := har.ReadFile(harPath)
	if err != nil {
		t.Fatal(err)
	}
	importHAR := func(p string) (*site.Archive, imports.Report, error) {
		return imports.HAR(context.Background(), p, imports.Options{})
	}
	// Duplicate entries, one over plain http and one to an IP address:
	// imported, counted, and the summary says so.
	dup := h.Log.Entries[len(h.Log.Entries)-1]
	plain, literal := dup, dup
	plain.Request.URL = "http://www.quicbench.test/x"
	literal.Request.URL = "https://192.0.2.1/x"
	h.Log.Entries = append(h.Log.Entries, dup, plain, literal)
	if err := h.WriteFile(harPath); err != nil {
		t.Fatal(err)
	}
	a, rep, err := importHAR(harPath)
	if err != nil || a.Summary().Duplicates != 1 || rep.PlainHTTP != 1 || rep.IPHosts != 1 || !strings.Contains(a.Summary().String(), "1 duplicates") {
		t.Errorf("duplicates: %v, summary %+v, report %+v", err, a.Summary(), rep)
	}
	for i := range h.Log.Entries {
		h.Log.Entries[i].Response.Content.Text = nil // as exporters that drop bodies write it
	}
	if err := h.WriteFile(harPath); err != nil {
		t.Fatal(err)
	}
	_, rep, err = importHAR(harPath)
	if err == nil || !strings.Contains(err.Error(), "holds no body for it (export the HAR with content)") || rep.NoBody < 1 {
		t.Errorf("a HAR without bodies: error %v, report %+v", err, rep)
	}
}

// expectError imports path with read and wants a one-line error with want.
func expectError(t *testing.T, name string, read func(string) (*site.Archive, imports.Report, error), path, want string) {
	t.Helper()
	_, _, err := read(path)
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("%s: error %v, want one line with %q", name, err, want)
	}
}
