package cli

import (
	"bytes"
	"context"
	"database/sql"
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
// be root's, which the user can neither replace nor remove), and since
// hardening five refuse to read it at all, even into a directory of
// root's: the user could swap its results.db for a link to root's own.
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
	if code := Run(context.Background(), []string{"export", dir, "--to", filepath.Join(t.TempDir(), "x")}, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "belongs to uid 1000") {
		t.Errorf("export of a user's run to root's directory: exit %d, %s; want it refused", code, stderr.String())
	}
}

func TestPrintableEscapesControls(t *testing.T) {
	var b bytes.Buffer
	printable{&b}.Write([]byte("net\x1b]0;pwned\x07 \xc2\x9b31m\ta\n\xff é"))
	if got, want := b.String(), `net\x1b]0;pwned\x07 \x9b31m`+"\ta\n\uFFFD é"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestReportOfACraftedRunIsInert: a run whose network name holds a
// terminal escape sequence and a spreadsheet formula reports with the
// sequence escaped on the terminal and the formula made text in the CSV.
func TestReportOfACraftedRunIsInert(t *testing.T) {
	dir := copyRun(t, "until")
	db, err := sql.Open("sqlite", filepath.Join(dir, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	const name = "=HYPERLINK(\"http://x\")\x1b]0;pwned\x07"
	if _, err := db.Exec(`UPDATE trials SET network = ?`, name); err != nil {
		t.Fatal(err)
	}
	db.Close()
	out := filepath.Join(t.TempDir(), "report")
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), []string{"report", dir, "--out", out}, &stdout, &stderr); code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr.String())
	}
	if bytes.ContainsRune(stdout.Bytes(), 0x1b) || !strings.Contains(stdout.String(), `\x1b]0;pwned\x07`) {
		t.Errorf("the terminal got the escape sequence raw:\n%q", stdout.String())
	}
	csvs, _ := filepath.Glob(filepath.Join(out, "*.csv"))
	found := false
	for _, f := range csvs {
		data, _ := os.ReadFile(f)
		if bytes.Contains(data, []byte(`"=HYPERLINK`)) || bytes.Contains(data, []byte("\n=HYPERLINK")) {
			t.Errorf("%s keeps the formula", filepath.Base(f))
		}
		found = found || bytes.Contains(data, []byte(`"'=HYPERLINK`))
	}
	if !found {
		t.Errorf("no CSV table names the network as text (%d tables)", len(csvs))
	}
}

// TestRecordRefusesAPortOutOfRange: status 2, before any browser starts.
func TestRecordRefusesAPortOutOfRange(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"record", "https://127.0.0.1:99999/", "--to", filepath.Join(t.TempDir(), "s")}, &stdout, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), "outside 1 to 65535") {
		t.Errorf("exit %d, %q", code, stderr.String())
	}
}

// TestInterruptedCompareSaysTheConfiguredLoss: a comparison interrupted
// before its first load prints its link lines with the loss it was
// configured with.
func TestInterruptedCompareSaysTheConfiguredLoss(t *testing.T) {
	testenv.RequireRoot(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	code := Run(ctx, []string{"compare", "--details", "--client", "loader", "--netcheck=false", "--loss", "1", "--runs", "1", "--out", filepath.Join(t.TempDir(), "c")}, &stdout, &stderr)
	if code != exitInterrupted || !strings.Contains(stdout.String(), "configured 1%") || strings.Contains(stdout.String(), "configured 0%") {
		t.Errorf("exit %d:\n%s\n%s", code, stdout.String(), stderr.String())
	}
}

// TestImportErrorsEscapeRecordedText: a recorded URL holding a terminal
// escape sequence reaches the terminal escaped in import's error (issue
// 44, low).
func TestImportErrorsEscapeRecordedText(t *testing.T) {
	har := `{"log": {"version": "1.2", "creator": {"name": "x", "version": "1"}, "entries": [
		{"request": {"method": "GET", "url": "https://a.test/\u001b]0;pwned\u0007\u001b[2J", "headers": []},
		 "response": {"status": 200, "headers": [], "content": {"size": 2, "mimeType": "text/html", "text": "hi"}}}]}}`
	path := filepath.Join(t.TempDir(), "evil.har")
	if err := os.WriteFile(path, []byte(har), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"import", "har", path, "--to", filepath.Join(t.TempDir(), "site")}, &stdout, &stderr)
	out := stdout.String() + stderr.String()
	if code == exitOK {
		t.Fatalf("import of a URL with control characters succeeded: %s", out)
	}
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("the terminal got the escape sequence raw: %q", out)
	}
	if !strings.Contains(out, `\x1b`) {
		t.Errorf("the error does not show the escaped URL: %q", out)
	}
}
