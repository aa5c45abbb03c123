package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/site/gen"
	"github.com/quicbench/quicbench/internal/site/sitetest"
)

// TestImportHAR imports a HAR of a generated page: the archive reads back
// with every response, and the summary names origins, types and what the
// recording lacked.
func TestImportHAR(t *testing.T) {
	s, err := gen.Web2024(factor.Page{Kind: factor.PageWeb2024, Number: 12, CorpusSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	a := site.ArchiveOf(s, "test")
	dir := t.TempDir()
	harPath := filepath.Join(dir, "page.har")
	if err := sitetest.WriteHAR(harPath, a); err != nil {
		t.Fatal(err)
	}
	to := filepath.Join(dir, "archive")
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), []string{"import", "har", harPath, "--to", to}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	got, err := site.ReadArchive(to)
	if err != nil || len(got.Exchanges) != len(a.Exchanges) {
		t.Fatalf("archive: %v, %d exchanges", err, len(got.Exchanges))
	}
	out := stdout.String()
	for _, want := range []string{"3 origins, 15 responses", "javascript", "compressed again", "archive:" + to} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

// TestImportBadInput: unknown formats, a target holding other files and a
// file that is not a recording: one line, status 2, nothing written.
func TestImportBadInput(t *testing.T) {
	dir := t.TempDir()
	busy := filepath.Join(dir, "busy")
	os.MkdirAll(busy, 0o755)
	os.WriteFile(filepath.Join(busy, "notes.txt"), []byte("x"), 0o644)
	notGzip := filepath.Join(dir, "x.wprgo")
	os.WriteFile(notGzip, []byte("{}"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"import", "pcap", "x", "--to", dir}, `format "pcap" is not supported`},
		{[]string{"import", "har", "x.har"}, "give --to DIR"},
		{[]string{"import", "wpr", notGzip, "--to", busy}, "holds other files"},
		{[]string{"import", "wpr", notGzip, "--to", filepath.Join(dir, "new")}, "not gzip-compressed"},
	} {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), tc.args, &stdout, &stderr)
		msg := stderr.String()
		if code != exitUsage || !strings.Contains(msg, tc.want) || strings.Count(msg, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q, want one line with %q", tc.args, code, msg, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); err == nil {
		t.Error("a failed import left a directory")
	}
}
