package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
