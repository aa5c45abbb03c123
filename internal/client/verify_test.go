package client

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/factor"
)

func goodMetrics(proto string, urls []string) PageMetrics {
	m := PageMetrics{DocumentProtocol: proto, DocumentStatus: 200, TTFBMs: 50, DCLMs: 60, PLTMs: 100, Images: len(urls)}
	for _, u := range urls {
		m.Resources = append(m.Resources, ResourceTiming{URL: u, Protocol: proto, Status: 200})
	}
	return m
}

func TestVerify(t *testing.T) {
	urls := []string{"https://a/1.png", "https://a/2.png"}
	req := Request{URL: "https://a/?q=1", Protocol: factor.H3, Expected: urls, ExcuseImage: func(u string) bool { return strings.HasSuffix(u, "/gone.png") }}
	tests := []struct {
		name   string
		mutate func(*PageMetrics)
		want   string // substring of the problems; "" for a verified load
	}{
		{"verified", func(*PageMetrics) {}, ""},
		{"document over h2", func(m *PageMetrics) { m.DocumentProtocol = "h2" }, `document over "h2"`},
		{"resource over h2", func(m *PageMetrics) { m.Resources[1].Protocol = "h2" }, "1 resources not over h3"},
		{"resource missing", func(m *PageMetrics) { m.Resources = m.Resources[:1] }, "1 of 2 resources missing"},
		{"resource 404", func(m *PageMetrics) { m.Resources[0].Status = 404 }, "status other than 200"},
		{"broken image", func(m *PageMetrics) { m.BrokenImages = 1 }, "1 of 2 images broken"},
		{"broken images not excused", func(m *PageMetrics) {
			m.BrokenImages, m.BrokenImageURLs = 3, []string{"https://a/1.png", "https://a/gone.png"}
		}, "2 of 2 images broken"},
		{"broken images excused", func(m *PageMetrics) {
			m.BrokenImages, m.BrokenImageURLs = 2, []string{"https://a/gone.png", "https://a/gone.png"}
		}, ""},
		{"no load end", func(m *PageMetrics) { m.PLTMs = 0 }, "no load event end"},
		{"document 500", func(m *PageMetrics) { m.DocumentStatus = 500 }, "document status 500"},
		{"the document asked for", func(m *PageMetrics) { m.DocumentURL = "https://A/?q=1#top" }, ""},
		{"the page navigated itself to a page it has", func(m *PageMetrics) { m.DocumentURL = "https://b/" }, ""},
		{"the page navigated itself away", func(m *PageMetrics) { m.DocumentURL, m.DocumentStatus = "https://a/webhp?q=1", 404 },
			"the tab left the page for https://a/webhp?q=1 (a redirect, or the page's scripts navigated it), which answered 404"},
		{"another query", func(m *PageMetrics) { m.DocumentURL, m.DocumentStatus = "https://a/", 404 }, "left the page"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := goodMetrics("h3", urls)
			tt.mutate(&m)
			got := strings.Join(Verify(req, m), "; ")
			if tt.want == "" && got != "" {
				t.Errorf("a good load was flagged: %s", got)
			}
			if tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("problems %q, want one containing %q", got, tt.want)
			}
		})
	}
}

func TestDeterministicClockStart(t *testing.T) {
	recorded := time.Date(2022, 12, 17, 7, 18, 56, 0, time.UTC)
	if js := DeterministicJS(recorded); !strings.Contains(js, "let now = 1671261536000;") {
		t.Errorf("clock at the recording's time: %s", js)
	}
	if js := DeterministicJS(time.Time{}); !strings.Contains(js, "let now = 1700000000000;") {
		t.Errorf("clock without a recording time: %s", js)
	}
}

// TestHoldJSListsTheDocumentsAsData: the documents go into the script as
// one JSON array, so a URL with quotes or a line separator stays a string,
// and the listing is bounded.
func TestHoldJSListsTheDocumentsAsData(t *testing.T) {
	js := HoldJS([]string{"https://www.a.test/", "https://www.a.test/x'\"\u2028</script>"})
	if !strings.Contains(js, `new Set(["https://www.a.test/","https://www.a.test/x'\"\u2028\u003c/script\u003e"])`) {
		t.Errorf("documents not one JSON array:\n%s", js)
	}
	if !strings.Contains(js, fmt.Sprintf("length < %d", MaxBrokenListed)) || !strings.Contains(js, "e.preventDefault()") {
		t.Errorf("no bound or no hold:\n%s", js)
	}
	if js := HoldJS([]string{}); !strings.Contains(js, "new Set([])") {
		t.Errorf("no documents: %s", js)
	}
}

// TestLiveVerdict: a live load's requests to the hosts it verifies must
// come over the protocol asked for; those to other pinned hosts, or that
// do not name a protocol, are excluded, not judged, and those to hosts
// not pinned counted apart.
func TestLiveVerdict(t *testing.T) {
	pinned := map[string]netip.Addr{"www.site.test": netip.MustParseAddr("203.0.113.10"), "static.site.test": netip.MustParseAddr("203.0.113.11"),
		"old.site.test": netip.MustParseAddr("203.0.113.12")}
	req := Request{URL: "https://www.site.test/", Protocol: factor.H3, VerifyHosts: []string{"www.site.test", "static.site.test"}, Addrs: pinned}
	m := PageMetrics{DocumentProtocol: "h3", DocumentStatus: 200, PLTMs: 100, Resources: []ResourceTiming{
		{URL: "https://www.site.test/app.js", Protocol: "h3"},
		{URL: "https://static.site.test/a.png", Protocol: "h3", Status: 404},
		{URL: "https://ads.other.test/x.js", Protocol: ""},
		{URL: "https://old.site.test/y.js", Protocol: "h2"},
		{URL: "https://www.site.test/sw-cached.css", Protocol: ""},
	}}
	if v := LiveVerdictOf(req, m); v != (LiveVerdict{Verified: 2, Excluded: 2, Unpinned: 1, ExcludedExample: `https://old.site.test/y.js over "h2"`}) {
		t.Errorf("verdict %+v, want 2 verified, 2 excluded and 1 to a host not pinned", v)
	}
	if p := Verify(req, m); len(p) != 0 {
		t.Errorf("problems %q, want none: a live site's own statuses and other hosts are not the load's", p)
	}
	m.Resources[1].Protocol = "h2"
	if p := strings.Join(Verify(req, m), "; "); !strings.Contains(p, "1 requests to www.site.test, static.site.test not over h3") || !strings.Contains(p, "https://static.site.test/a.png over \"h2\"") {
		t.Errorf("problems %q, want the request over h2 named", p)
	}
	if v := LiveVerdictOf(Request{Protocol: factor.H3}, m); v != (LiveVerdict{}) {
		t.Errorf("a load that is not live: %+v", v)
	}
}
