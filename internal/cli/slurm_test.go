package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// slurmSpec writes a small spec and returns its path.
func slurmSpec(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(p, []byte("repetitions: 2\nclient: loader\nfactors:\n  networks: [{rtt: 10ms}]\n  pages: [synthetic:1x1KB]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSlurmWritesNoScriptThroughALink: a link planted where a job script
// goes, and a hard link to a file beside it, are not written through.
func TestSlurmWritesNoScriptThroughALink(t *testing.T) {
	out := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("keep me\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other")
	if err := os.WriteFile(other, []byte("keep me too\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(out, "quicbench-merge.sbatch")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(other, filepath.Join(out, "quicbench-array.sbatch")); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"slurm", slurmSpec(t), "--shards", "2", "--out", out}, &stdout, &stderr)
	for p, want := range map[string]string{victim: "keep me\n", other: "keep me too\n"} {
		if got, _ := os.ReadFile(p); string(got) != want {
			t.Errorf("%s was written through a link (exit %d): %q", p, code, got)
		}
	}
	if code == exitOK {
		t.Errorf("slurm wrote its scripts with a link in the way: %s", stdout.String())
	}
}

// TestSlurmQuotesTheOutputAndRefusesWhatCannotBe: an --out with a space
// is quoted in #SBATCH --output; a line break or a tab in any value that
// reaches a #SBATCH line is refused with status 2.
func TestSlurmQuotesTheOutputAndRefusesWhatCannotBe(t *testing.T) {
	spec := slurmSpec(t)
	out := filepath.Join(t.TempDir(), "my study")
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), []string{"slurm", spec, "--shards", "2", "--out", out}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	script, err := os.ReadFile(filepath.Join(out, "quicbench-array.sbatch"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `#SBATCH --output="` + out + `/slurm-%A_%a.out"` + "\n"; !strings.Contains(string(script), want) {
		t.Errorf("script lacks %q:\n%s", want, script)
	}
	for _, args := range [][]string{
		{"--out", filepath.Join(t.TempDir(), "a\n#SBATCH --wrap=x")},
		{"--out", filepath.Join(t.TempDir(), `a"b`)},
		{"--out", t.TempDir(), "--time", "1:00\t--wrap=x"},
		{"--out", t.TempDir(), "--partition", "debug --wrap=x"},
	} {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), append([]string{"slurm", spec, "--shards", "2"}, args...), &stdout, &stderr)
		if code != exitUsage || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%q: exit %d, %q; want one line and status 2", args, code, stderr.String())
		}
	}
}
