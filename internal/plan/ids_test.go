package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/spec"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// idSpecs are specs beyond the examples whose trial IDs must never
// change: every factor at a level other than its default.
var idSpecs = map[string]string{
	"every-level.yaml": `repetitions: 2
seed: 5
factors:
  networks: [{rtt: 10ms}, {rtt: 50ms, loss: 1, down: 10mbit}]
  pages: [synthetic:4x1KB, synthetic:2x100KB]
  protocols: [h1, h2, h3]
  stacks: [tcp, tcp+, tcp+bbr]
  servers: [go, nginx]
  quic: [quic-go, quinn+cubic, quinn+newreno, quinn+bbr]
  visits: [first, repeat]
  cache: [off, on]
  visual: [off, on]
  origins: [1, 2]
`,
	"loader.yaml": `repetitions: 3
client: loader
factors:
  networks: [{rtt: 100ms}]
  pages: [web2024:3, synthetic:8x10KB]
  protocols: [h2, h3]
`,
}

// TestTrialIDsOfEveryExampleStayTheSame pins the ordered trial IDs of
// every example spec and of idSpecs: a changed ID would orphan the
// trials of runs made before (resume, merge, report). Rewrite with -update
// only when a change of IDs is intended.
func TestTrialIDsOfEveryExampleStayTheSame(t *testing.T) {
	var b strings.Builder
	paths, err := filepath.Glob("../../examples/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, path := range paths {
		s, err := spec.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		writeIDs(&b, filepath.Base(path), Build(s))
	}
	for _, name := range []string{"every-level.yaml", "loader.yaml"} {
		s, err := spec.Parse([]byte(idSpecs[name]))
		if err != nil {
			t.Fatal(err)
		}
		writeIDs(&b, name, Build(s))
	}
	golden := filepath.Join("testdata", "trial_ids.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("trial IDs changed (go test ./internal/plan -update rewrites them, but old runs then no longer resume):\n%s", lineDiff(string(want), got))
	}
}

// writeIDs writes a plan's size, its first trials in order, and the
// SHA-256 of every "seq id key" line in order.
func writeIDs(b *strings.Builder, name string, p Plan) {
	h := sha256.New()
	for _, t := range p.Trials {
		fmt.Fprintf(h, "%d %s %s\n", t.Seq, t.ID, t.Cell.Key())
	}
	fmt.Fprintf(b, "%s: %d trials, %d cells, %d setups, sha256 %s\n", name, len(p.Trials), p.Cells, p.Setups, hex.EncodeToString(h.Sum(nil)))
	for _, t := range p.Trials[:min(8, len(p.Trials))] {
		fmt.Fprintf(b, "  %d %s %s\n", t.Seq, t.ID, t.Cell.Key())
	}
}

// lineDiff lists the lines of got that differ from want's.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var out []string
	for i := range max(len(w), len(g)) {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a != c {
			out = append(out, "- "+a, "+ "+c)
		}
	}
	return strings.Join(out, "\n")
}
