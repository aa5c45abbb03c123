package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEveryHelpNamesItsPage: each command's -h ends by naming the page of
// docs/ that documents it, and that page exists.
func TestEveryHelpNamesItsPage(t *testing.T) {
	page := regexp.MustCompile(`Documentation: (\S+) in quicbench's source tree\.`)
	for _, c := range commands() {
		var stdout, stderr bytes.Buffer
		Run(context.Background(), []string{c.name, "-h"}, &stdout, &stderr)
		m := page.FindStringSubmatch(stdout.String())
		if m == nil {
			t.Errorf("quicbench %s -h names no page of the documentation:\n%s", c.name, stdout.String())
			continue
		}
		if _, err := os.Stat(filepath.Join("..", "..", m[1])); err != nil {
			t.Errorf("quicbench %s -h names %s: %v", c.name, m[1], err)
		}
	}
}

// TestREADMELinksEveryPage: README.md links every page of docs/, stays
// under 300 lines, and every page's relative links lead to files.
func TestREADMELinksEveryPage(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(readme), "\n"); n >= 300 {
		t.Errorf("README.md has %d lines, want under 300", n)
	}
	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages in docs/: %v", err)
	}
	for _, p := range pages {
		if !strings.Contains(string(readme), "](docs/"+filepath.Base(p)+")") {
			t.Errorf("README.md does not link docs/%s", filepath.Base(p))
		}
	}
	link := regexp.MustCompile(`\]\(([^)#:]+)(#[^)]*)?\)`)
	for _, p := range append(pages, filepath.Join("..", "..", "README.md")) {
		text, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(text), -1) {
			if _, err := os.Stat(filepath.Join(filepath.Dir(p), m[1])); err != nil {
				t.Errorf("%s links %s, which is not there", filepath.Base(p), m[1])
			}
		}
	}
}
