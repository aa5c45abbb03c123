package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
)

// replayTrial is a verified load of a recorded page that started requests
// up to its load event, and as many again after it (beacons).
func replayTrial(p factor.Protocol, requests, bytes, unmatched int64) results.Trial {
	return results.Trial{Levels: results.Levels{Network: "n", Page: "archive:sites/shop", Protocol: p, Stack: "tcp", Server: "go", QUIC: "quic-go",
		Visit: "first", Client: "chromium", Browser: "fresh", Origins: 1},
		PageValues:   results.PageValues{PageKind: factor.PageArchive},
		Outcome:      results.Outcome{Status: results.StatusOK, ServerRequests: 2 * requests, UnmatchedRequests: unmatched},
		ReplayValues: results.ReplayValues{ServedBytes: bytes + 1, SteadyUnmatched: unmatched, LoadRequests: requests, LoadBytes: bytes}}
}

func TestWorkMarksProtocolsThatDidDifferentWork(t *testing.T) {
	trials := []results.Trial{
		replayTrial(factor.H2, 200, 1_000_000, 4), replayTrial(factor.H2, 202, 1_000_000, 4), replayTrial(factor.H2, 260, 1_000_000, 9),
		replayTrial(factor.H3, 201, 1_010_000, 5), replayTrial(factor.H3, 203, 1_010_000, 5),
		// a failed load and a generated page's are left out
		{Levels: results.Levels{Page: "archive:sites/shop", Protocol: factor.H3}, PageValues: results.PageValues{PageKind: factor.PageArchive},
			Outcome: results.Outcome{Status: results.StatusFailed, ServerRequests: 900}},
		{Levels: results.Levels{Page: "synthetic:1x1KB", Protocol: factor.H3}, Outcome: results.Outcome{Status: results.StatusOK, ServerRequests: 9}},
	}
	ws := analysis.Works(trials)
	if len(ws) != 1 || len(ws[0].Protocols) != 2 {
		t.Fatalf("works %+v", ws)
	}
	h2, h3 := ws[0].Protocols[0], ws[0].Protocols[1]
	if h2.Loads != 3 || h2.Requests != 202 || h3.Requests != 202 || h3.Bytes != 1_010_000 || h2.BrowserOwn != 4 || ws[0].Differs ||
		h2.Served != 404 || h3.ServedBytes != 1_010_001 {
		t.Errorf("within 2 %%: %+v", ws[0])
	}
	// What the servers answered after the load does not make different work.
	trials[0].ServerRequests, trials[1].ServerRequests = 900, 1000
	if ws = analysis.Works(trials); ws[0].Differs {
		t.Errorf("requests after the load made different work: %+v", ws[0])
	}
	trials[1].LoadRequests, trials[3].LoadRequests, trials[4].LoadRequests = 230, 220, 224
	if ws = analysis.Works(trials); !ws[0].Differs || ws[0].RequestSpread < 0.03 {
		t.Errorf("230 against 222: %+v", ws[0])
	}
	var out bytes.Buffer
	writeWork(&out, ws, analysis.Varied{})
	if !strings.Contains(out.String(), "DIFFERENT WORK (requests ±") || strings.Count(out.String(), "archive:sites/shop") != 2 {
		t.Errorf("text:\n%s", out.String())
	}
}

// resourceMap is a ResourceReader over a map of trial IDs.
type resourceMap map[string][]results.Resource

func (m resourceMap) ResourcesOf(id string) ([]results.Resource, error) { return m[id], nil }

// TestWorkDifferencesAreNamed: where protocols did different work, the
// requests most loads of some protocols started before their load event
// and most of the others' did not are named (http2.github.io's Twitter
// timeline CSS, which h2 and h3 loads started before their load event and
// h1's after it); a request every protocol started, or one only a
// minority of a protocol's loads started, is not; nor the document.
func TestWorkDifferencesAreNamed(t *testing.T) {
	css, late := "https://platform.test/timeline.css", "https://t.test/jot?x=1"
	onload := 1000.0
	var trials []results.Trial
	resources := resourceMap{}
	add := func(p factor.Protocol, urls ...string) {
		tr := replayTrial(p, 10, 1000*int64(len(urls)), 0)
		tr.ID, tr.OnLoad = fmt.Sprintf("t%d", len(trials)), &onload
		trials = append(trials, tr)
		res := []results.Resource{{URL: "https://www.test/", Navigation: true}, {URL: "https://www.test/a.js", StartMs: 10}}
		for _, u := range urls {
			res = append(res, results.Resource{URL: u, StartMs: 900})
		}
		res = append(res, results.Resource{URL: "https://www.test/after", StartMs: 1001})
		resources[tr.ID] = res
	}
	add(factor.H1)
	add(factor.H1, late)
	add(factor.H1)
	add(factor.H2, css, late)
	add(factor.H2, css)
	add(factor.H2, css, late+"&y=2")
	ws := analysis.Works(trials)
	ws[0].Differs = true
	if err := analysis.NameWorkDifferences(ws, trials, resources); err != nil {
		t.Fatal(err)
	}
	want := []analysis.WorkDifference{
		{URL: css, In: []factor.Protocol{factor.H2}, NotIn: []factor.Protocol{factor.H1}},
		{URL: "https://t.test/jot", In: []factor.Protocol{factor.H2}, NotIn: []factor.Protocol{factor.H1}},
	}
	if fmt.Sprint(ws[0].Differences) != fmt.Sprint(want) {
		t.Errorf("differences %+v, want %+v", ws[0].Differences, want)
	}
	var out bytes.Buffer
	writeWork(&out, ws, analysis.Varied{})
	if !strings.Contains(out.String(), "platform.test/timeline.css: in h2, not in h1") {
		t.Errorf("text:\n%s", out.String())
	}
}

// TestUnmatchedPerSite: a recorded page's verified loads' unmatched
// requests are listed once each with their cause and how many loads asked
// for them, the excused first, with the screen the page was replayed at;
// a failed load's are not; the requests answered with a variant are listed
// once each with what served them; unmatched.csv holds them all.
func TestUnmatchedPerSite(t *testing.T) {
	load := func(status string, urls, causes []string) results.Trial {
		tr := results.Trial{ID: "t", Levels: results.Levels{Page: "archive:sites/yelp", Protocol: "h2"}, Outcome: results.Outcome{Status: status}}
		tr.UnmatchedURLs, tr.UnmatchedCauses = urls, causes
		tr.ViewportWidth, tr.ViewportHeight, tr.ViewportScale, tr.ViewportMobile = 411, 731, 1, true
		return tr
	}
	beacon, icon, img := "GET https://www.yelp.test/beacon", "GET https://www.yelp.test/favicon.ico", "GET https://s.yelp.test/img/r@2x.png"
	nav := "GET https://www.yelp.test/webhp?rct=j"
	trials := []results.Trial{
		load(results.StatusOK, []string{icon, beacon, nav}, []string{results.CauseBrowserOwn, results.CauseUnrecorded, results.CauseNavigation}),
		load(results.StatusOK, []string{icon, beacon, img, beacon}, []string{results.CauseBrowserOwn, results.CauseSteady, results.CauseSibling, results.CauseSteady}),
		load(results.StatusOK, nil, nil),
		load(results.StatusFailed, []string{"GET https://x.test/y"}, []string{results.CauseUnrecorded}),
	}
	variant := "GET https://s.yelp.test/img/r@1x.png /img/r@2x.png"
	trials[1].VariantURLs = results.Strings{variant, variant}
	trials[2].VariantURLs = results.Strings{variant}
	gone := "https://s.yelp.test/img/gone.png"
	trials[0].BrokenImageURLs, trials[0].BrokenImageCauses = results.Strings{gone, gone}, results.Strings{results.BrokenUnrecorded, results.BrokenUnrecorded}
	trials[2].BrokenImageURLs, trials[2].BrokenImageCauses = results.Strings{gone}, results.Strings{results.BrokenUnrecorded}
	trials[3].BrokenImageURLs, trials[3].BrokenImageCauses = results.Strings{"https://x.test/b.png"}, results.Strings{results.BrokenHeld}
	sites := analysis.Unmatched(trials)
	if len(sites) == 1 && (len(sites[0].Broken) != 1 || sites[0].Broken[0] != (analysis.BrokenImage{URL: gone, Cause: results.BrokenUnrecorded, Loads: 2})) {
		t.Errorf("broken images %+v, want gone.png once per load in 2 loads, the failed load's left out", sites[0].Broken)
	}
	if len(sites) != 1 || sites[0].Loads != 3 || len(sites[0].Variants) != 1 || sites[0].Variants[0].Loads != 2 || sites[0].Screen != "411x731@1,mobile" || len(sites[0].URLs) != 5 ||
		sites[0].ByCause[results.CauseSteady] != 1 || sites[0].ByCause[results.CauseUnrecorded] != 1 {
		t.Fatalf("sites %+v", sites)
	}
	var out bytes.Buffer
	writeUnmatched(&out, sites)
	for _, want := range []string{"archive:sites/yelp at 411x731@1,mobile, 3 loads: browser's own 1, held navigation 1, steady 1, sibling 1, unrecorded 1; variants 1",
		"GET s.yelp.test/img/r@1x.png (variant: served /img/r@2x.png, 2 loads)",
		"GET www.yelp.test/webhp?rct=j (held navigation, 1 loads)",
		"GET www.yelp.test/favicon.ico (browser's own, 2 loads)", "GET s.yelp.test/img/r@2x.png (sibling, 1 loads)", "GET www.yelp.test/beacon (steady, 1 loads)",
		"image s.yelp.test/img/gone.png (broken: unrecorded, 2 loads)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "x.test") {
		t.Error("a failed load's unmatched request was listed")
	}
	var compared bytes.Buffer
	WriteBroken(&compared, sites)
	if !strings.HasPrefix(compared.String(), "Broken images in the verified loads of archive:sites/yelp (3 loads):\n  image s.yelp.test/img/gone.png (broken: unrecorded, 2 loads)\n") {
		t.Errorf("compare's broken images:\n%s", compared.String())
	}
	if w := brokenWords(&analysis.Analysis{Unmatched: sites}, "archive:sites/yelp"); w != "Its verified loads showed 1 distinct broken images (1 unrecorded), listed with the replay below." {
		t.Errorf("answer's words: %q", w)
	}
	if rows := unmatchedTable(&analysis.Analysis{Unmatched: sites}); len(rows) != 8 || rows[1][5] != "true" || rows[2][4] != results.CauseNavigation || rows[2][5] != "true" ||
		rows[6][4] != "variant" || rows[6][7] != "/img/r@2x.png" || rows[7][4] != "broken image: unrecorded" || rows[7][5] != "true" {
		t.Errorf("unmatched.csv rows %q", rows)
	}
}
