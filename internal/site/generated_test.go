package site_test

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/site/gen"
)

// TestArchiveOfAGeneratedPage: a generated page recorded as an archive
// replays as the same site.
func TestArchiveOfAGeneratedPage(t *testing.T) {
	s, err := gen.Web2024(factor.Page{Kind: factor.PageWeb2024, Number: 3, CorpusSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	a := site.ArchiveOf(s, "test")
	replayed, err := a.Site()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s.Hosts(), replayed.Hosts()); diff != "" {
		t.Errorf("hosts (-generated +replayed):\n%s", diff)
	}
	for _, o := range s.Origins {
		for key, r := range o.Resources {
			got := replayed.Lookup(o.Host, key)
			if got == nil || !bytes.Equal(got.Body, r.Body) || got.Encoding != r.Encoding || got.ContentType != r.ContentType {
				t.Errorf("%s%s not replayed as generated", o.Host, key)
			}
		}
	}
	if a.Exchanges[0].URL != s.DocumentURL() {
		t.Errorf("first exchange %s, want the document", a.Exchanges[0].URL)
	}
}
