package gen

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"image/png"
	"io"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/site"
)

// TestWeb2024CorpusFollowsItsTargets: 100 pages of seed 1 have the HTTP
// Archive's request quantiles and medians by type within 10 %.
func TestWeb2024CorpusFollowsItsTargets(t *testing.T) {
	start := time.Now()
	st, err := Web2024Stats(1, 100)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("generated in %v:\n%s", time.Since(start).Round(time.Millisecond), strings.Join(st.Table(), "\n"))
	within := func(name string, target, got float64) {
		if got < 0.9*target || got > 1.1*target {
			t.Errorf("%s: %.0f, target %.0f", name, got, target)
		}
	}
	for i, q := range RequestQuantiles {
		within("requests quantile", q.Requests, st.RequestQuantiles[i])
	}
	for _, rt := range ResourceTypes {
		if rt.Name != "other" {
			within("median requests "+rt.Name, float64(rt.MedianCount), st.MedianCount[rt.Name])
			within("median bytes "+rt.Name, float64(rt.MedianBytes), st.MedianBytes[rt.Name])
		}
	}
	if st.MedianOrigins < 4 {
		t.Errorf("median %v origins per page, want the first party's two and several third parties", st.MedianOrigins)
	}
}

// decoded is a resource's body as the browser sees it.
func decoded(t *testing.T, r *site.Resource) []byte {
	t.Helper()
	if r.Encoding == "" {
		return r.Body
	}
	if r.Encoding != "gzip" {
		t.Fatalf("%s: encoding %q", r.Path, r.Encoding)
	}
	zr, err := gzip.NewReader(bytes.NewReader(r.Body))
	if err != nil {
		t.Fatalf("%s: %v", r.Path, err)
	}
	text, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", r.Path, err)
	}
	return text
}

// TestWeb2024PageStructure: a page is the same for the same number and
// seed; every file is reachable from the document through HTML, CSS or a
// script; text is gzip on the wire, images are PNGs, and there are third
// parties.
func TestWeb2024PageStructure(t *testing.T) {
	page := factor.Page{Kind: factor.PageWeb2024, Number: 7, CorpusSeed: 1}
	a, err := Web2024(page)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Web2024(page)
	other, _ := Web2024(factor.Page{Kind: factor.PageWeb2024, Number: 8, CorpusSeed: 1})
	if a.Bytes() != again.Bytes() || !bytes.Equal(a.Origins[0].Resources["/"].Body, again.Origins[0].Resources["/"].Body) {
		t.Error("the same page came out differently")
	}
	if other.Bytes() == a.Bytes() {
		t.Error("pages 7 and 8 are alike")
	}
	var texts []string
	thirdParties := 0
	for _, o := range a.Origins {
		if !strings.HasSuffix(o.Host, ".quicbench.test") {
			thirdParties++
		}
		for _, r := range o.Resources {
			switch {
			case strings.HasPrefix(r.ContentType, "text/"), r.ContentType == "application/json":
				if r.Encoding != "gzip" {
					t.Errorf("%s%s: %s without gzip", o.Host, r.Path, r.ContentType)
				}
				texts = append(texts, string(decoded(t, r)))
			case r.ContentType == "image/png":
				if _, err := png.Decode(bytes.NewReader(r.Body)); err != nil {
					t.Errorf("%s%s: %v", o.Host, r.Path, err)
				}
			}
		}
	}
	all := strings.Join(texts, "\n")
	for _, u := range append(append([]string{}, a.Subresources...), a.Late...) {
		if !strings.Contains(all, u) {
			t.Errorf("%s is referenced nowhere", u)
		}
		if _, err := url.Parse(u); err != nil {
			t.Error(err)
		}
	}
	if thirdParties < 2 || len(a.Late) == 0 || len(a.Subresources) < 10 {
		t.Errorf("%d third parties, %d late and %d other subresources", thirdParties, len(a.Late), len(a.Subresources))
	}
	for _, want := range []string{"@font-face", "background-image:url(", "<script async", "<script defer", "createElement(\"script\")", "fetch(u)"} {
		if !strings.Contains(all, want) {
			t.Errorf("the page has no %s", want)
		}
	}
}

// TestShapeIsThePage: Web2024Shape's requests and bytes are those of the
// page Web2024 builds (bytes within 5 %: bodies are fitted to their
// sizes), drawn without building it.
func TestShapeIsThePage(t *testing.T) {
	for _, n := range []int{1, 2, 9, 18} {
		p, err := factor.ParsePage(fmt.Sprintf("web2024:%d", n))
		if err != nil {
			t.Fatal(err)
		}
		shape, err := Web2024Shape(p)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Web2024(p)
		if err != nil {
			t.Fatal(err)
		}
		requests, bytes := 0, int64(0)
		for _, o := range s.Origins {
			for _, r := range o.Resources {
				requests++
				bytes += int64(len(r.Body))
			}
		}
		if requests != shape.Requests || len(s.Origins) > shape.Origins {
			t.Errorf("web2024:%d: shape %d requests on at most %d origins, page %d on %d", n, shape.Requests, shape.Origins, requests, len(s.Origins))
		}
		if d := float64(bytes-shape.Bytes) / float64(shape.Bytes); d < -0.05 || d > 0.05 {
			t.Errorf("web2024:%d: shape %d B, page %d B (%+.1f %%)", n, shape.Bytes, bytes, 100*d)
		}
	}
	if _, err := Web2024Shape(factor.Page{Kind: factor.PageSynthetic, Objects: 1, ObjectBytes: 100}); err == nil {
		t.Error("a synthetic page has a web2024 shape")
	}
}
