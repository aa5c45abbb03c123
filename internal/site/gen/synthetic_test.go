package gen

import (
	"bytes"
	"image/png"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/site"
)

func TestSyntheticObjectsAreValidPNGsOfExactSize(t *testing.T) {
	for _, size := range []int64{factor.MinObjectBytes, 100, 1000, 10_000, 300_000} {
		s, err := Synthetic(factor.Page{Kind: factor.PageSynthetic, Objects: 3, ObjectBytes: size}, []string{"www.example.test"}, 1)
		if err != nil {
			t.Fatal(err)
		}
		for i, u := range s.Subresources {
			r := s.Lookup("www.example.test", strings.TrimPrefix(u, "https://www.example.test"))
			if r == nil {
				t.Fatalf("subresource %s not in the site", u)
			}
			if int64(len(r.Body)) != size {
				t.Errorf("object %d: %d bytes, want %d", i, len(r.Body), size)
			}
			img, err := png.Decode(bytes.NewReader(r.Body))
			if err != nil {
				t.Fatalf("object %d of %d B is not a valid PNG: %v", i, size, err)
			}
			if b := img.Bounds(); b.Dx() != 1 || b.Dy() != 1 {
				t.Errorf("object %d is %v, want 1×1", i, b)
			}
		}
	}
}

func TestSyntheticDocumentReferencesEveryObjectOnce(t *testing.T) {
	s, err := Synthetic(factor.Page{Kind: factor.PageSynthetic, Objects: 32, ObjectBytes: 1000}, []string{"h.test"}, 9)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(s.Origins[0].Resources["/"].Body)
	if len(s.Subresources) != 32 {
		t.Fatalf("%d subresources, want 32", len(s.Subresources))
	}
	seen := map[string]bool{}
	for _, u := range s.Subresources {
		if seen[u] {
			t.Errorf("URL %s appears twice", u)
		}
		seen[u] = true
		if strings.Count(doc, `src="`+u+`"`) != 1 {
			t.Errorf("document references %s %d times, want once", u, strings.Count(doc, u))
		}
	}
	if s.DocumentURL() != "https://h.test/" {
		t.Errorf("document URL %s", s.DocumentURL())
	}
}

func TestSyntheticIsDeterministicAndIncompressible(t *testing.T) {
	a, _ := Synthetic(factor.Page{Kind: factor.PageSynthetic, Objects: 2, ObjectBytes: 5000}, []string{"h"}, 3)
	b, _ := Synthetic(factor.Page{Kind: factor.PageSynthetic, Objects: 2, ObjectBytes: 5000}, []string{"h"}, 3)
	c, _ := Synthetic(factor.Page{Kind: factor.PageSynthetic, Objects: 2, ObjectBytes: 5000}, []string{"h"}, 4)
	ra, rb, rc := a.Lookup("h", "/obj/1.png").Body, b.Lookup("h", "/obj/1.png").Body, c.Lookup("h", "/obj/1.png").Body
	if !bytes.Equal(ra, rb) {
		t.Error("same seed gave different bytes")
	}
	if bytes.Equal(ra, rc) {
		t.Error("different seeds gave the same bytes")
	}
	if bytes.Equal(ra, a.Lookup("h", "/obj/0.png").Body) {
		t.Error("two objects of one page have the same bytes (caches could merge them)")
	}
}

func TestValidateRejectsDuplicateOriginsAndMissingFiles(t *testing.T) {
	s, _ := Synthetic(factor.Page{Kind: factor.PageSynthetic, Objects: 1, ObjectBytes: 100}, []string{"a.test"}, 1)
	s.Origins = append(s.Origins, &site.Origin{Host: "a.test"})
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "two origins") {
		t.Errorf("duplicate origin: %v", err)
	}
	s, _ = Synthetic(factor.Page{Kind: factor.PageSynthetic, Objects: 1, ObjectBytes: 100}, []string{"a.test"}, 1)
	delete(s.Origins[0].Resources, "/obj/0.png")
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing object: %v", err)
	}
}

// TestMinObjectBytesIsTheSmallestPNG: the vocabulary's limit is the
// generator's smallest image.
func TestMinObjectBytesIsTheSmallestPNG(t *testing.T) {
	if n := len(pngOfSize(0, nil)); n != factor.MinObjectBytes {
		t.Errorf("the smallest PNG has %d bytes, factor.MinObjectBytes says %d", n, factor.MinObjectBytes)
	}
}

func TestSyntheticSpreadsObjectsOverOrigins(t *testing.T) {
	hosts := OriginHosts(3)
	if hosts[0] != "www.quicbench.test" || hosts[2] != "o3.quicbench.test" {
		t.Fatalf("hosts %v", hosts)
	}
	s, err := Synthetic(factor.Page{Kind: factor.PageSynthetic, Objects: 8, ObjectBytes: 100}, hosts, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Objects 0..7 round-robin: 3, 3 and 2 objects; the document on the first.
	for i, want := range []int{3 + 1, 3, 2} {
		if got := len(s.Origins[i].Resources); got != want {
			t.Errorf("origin %s has %d resources, want %d", hosts[i], got, want)
		}
	}
	if s.Subresources[4] != "https://o2.quicbench.test/obj/4.png" {
		t.Errorf("object 4 at %s, want on o2", s.Subresources[4])
	}
	if s.DocumentURL() != "https://www.quicbench.test/" {
		t.Errorf("document at %s", s.DocumentURL())
	}
}
