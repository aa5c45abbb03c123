package cli

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/har"
	"github.com/quicbench/quicbench/internal/testenv"
)

// strangerUID is a user no test runs as: the attacker of round four.
const strangerUID = 4242

// strangersDir makes a directory that belongs to strangerUID, 0755.
func strangersDir(t *testing.T) string {
	t.Helper()
	testenv.RequireRoot(t)
	dir := filepath.Join(t.TempDir(), "theirs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, strangerUID, strangerUID); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestArchiveTargetsFollowTheOwnershipRule: import, record and corpus
// --archive refuse, as root, a --to another user owns or could change,
// as run and compare refuse such an --out, before anything is read.
func TestArchiveTargetsFollowTheOwnershipRule(t *testing.T) {
	theirs := strangersDir(t)
	for _, to := range []string{theirs, filepath.Join(theirs, "new")} {
		for _, args := range [][]string{
			{"import", "har", filepath.Join(t.TempDir(), "absent.har"), "--to", to},
			{"record", "https://a.test/", "--to", to},
			{"corpus", "--archive", "1", "--to", to},
		} {
			var stdout, stderr bytes.Buffer
			code := Run(context.Background(), args, &stdout, &stderr)
			if code != exitUsage || !strings.Contains(stderr.String(), "belongs to uid 4242") || strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("%s --to %s: exit %d, %q; want one line naming uid 4242, status 2", args[0], to, code, stderr.String())
			}
		}
	}
	if entries, _ := os.ReadDir(theirs); len(entries) != 0 {
		t.Errorf("root wrote %d entries into the stranger's directory", len(entries))
	}
}

// TestReportReadsArtifactsOnlyInsideTheRun: a run whose artifacts column
// names a HAR outside its directory ("../", absolute) or a link in its
// artifacts directory to one outside must not put that HAR's URLs into
// the report, which anyone may read.
func TestReportReadsArtifactsOnlyInsideTheRun(t *testing.T) {
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "secret.har")
	h := har.New("test", "1")
	h.Log.Entries = append(h.Log.Entries, har.Entry{StartedDateTime: time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC), Time: 10,
		Request:  har.Request{Method: "GET", URL: "https://root-only-secret.test/token-a1b2c3", HTTPVersion: "h2"},
		Response: har.Response{Status: 200, HTTPVersion: "h2"}, Timings: har.Timings{Send: 1, Wait: 5, Receive: 4}})
	if err := h.WriteFile(secret); err != nil {
		t.Fatal(err)
	}
	for name, artifact := range map[string]string{
		"dotdot":   "../../../../../../../../.." + secret,
		"absolute": secret,
		"link":     "artifacts/link.har",
	} {
		t.Run(name, func(t *testing.T) {
			dir := copyRun(t, "until")
			if name == "link" {
				os.Mkdir(filepath.Join(dir, "artifacts"), 0o755)
				if err := os.Symlink(secret, filepath.Join(dir, "artifacts", "link.har")); err != nil {
					t.Fatal(err)
				}
			}
			setColumn(t, dir, "artifacts", artifact)
			out := filepath.Join(t.TempDir(), "report")
			var stdout, stderr bytes.Buffer
			if code := Run(context.Background(), []string{"report", dir, "--out", out}, &stdout, &stderr); code != exitOK {
				t.Fatalf("report: exit %d: %s", code, stderr.String())
			}
			filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					if data, _ := os.ReadFile(path); bytes.Contains(data, []byte("root-only-secret")) {
						t.Errorf("%s holds the secret HAR's URL", filepath.Base(path))
					}
				}
				return nil
			})
		})
	}
}

// setColumn sets column of every trial of the run in dir to value.
func setColumn(t *testing.T, dir, column, value string) {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(dir, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE trials SET `+column+` = ?`, value); err != nil {
		t.Fatal(err)
	}
}

// TestReportRefusesAbsurdValuesInOneLine: every plt_ms at 1e308 made the
// report panic in the tick code (a sample at 1e308, tested in results,
// made it draw for minutes); such a run is refused with one line and
// status 2.
func TestReportRefusesAbsurdValuesInOneLine(t *testing.T) {
	dir := copyRun(t, "until")
	setColumn(t, dir, "plt_ms", "1e308")
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"report", dir, "--out", filepath.Join(t.TempDir(), "r")}, &stdout, &stderr)
	if code != exitUsage || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "plt_ms holds 1e+308") {
		t.Errorf("report of a run whose PLTs are 1e308: exit %d, %q", code, stderr.String())
	}
}

// TestRecordedTextReachesTheTerminalEscaped: a newline in a recorded URL
// no longer breaks import's one-line error into a forged second line,
// and U+202E (which reorders what follows) from a results database is
// escaped in report's output.
func TestRecordedTextReachesTheTerminalEscaped(t *testing.T) {
	h := har.New("test", "1")
	h.Log.Entries = append(h.Log.Entries, har.Entry{StartedDateTime: time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC),
		Request:  har.Request{Method: "GET", URL: "https://a.test/x\nquicbench import: done\u202e", HTTPVersion: "h2"},
		Response: har.Response{Status: 200, HTTPVersion: "h2"}})
	path := filepath.Join(t.TempDir(), "nl.har")
	if err := h.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"import", "har", path, "--to", filepath.Join(t.TempDir(), "s")}, printable{&stdout}, printable{&stderr})
	if code != exitUsage || strings.Count(stderr.String(), "\n") != 1 || strings.ContainsRune(stderr.String(), '\u202e') {
		t.Errorf("import of a URL with a newline: exit %d, %q; want one line, the URL escaped", code, stderr.String())
	}

	dir := copyRun(t, "until")
	setColumn(t, dir, "network", "net\u202eevil")
	stdout.Reset()
	stderr.Reset()
	if code := Run(context.Background(), []string{"report", dir, "--out", filepath.Join(t.TempDir(), "r")}, &stdout, &stderr); code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr.String())
	}
	if strings.ContainsRune(stdout.String(), '\u202e') || !strings.Contains(stdout.String(), `net\u202eevil`) {
		t.Errorf("report's output keeps U+202E raw or lost the name")
	}
}

// TestPlanRefusesAnArchiveRunWouldRefuse: an archive whose body file is
// missing passed plan and was refused by compare; plan now reads the
// archive too and says what is wrong, with status 2.
func TestPlanRefusesAnArchiveRunWouldRefuse(t *testing.T) {
	dir := t.TempDir()
	archive := filepath.Join(dir, "site")
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), []string{"corpus", "--archive", "1", "--to", archive}, &stdout, &stderr); code != exitOK {
		t.Fatalf("corpus --archive: exit %d: %s", code, stderr.String())
	}
	specPath := filepath.Join(dir, "spec.yaml")
	os.WriteFile(specPath, []byte("name: t\nrepetitions: 1\nfactors:\n  networks: [{rtt: 20ms}]\n  pages: [archive:site]\n  protocols: [h2, h3]\n"), 0o644)
	stdout.Reset()
	stderr.Reset()
	if code := Run(context.Background(), []string{"plan", specPath}, &stdout, &stderr); code != exitOK {
		t.Fatalf("plan of a sound archive: exit %d: %s", code, stderr.String())
	}
	bodies, _ := os.ReadDir(filepath.Join(archive, "bodies"))
	os.Remove(filepath.Join(archive, "bodies", bodies[0].Name()))
	stdout.Reset()
	stderr.Reset()
	code := Run(context.Background(), []string{"plan", specPath}, &stdout, &stderr)
	if code != exitUsage || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "page archive:site") {
		t.Errorf("plan of an archive without a body: exit %d, %q", code, stderr.String())
	}
}
