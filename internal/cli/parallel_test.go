package cli

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestUserFlagsHandsOnWhatWasSet: a parallel run's shards get the flags
// the user set, as given, and none of those the parallel run sets itself.
func TestUserFlagsHandsOnWhatWasSet(t *testing.T) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.Bool("verbose", false, "")
	fs.String("chromium", "chromium", "")
	fs.Int("parallel", 0, "")
	fs.String("out", "", "")
	fs.Bool("lanes", true, "")
	if err := fs.Parse([]string{"--parallel", "2", "--chromium", "/opt/c r/chrome", "--verbose", "--out", "x"}); err != nil {
		t.Fatal(err)
	}
	got := userFlags(fs, "parallel", "out")
	if want := []string{"--chromium=/opt/c r/chrome", "--verbose=true"}; !slices.Equal(got, want) {
		t.Errorf("userFlags = %q, want %q", got, want)
	}
}

// TestParallelRefusesWhatItCannotRun: more shards than CPUs, one shard, or
// --parallel beside --shard exit 2 with one line, and leave no directory.
func TestParallelRefusesWhatItCannotRun(t *testing.T) {
	dir := t.TempDir()
	specPath := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(specPath, []byte("name: s\nrepetitions: 1\nclient: loader\nnetcheck: false\nfactors:\n  networks: [{rtt: 10ms}]\n  pages: [synthetic:1x1KB]\n  protocols: [h2, h3]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	for _, args := range [][]string{
		{"--parallel", strconv.Itoa(runtime.NumCPU() + 1)},
		{"--parallel", "1"},
		{"--parallel", "2", "--shard", "1/2"},
		{"--parallel", "2", "--cores", strconv.Itoa(runtime.NumCPU())},
	} {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), append([]string{"run", specPath, "--out", out}, args...), &stdout, &stderr)
		if code != exitUsage || strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 {
			t.Errorf("run %q: exit %d, %q; want 2 and one line", args, code, stderr.String())
		}
		if _, err := os.Lstat(out); err == nil {
			t.Errorf("run %q left %s", args, out)
		}
	}
}
