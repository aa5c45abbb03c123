package experiment

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/chromium"
	"github.com/quicbench/quicbench/internal/firefox"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/site/imports"
	"github.com/quicbench/quicbench/internal/testenv"
)

// importShared imports the shared recording name (a Mahimahi directory
// ends in .mahimahi) into an archive directory.
func importShared(t *testing.T, name string) string {
	t.Helper()
	read, ok := imports.ReaderFor(name, strings.HasSuffix(name, ".mahimahi"))
	if !ok {
		t.Fatalf("%s is no recording", name)
	}
	a, _, err := read(t.Context(), filepath.Join(testenv.SharedRecordings(t), name), imports.Options{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	dir := filepath.Join(t.TempDir(), name)
	if err := site.WriteArchive(t.Context(), dir, a); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReplaySharedRecordings replays two real recordings made by others
// over h2 and h3 in Chromium and Firefox: www.wayfair.com, recorded by
// Mahimahi in a Pixel 2's Chrome, whose images the page asks for at other
// sizes than recorded, and www.nghttp2.org, a Chrome HAR. Every load is
// verified with no image broken, no request of another load and no
// unmatched request the recording holds a sibling of. wayfair replays at
// the Pixel 2's 411 CSS pixels wide and at the density its width-described
// srcsets chose (1x), so its images come as recorded, none as a variant.
func TestReplaySharedRecordings(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "make deps")
	testenv.RequireFile(t, firefox.DefaultPath, "make deps")
	wayfair := importShared(t, "www.wayfair.com.mahimahi")
	nghttp2 := importShared(t, "www.nghttp2.org.har")
	// retries as a run's: wayfair sends Hero_Slider XHRs and ad syncs its
	// recording lacks in some loads (see BENCHMARKS, round two)
	res, store, _ := runSpec(t, fmt.Sprintf(`repetitions: 1
retries: 2
netcheck: false
factors:
  networks: [{name: n, rtt: 40ms, down: 20mbit, up: 5mbit}]
  pages: ["archive:%s", "archive:%s"]
  protocols: [h2, h3]
  clients: [chromium, firefox]
`, wayfair, nghttp2))
	if res.Done != 8 {
		t.Fatalf("result %+v, want 8 loads", res)
	}
	for _, tr := range trialsOf(t, store) {
		site := filepath.Base(tr.Page)
		name := fmt.Sprintf("%s %s %s", site, tr.Client, tr.Protocol)
		if tr.Status != results.StatusOK {
			t.Errorf("%s: %s", name, tr.Error)
		}
		if tr.BrokenImagesRecorded+tr.BrokenImagesUnserved != 0 || tr.SiblingUnmatched != 0 {
			t.Errorf("%s: %d+%d broken images, %d unmatched with a recorded sibling", name, tr.BrokenImagesRecorded, tr.BrokenImagesUnserved, tr.SiblingUnmatched)
		}
		if strings.HasPrefix(site, "www.wayfair.com") && tr.Status == results.StatusOK && (tr.ReplayVariant > 2 || tr.ViewportWidth != 411 || tr.ViewportScale != 1) {
			t.Errorf("%s: %d variants at a viewport %d wide at %gx, want the Pixel 2's 411 at 1x, as its srcsets chose, and at most 2 variants (the 2 of 14 choices that fit another density)", name, tr.ReplayVariant, tr.ViewportWidth, tr.ViewportScale)
		}
		t.Logf("%s: %d requests to load, %d served (%d variants), %d unmatched (%d the browser's own, %d steady)", name,
			tr.LoadRequests, tr.ServerRequests, tr.ReplayVariant, tr.UnmatchedRequests, tr.BrowserOwnUnmatched, tr.SteadyUnmatched)
	}
}
