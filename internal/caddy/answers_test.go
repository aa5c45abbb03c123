package caddy

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/site/imports"
	"github.com/quicbench/quicbench/internal/testenv"
)

// TestSharedRecordingsAreAnswerable: Caddy can answer every resource of
// each of the twelve real recordings made by others as recorded (none is
// refused at start), and each is answered exactly by its own request.
func TestSharedRecordingsAreAnswerable(t *testing.T) {
	dir := testenv.SharedRecordings(t)
	for _, name := range testenv.DirNames(t, dir) {
		read, ok := imports.ReaderFor(name, strings.HasSuffix(name, ".mahimahi"))
		if !ok {
			continue
		}
		a, _, err := read(t.Context(), filepath.Join(dir, name), imports.Options{})
		if err != nil && strings.Contains(err.Error(), "--upgrade-http") { // recorded over plain http
			a, _, err = read(t.Context(), filepath.Join(dir, name), imports.Options{UpgradeHTTP: true})
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		s, err := a.Site()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		answers, err := newAnswers(s)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		fallbacks := 0
		matcher := site.NewMatcher(s)
		for _, an := range answers.list {
			path, query, _ := strings.Cut(an.target, "?")
			if _, k := matcher.Match(an.host, an.method, path, query); k.String() != "exact" {
				t.Errorf("%s: %s %s%s answers as %s", name, an.method, an.host, an.target, k)
			}
			if an.fallback {
				fallbacks++
			}
		}
		t.Logf("%s: %d answers, %d also for any query of their path", name, len(answers.list), fallbacks)
	}
}
