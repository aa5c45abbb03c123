package experiment

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/har"
	"github.com/quicbench/quicbench/internal/report"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/site/gen"
	"github.com/quicbench/quicbench/internal/spec"
	"github.com/quicbench/quicbench/internal/testenv"
)

func runSpec(t *testing.T, text string) (*RunResult, *results.Store, string) {
	t.Helper()
	s, err := spec.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	res, err := Run(context.Background(), RunConfig{Spec: s, Dir: dir, Facts: map[string]string{"quicbench_version": "test"}})
	if err != nil {
		t.Fatal(err)
	}
	store, err := results.Open(filepath.Join(dir, results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return res, store, dir
}

// TestRunWithTheLoader runs a small spec with the built-in loader: every
// trial is recorded with its HAR and the run's facts, repeat visits over
// h3 use 0-RTT.
func TestRunWithTheLoader(t *testing.T) {
	testenv.RequireRoot(t)
	res, store, dir := runSpec(t, `name: loader-run
seed: 2
repetitions: 2
client: loader
netcheck: false
artifacts: {har: true}
factors:
  networks: [{name: near, rtt: 10ms}]
  pages: [synthetic:4x20KB]
  protocols: [h2, h3]
  visits: [first, repeat]
`)
	if res.Total != 8 || res.Done != 8 || res.Ran != 8 || res.Failed != 0 {
		t.Fatalf("result %+v", res)
	}
	store.EachTrial(func(tr results.Trial) error {
		if tr.Status != results.StatusOK {
			t.Errorf("%s %s: %s", tr.Protocol, tr.Visit, tr.Error)
			return nil
		}
		if tr.Protocol == "h3" && tr.Visit == "repeat" && tr.Handshakes != "0rtt:1" {
			t.Errorf("h3 repeat visit handshakes %q, want 0rtt:1", tr.Handshakes)
		}
		h, err := har.ReadFile(filepath.Join(dir, tr.Artifacts))
		if err != nil || len(h.Log.Entries) != 5 {
			t.Errorf("trial %s: HAR %s: %v", tr.ID, tr.Artifacts, err)
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(dir, "spec.yaml")); err != nil {
		t.Error(err)
	}
	if v, _ := store.Meta("quicbench_version"); v != "test" {
		t.Errorf("facts not stored: %q", v)
	}
}

// TestFailedTrialsAreRetriedAndKept: on a link too slow for the timeout,
// each attempt fails, and the trial is recorded as failed with its
// attempts, never dropped.
func TestFailedTrialsAreRetriedAndKept(t *testing.T) {
	testenv.RequireRoot(t)
	const text = `repetitions: 1
retries: 2
client: loader
timeout: 500ms
netcheck: false
factors:
  networks: [{name: slow, rtt: 10ms, down: 1mbit, up: 1mbit}]
  pages: [synthetic:4x2MB]
  protocols: [h3]
`
	res, store, dir := runSpec(t, text)
	if res.Done != 1 || res.Failed != 1 {
		t.Fatalf("result %+v", res)
	}
	store.EachTrial(func(tr results.Trial) error {
		// 8 MB at 1 Mbit/s takes 64 s: every attempt times out, and what
		// an attempt left in the link drains in well under a second.
		if tr.Status != results.StatusFailed || tr.Attempts != 3 || !strings.Contains(tr.Error, "timed out") || tr.PLT != nil {
			t.Errorf("status %s after %d attempts: %q", tr.Status, tr.Attempts, tr.Error)
		}
		return nil
	})

	// A plain resume has nothing to do; --retry-failed runs the failed
	// trial again, its new attempts numbered after the kept ones.
	s, _ := spec.Parse([]byte(text))
	again, err := Run(context.Background(), RunConfig{Spec: s, Dir: dir, Resume: true})
	if err != nil || again.Ran != 0 {
		t.Fatalf("plain resume: ran %+v, %v; want nothing to do", again, err)
	}
	again, err = Run(context.Background(), RunConfig{Spec: s, Dir: dir, Resume: true, RetryFailed: true})
	if err != nil || again.Ran != 1 || again.Done != 1 || again.Failed != 1 {
		t.Fatalf("resume --retry-failed: %+v, %v; want the failed trial run once more", again, err)
	}
	store.EachTrial(func(tr results.Trial) error {
		if tr.Attempts != 6 {
			t.Errorf("after the retry the trial counts %d attempts, want 6", tr.Attempts)
		}
		return nil
	})
}

// TestATrialThatCanOnlyFailIsNotRetried: forced h3 over a network that
// blocks UDP fails once and is recorded with its one attempt, naming the
// blocked UDP; h2 beside it loads.
func TestATrialThatCanOnlyFailIsNotRetried(t *testing.T) {
	testenv.RequireRoot(t)
	res, store, _ := runSpec(t, `repetitions: 1
retries: 2
client: loader
timeout: 2s
netcheck: false
factors:
  networks: [{name: noudp, rtt: 10ms, udp: block}]
  pages: [synthetic:2x1KB]
  protocols: [h2, h3]
`)
	if res.Done != 2 || res.Failed != 1 {
		t.Fatalf("result %+v, want 2 trials, 1 failed", res)
	}
	store.EachTrial(func(tr results.Trial) error {
		switch {
		case tr.Protocol == "h2" && (tr.Status != results.StatusOK || tr.Attempts != 1):
			t.Errorf("h2: %s after %d attempts: %q", tr.Status, tr.Attempts, tr.Error)
		case tr.Protocol == "h3" && (tr.Status != results.StatusFailed || tr.Attempts != 1 || !strings.Contains(tr.Error, "UDP packets")):
			t.Errorf("h3: %s after %d attempts: %q; want 1 failed attempt that names the blocked UDP", tr.Status, tr.Attempts, tr.Error)
		}
		return nil
	})
}

// TestChromiumHAR runs Chromium trials with the HAR artifact: each HAR has
// the document and every object with their protocol and timings, and its
// page timings are the trial's.
func TestChromiumHAR(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, "/usr/lib/chromium/chromium", "apt-get install chromium")
	_, store, dir := runSpec(t, `repetitions: 1
netcheck: false
artifacts: {har: true}
factors:
  networks: [{rtt: 20ms}]
  pages: [synthetic:6x5KB]
  protocols: [h2, h3]
  visits: [first, repeat]
`)
	n := 0
	store.EachTrial(func(tr results.Trial) error {
		n++
		if tr.Status != results.StatusOK {
			t.Errorf("%s %s: %s", tr.Protocol, tr.Visit, tr.Error)
			return nil
		}
		h, err := har.ReadFile(filepath.Join(dir, tr.Artifacts))
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Log.Entries) != 7 || len(h.Log.Pages) != 1 || h.Log.Pages[0].PageTimings.OnLoad != *tr.OnLoad {
			t.Errorf("%s %s: %d entries, page timings %+v, onload %v", tr.Protocol, tr.Visit, len(h.Log.Entries), h.Log.Pages, *tr.OnLoad)
		}
		for _, e := range h.Log.Entries {
			if e.Response.Status != 200 || e.Response.HTTPVersion != string(tr.Protocol) || e.Timings.Wait < 0 || e.Timings.Receive < 0 || e.Time <= 0 {
				t.Errorf("%s %s: entry %s: status %d over %q, timings %+v", tr.Protocol, tr.Visit, e.Request.URL, e.Response.Status, e.Response.HTTPVersion, e.Timings)
			}
		}
		// A first visit connects: the document's entry has connect time.
		if tr.Visit == "first" && h.Log.Entries[0].Timings.Connect <= 0 {
			t.Errorf("%s first visit: the document's connect time is %v", tr.Protocol, h.Log.Entries[0].Timings.Connect)
		}
		return nil
	})
	if n != 4 {
		t.Errorf("%d trials", n)
	}
}

// TestBuiltInLoader loads a two-origin page with the built-in loader over
// each protocol behind a 20 ms link, as repeat visits: every load verifies
// on both sides, h3 comes back with 0-RTT, and HTTP/1.1 opens at most 6
// connections per origin, h2 and h3 one.
func TestBuiltInLoader(t *testing.T) {
	testenv.RequireRoot(t)
	_, store, _ := runSpec(t, `seed: 4
repetitions: 1
client: loader
netcheck: false
factors:
  networks: [{rtt: 20ms}]
  pages: [synthetic:20x5KB]
  origins: [2]
  visits: [repeat]
`)
	for _, tr := range trialsOf(t, store) {
		if tr.Status != results.StatusOK || len(tr.resources) != 20 || *tr.PLT < 20 || tr.ServerRequests != 21 || tr.Client != "loader" {
			t.Errorf("%s: %s %q, %d resources, PLT %v, %d server requests", tr.Protocol, tr.Status, tr.Error, len(tr.resources), tr.PLT, tr.ServerRequests)
			continue
		}
		perOrigin := map[string]int{}
		for _, c := range tr.conns {
			perOrigin[c.ServerName]++
			if tr.Protocol == "h3" && c.Requests > 0 && c.Handshake != server.Handshake0RTT {
				t.Errorf("h3 repeat visit: handshake %q, want 0rtt", c.Handshake)
			}
		}
		for host, n := range perOrigin {
			if (tr.Protocol == "h1" && n > 6) || (tr.Protocol != "h1" && n != 1) {
				t.Errorf("%s: %d connections to %s", tr.Protocol, n, host)
			}
		}
	}
}

// TestVisualTrials runs visual off and on: the visual trial has its
// metrics, viewport and frames (files ms_NNNNNN.jpg, as many as it
// counts), the other none of them but FCP.
func TestVisualTrials(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, "/usr/lib/chromium/chromium", "apt-get install chromium")
	_, store, dir := runSpec(t, `repetitions: 1
netcheck: false
factors:
  networks: [{rtt: 20ms}]
  pages: [synthetic:12x5KB]
  protocols: h2
  visual: [off, on]
`)
	seen := map[bool]bool{}
	store.EachTrial(func(tr results.Trial) error {
		seen[tr.Visual] = true
		if tr.Status != results.StatusOK || tr.FCP == nil || tr.ViewportWidth != 1366 {
			t.Errorf("visual %v: %s, FCP %v, viewport %d", tr.Visual, tr.Error, tr.FCP, tr.ViewportWidth)
			return nil
		}
		if !tr.Visual {
			if tr.SpeedIndex != nil || tr.Frames != 0 || tr.Artifacts != "" {
				t.Errorf("a timing trial has Speed Index %v, %d frames, artifacts %q", tr.SpeedIndex, tr.Frames, tr.Artifacts)
			}
			return nil
		}
		if tr.SpeedIndex == nil || tr.FVC == nil || tr.LVC == nil || tr.VC85 == nil || *tr.FVC > *tr.SpeedIndex || *tr.SpeedIndex > *tr.LVC {
			t.Errorf("visual metrics FVC %v, SI %v, LVC %v, VC85 %v", tr.FVC, tr.SpeedIndex, tr.LVC, tr.VC85)
		}
		files, err := filepath.Glob(filepath.Join(dir, tr.Artifacts, "ms_*.jpg"))
		if err != nil || len(files) == 0 || int64(len(files)) > tr.Frames || !strings.HasSuffix(tr.Artifacts, "-frames") {
			t.Errorf("artifacts %q hold %d frames, the trial counts %d", tr.Artifacts, len(files), tr.Frames)
		}
		return nil
	})
	if !seen[true] || !seen[false] {
		t.Errorf("trials seen by visual: %v", seen)
	}
}

// TestLoaderOnAGeneratedPage: the built-in loader loads what needs no
// JavaScript of a web2024 page (style sheets, fonts and backgrounds from
// them, images, scripts, iframes), verified, and counts what it skipped.
func TestLoaderOnAGeneratedPage(t *testing.T) {
	testenv.RequireRoot(t)
	_, store, _ := runSpec(t, `repetitions: 1
netcheck: false
client: loader
factors:
  networks: [{rtt: 10ms}]
  pages: [web2024:9]
  protocols: [h2, h3]
`)
	page, err := gen.Web2024(factor.Page{Kind: factor.PageWeb2024, Number: 9, CorpusSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	store.EachTrial(func(tr results.Trial) error {
		n++
		if tr.Status != results.StatusOK {
			t.Errorf("%s: %s", tr.Protocol, tr.Error)
		}
		skipped := int64(len(page.Scripted) + len(page.Late))
		if tr.SkippedRequests != skipped || skipped == 0 || tr.ServerRequests != int64(1+len(page.WithoutScripts())) {
			t.Errorf("%s: %d requests served, %d skipped; the page has %d without scripts and %d with", tr.Protocol, tr.ServerRequests, tr.SkippedRequests, len(page.WithoutScripts()), skipped)
		}
		return nil
	})
	if n != 2 {
		t.Errorf("%d trials", n)
	}
}

// TestPairedTrials: with pairing, the loads of one repetition start from
// the same link seeds, recorded with the trial, and repetitions differ.
func TestPairedTrials(t *testing.T) {
	testenv.RequireRoot(t)
	res, store, _ := runSpec(t, `seed: 3
repetitions: 2
client: loader
netcheck: false
pairing: true
factors:
  networks: [{name: lossy, rtt: 10ms, loss: 1}]
  pages: [synthetic:4x20KB]
  protocols: [h2, h3]
`)
	if res.Done != 4 || res.Failed != 0 {
		t.Fatalf("result %+v", res)
	}
	seeds := map[int64]map[[2]int64]bool{}
	store.EachTrial(func(tr results.Trial) error {
		if !tr.Paired {
			t.Errorf("%s: not recorded as paired", tr.ID)
		}
		if seeds[tr.Rep] == nil {
			seeds[tr.Rep] = map[[2]int64]bool{}
		}
		seeds[tr.Rep][[2]int64{tr.UpSeed, tr.DownSeed}] = true
		return nil
	})
	if len(seeds[1]) != 1 || len(seeds[2]) != 1 || maps.Equal(seeds[1], seeds[2]) {
		t.Errorf("seeds per repetition %v: want one per repetition, different between them", seeds)
	}
}

// TestRepetitionsUntil: with an until rule a setting stops once its answer
// is known; the left-out trials are counted, a resume leaves them out too
// without building a testbed, and the report replays where and why each
// setting stopped.
func TestRepetitionsUntil(t *testing.T) {
	testenv.RequireRoot(t)
	text := `seed: 4
repetitions: {min: 3, max: 12, until: {ci_ratio: 0.25}}
client: loader
netcheck: false
factors:
  networks: [{name: near, rtt: 10ms}]
  pages: [synthetic:4x20KB]
  protocols: [h2, h3]
`
	res, store, dir := runSpec(t, text)
	if res.Skipped == 0 || res.Done+res.Skipped != res.Total || res.Total != 24 {
		t.Fatalf("result %+v: want trials left out, and recorded + left out = 24", res)
	}
	last := 0
	store.EachTrial(func(tr results.Trial) error { last = max(last, int(tr.Rep)); return nil })
	rep, err := report.Build(context.Background(), store, "", analysis.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := rep.Analysis.Comparisons[0].Stopping
	if st == nil || st.Rep != last || st.Rep < 3 || st.Look.Reason == "" {
		t.Fatalf("report's stopping %+v, the run's last repetition %d", st, last)
	}
	store.Close()
	s, _ := spec.Parse([]byte(text))
	again, err := Run(context.Background(), RunConfig{Spec: s, Dir: dir, Resume: true})
	if err != nil || again.Ran != 0 || again.Skipped != res.Skipped {
		t.Errorf("resume: %+v, %v: want nothing run and %d left out", again, err, res.Skipped)
	}
}
