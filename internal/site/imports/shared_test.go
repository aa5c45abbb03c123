package imports

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/testenv"
)

// TestSharedRecordingsKeepTheirViewport imports real recordings made by
// others' tools and browsers: the horcrux recordings were made in a Pixel
// 2's Chrome and replay at its viewport; the Web-Distortion and fawkes
// ones, and the HARs, in desktop browsers, at the default.
func TestSharedRecordingsKeepTheirViewport(t *testing.T) {
	dir := testenv.SharedRecordings(t)
	pixel2 := factor.Viewport{Width: 411, Height: 731, Scale: 2.625, Mobile: true}
	pixel2at1 := pixel2
	pixel2at1.Scale = 1
	for _, c := range []struct {
		name    string
		read    func(context.Context, string, Options) (*site.Archive, Report, error)
		want    factor.Viewport
		agentOf string
	}{
		// Pixel 2s emulated at 1x, as their srcsets' widths show (and
		// cbsnews's densities)
		{"www.wayfair.com.mahimahi", Mahimahi, pixel2at1, "Pixel 2"},
		{"www.bbc.co.uk.mahimahi", Mahimahi, pixel2at1, "Pixel 2"},
		{"www.cbsnews.com.mahimahi", Mahimahi, pixel2at1, "Pixel 2"},
		// yelp by its imgs' src beside a srcset of 2x alone, apple by its
		// CSS's resolution media queries, netflix by its one srcset of
		// widths, which a 2.625 screen cannot pick
		{"www.yelp.com.mahimahi", Mahimahi, pixel2at1, "Pixel 2"},
		{"www.apple.com.mahimahi", Mahimahi, pixel2at1, "Pixel 2"},
		{"www.netflix.com.mahimahi", Mahimahi, pixel2at1, "Pixel 2"},
		{"www.att.com.mahimahi", Mahimahi, pixel2, "Pixel 2"},
		{"www.amazon.com.mahimahi", Mahimahi, factor.Viewport{}, "X11; Linux x86_64"},
		{"www.kernel.org.har", HAR, factor.Viewport{}, ""},
		{"www.nghttp2.org.har", HAR, factor.Viewport{}, "Chrome/"},
	} {
		a, _, err := c.read(t.Context(), filepath.Join(dir, c.name), Options{})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if a.Viewport != c.want || !strings.Contains(a.UserAgent, c.agentOf) {
			t.Errorf("%s: viewport %+v from User-Agent %.120q, want %+v from one naming %q", c.name, a.Viewport, a.UserAgent, c.want, c.agentOf)
		}
	}
	a, _, err := Mahimahi(t.Context(), filepath.Join(dir, "www.wayfair.com.mahimahi"), Options{SetViewport: true})
	if err != nil || !a.Viewport.IsZero() {
		t.Errorf("--viewport desktop: %+v, %v", a.Viewport, err)
	}
}

// TestSharedHARsImportWhole imports HARs others' browsers and tools wrote
// (issue 77): TracerBench's fixture (no method at all, no start times),
// PerfCascade's h2o.examp1e.net (an ad blocker's 307 Internal Redirects to
// about:blank and a data: URL), filamentgroup.com's Firefox HAR (responses
// from the cache with status 0) and mitmproxy.org's (images without their
// bodies): each imports with what it holds and says what it did.
func TestSharedHARsImportWhole(t *testing.T) {
	dir := testenv.SharedRecordings(t)
	for _, c := range []struct {
		name  string
		check func(Report) bool
	}{
		{"www.tracerbench.com.har", func(r Report) bool { return r.NoMethods > 0 && r.NoResponse == 0 }},
		{"h2o.examp1e.net.har", func(r Report) bool { return r.AnsweredInBrowser == 2 && r.BrowserMade == 0 && r.HSTSUpgrades == 0 }},
		{"www.filamentgroup.com-firefox.har", func(r Report) bool { return r.NoStatus == 5 && r.NoResponse == 0 }},
		{"mitmproxy.org-firefox.har", func(r Report) bool { return r.BodilessImages == 5 }},
	} {
		a, rep, err := HAR(t.Context(), filepath.Join(dir, c.name), Options{UpgradeHTTP: true})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !c.check(rep) || len(a.Exchanges) == 0 {
			t.Errorf("%s: %d exchanges, report %+v:\n%s", c.name, len(a.Exchanges), rep, rep)
		}
	}
}
