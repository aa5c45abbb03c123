package cli

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/har"
	"github.com/quicbench/quicbench/internal/testenv"
)

// writeSlowHAR writes a HAR whose many text bodies were sent with brotli,
// so that importing it re-encodes each: seconds of work.
func writeSlowHAR(t *testing.T, entries int) string {
	t.Helper()
	h := har.New("test", "1")
	h.Log.Pages = append(h.Log.Pages, har.Page{ID: "page_1", Title: "https://a.test/"})
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range entries {
		body := make([]byte, 200_000)
		for j := range body {
			body[j] = "abcdefghij <>/\n"[rng.IntN(15)]
		}
		text := string(body)
		url := fmt.Sprintf("https://a.test/%d", i)
		mime := "text/css"
		if i == 0 {
			url, mime = "https://a.test/", "text/html"
		}
		h.Log.Entries = append(h.Log.Entries, har.Entry{Pageref: "page_1", Request: har.Request{Method: "GET", URL: url, HTTPVersion: "h2"},
			Response: har.Response{Status: 200, HTTPVersion: "h2", Content: har.Content{Size: int64(len(body)), MimeType: mime, Text: &text},
				Headers: []har.NameValue{{Name: "content-type", Value: mime}, {Name: "content-encoding", Value: "br"}}}})
	}
	path := filepath.Join(t.TempDir(), "slow.har")
	if err := h.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestImportStopsOnInterrupt: Ctrl-C during an import that takes seconds
// stops it at once with status 130 and leaves no archive.
func TestImportStopsOnInterrupt(t *testing.T) {
	path := writeSlowHAR(t, 150)
	to := filepath.Join(t.TempDir(), "site")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	var stdout, stderr bytes.Buffer
	code := Run(ctx, []string{"import", "har", path, "--to", to}, &stdout, &stderr)
	took := time.Since(start)
	if code != exitInterrupted || took > 3*time.Second {
		t.Errorf("exit %d after %v (%s); want 130 soon after the interrupt", code, took, stderr.String())
	}
	if _, err := os.Lstat(to); !os.IsNotExist(err) {
		t.Errorf("the interrupted import left %s: %v", to, err)
	}
}

// TestImportRefusesTargetsFirst: --to a dangling link, or a directory with
// a manifest beside other files, is refused before the recording is read.
func TestImportRefusesTargetsFirst(t *testing.T) {
	dir := t.TempDir()
	dangling := filepath.Join(dir, "link")
	os.Symlink(filepath.Join(dir, "nowhere"), dangling)
	mixed := filepath.Join(dir, "mixed")
	os.MkdirAll(filepath.Join(mixed, "bodies"), 0o755)
	os.WriteFile(filepath.Join(mixed, "archive.json"), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(mixed, "notes.txt"), []byte("mine"), 0o644)
	for to, want := range map[string]string{dangling: "is a symbolic link", mixed: "holds other files"} {
		var stdout, stderr bytes.Buffer
		// The recording does not exist: a target refused first never gets to it.
		code := Run(context.Background(), []string{"import", "har", filepath.Join(dir, "absent.har"), "--to", to}, &stdout, &stderr)
		if code != exitUsage || !bytes.Contains(stderr.Bytes(), []byte(want)) {
			t.Errorf("--to %s: exit %d, %q; want %q", filepath.Base(to), code, stderr.String(), want)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(mixed, "notes.txt")); string(data) != "mine" {
		t.Error("the other file was touched")
	}
}

// TestRootWritesNothingIntoAUsersRun: root's export and report of a run
// that belongs to another user refuse to write into it (the files would
// be root's, which the user can neither replace nor remove); with an
// output directory of root's they work.
func TestRootWritesNothingIntoAUsersRun(t *testing.T) {
	testenv.RequireRoot(t)
	dir := copyRun(t, "until")
	for _, p := range []string{dir, filepath.Join(dir, "results.db"), filepath.Join(dir, "spec.yaml")} {
		if err := os.Chown(p, 1000, 1000); err != nil {
			t.Fatal(err)
		}
	}
	for _, sub := range []string{"export", "report"} {
		var stdout, stderr bytes.Buffer
		if code := Run(context.Background(), []string{sub, dir}, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "belongs to uid 1000") {
			t.Errorf("%s of a user's run as root: exit %d, %q", sub, code, stderr.String())
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("the user's run holds %d entries, want its 2", len(entries))
	}
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), []string{"export", dir, "--to", filepath.Join(t.TempDir(), "x")}, &stdout, &stderr); code != exitOK {
		t.Errorf("export to root's directory: exit %d, %s", code, stderr.String())
	}
}
