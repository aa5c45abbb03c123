package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/results"
)

// TestAHARBeyondTheBoundIsSaidNotSilent: a load's HAR artifact beyond the
// report's 64 MiB bound was silently not drawn; the waterfall now says
// it is drawn from Resource Timing instead, and why.
func TestAHARBeyondTheBoundIsSaidNotSilent(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "artifacts"), 0o755)
	f, err := os.Create(filepath.Join(dir, "artifacts", "big.har"))
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(maxArtifactHARBytes + 1) // sparse: no 64 MiB written
	f.Close()
	os.WriteFile(filepath.Join(dir, "artifacts", "odd.har"), []byte("{not a HAR"), 0o644)
	for artifact, want := range map[string]string{
		"artifacts/big.har": "larger than the report's bound of 64 MiB",
		"artifacts/odd.har": "not a HAR document",
	} {
		h, note := harOf(dir, &results.Trial{Artifacts: artifact})
		if h != nil || !strings.Contains(note, want) || !strings.Contains(note, "drawn from Resource Timing instead") {
			t.Errorf("%s: HAR %v, note %q; want none and a note saying %q", artifact, h != nil, note, want)
		}
	}
	if h, note := harOf(dir, &results.Trial{Artifacts: "artifacts/absent.har"}); h != nil || note != "" {
		t.Errorf("no HAR kept: %v, %q; want no note", h != nil, note)
	}
}
