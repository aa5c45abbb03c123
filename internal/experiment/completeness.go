package experiment

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/origin"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/site"
)

// replayCheck judges how completely a page's loads replay its site, the
// second verdict beside the protocol's. A generated page has everything
// it asks for: one unmatched request fails its load. A recording of a
// live site lacks some of what a load asks for (a beacon's time stamp, a
// manifest, an ad); its load fails only when the unmatched requests that
// count exceed MaxUnmatched of its requests. Not counted are those the
// browser makes on its own (favicon, icons, manifest) and those the
// recording lacks, as an earlier load of the testbed found: beacons put
// time stamps and counters into their paths, so requests are grouped by
// method, host and directory, and a group unmatched in an earlier load is
// steady. A request the recording holds a sibling of (site.Matcher's
// HasSibling: the same file at another size or transform) is never
// excused: the recording could have answered it, and an image among those
// is served its variant. A load that did not ask for a group (a frame that rendered
// after the load was read) does not make the recording lack it less: a
// page recorded on a 2× display asked for its 2× images, and the 1×
// images a load here asks for are missing whenever it asks. The first
// measured load of a testbed has earlier loads too: a recorded page's
// testbed starts with an unmeasured priming load (prime). The tab's
// navigation away from the page to a URL the recording lacks is held by
// the browser and the tab stays (client.Request.Documents): the page loads
// as it was recorded, and the held navigation is not counted.
type replayCheck struct {
	page    *site.Site
	matcher *site.Matcher
	// strict fails a load on any unmatched request (generated pages).
	strict bool
	// maxUnmatched is the fraction of a load's requests that may count
	// as unmatched.
	maxUnmatched float64
	// own are the page's browser-own URLs, without query.
	own map[string]bool
	// steady are the groups (steadyKey) unmatched in a load so far; nil
	// before the first.
	steady map[string]bool
	// primed says the priming load ran (or was tried).
	primed bool
	// documents are where a recorded page's tab may go (site.Site.Documents;
	// nil for a generated page, whose loads hold nothing).
	documents []string
	// images caches imageFault's verdicts by URL: Verify and judge ask
	// for the same broken images, and the site does not change.
	images map[string]imageVerdict
}

// imageVerdict is imageFault's answer for one URL.
type imageVerdict struct{ recorded, served bool }

// newReplayCheck is the check of page's loads.
func newReplayCheck(page *site.Site, maxUnmatched float64) *replayCheck {
	c := &replayCheck{page: page, matcher: site.NewMatcher(page), strict: !page.Recorded, maxUnmatched: maxUnmatched,
		own: map[string]bool{}, images: map[string]imageVerdict{}}
	for _, u := range page.BrowserOwn() {
		c.own[u] = true
	}
	if page.Recorded {
		c.documents = page.Documents()
	}
	return c
}

// completeness is a load's replay beyond what the servers counted.
type completeness struct {
	// BrowserOwn, Held (the tab's navigations away, held) and
	// Steady are the unmatched requests not counted; Counted the rest,
	// among them Sibling, those the recording holds a sibling of.
	BrowserOwn, Held, Steady, Sibling, Counted int64
	// firstCounted is the first unmatched request that counts, the
	// example a failure names.
	firstCounted string
	// Causes are the cause of each listed unmatched request
	// (server.Replay.UnmatchedRequests), in its order: results.Cause*.
	Causes []string
	// BrokenRecorded are broken images the recording holds no image for;
	// BrokenUnserved broken images it lacks (or whose host it lacks).
	BrokenRecorded, BrokenUnserved int64
	// BrokenURLs are the broken images (client.PageMetrics.BrokenImageURLs)
	// and BrokenCauses each one's cause (results.Broken*).
	BrokenURLs, BrokenCauses []string
	// LoadRequests and LoadBytes are the page's work up to its load
	// event (loadWork).
	LoadRequests, LoadBytes int64
	// LiveExcluded are a live load's requests its verification left out
	// (liveState.judge).
	LiveExcluded int64
}

// judge classifies load m's unmatched requests and broken images, fails
// it (when it has not failed already) beyond the tolerance, and remembers
// its unmatched requests for the next loads.
func (c *replayCheck) judge(m *Measured) completeness {
	var out completeness
	out.LoadRequests, out.LoadBytes = c.loadWork(m.Result)
	groups := c.groups(m.Replay, &out)
	out.Counted = m.Replay.Unmatched - out.BrowserOwn - out.Held - out.Steady
	c.remember(groups)
	for _, u := range m.BrokenImageURLs {
		cause := results.BrokenHeld
		if recorded, served := c.imageFault(u); recorded {
			out.BrokenRecorded++
			cause = results.BrokenNoImage
		} else if !served {
			out.BrokenUnserved++
			cause = results.BrokenUnrecorded
		}
		out.BrokenURLs, out.BrokenCauses = append(out.BrokenURLs, u), append(out.BrokenCauses, cause)
	}
	if m.OK() {
		m.Failure = c.failure(m.Replay, out)
	}
	return out
}

// loadWork counts the Resource Timing entries of r started by its load
// event (loadEventStart), leaving out the browser's own requests (a
// manifest the browser fetches by itself shows up in Resource Timing in
// some loads and not in others), and their bytes: for a recorded page the
// body bytes the servers send for each (servedBodyBytes), the same in
// every browser; else their transfer bytes as the browser gives them (0
// for a cross-origin response without Timing-Allow-Origin).
func (c *replayCheck) loadWork(r client.Result) (requests, bytes int64) {
	recorded := c.page != nil && c.page.Recorded
	for _, res := range r.Resources {
		if r.OnLoadMs > 0 && res.StartMs <= r.OnLoadMs && !c.own[withoutQuery(res.URL)] {
			requests++
			if recorded {
				bytes += c.servedBodyBytes(res.URL)
			} else {
				bytes += res.TransferBytes
			}
		}
	}
	return requests, bytes
}

// servedBodyBytes is the body the servers send for a GET of raw: the
// recorded response the servers' matching (exact, fuzzy or variant)
// answers it with, as it goes on the wire; 0 for a request they answer
// with 404, and for a bodiless status.
func (c *replayCheck) servedBodyBytes(raw string) int64 {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" {
		return 0
	}
	r, kind := c.matcher.Match(u.Hostname(), "GET", u.EscapedPath(), u.RawQuery)
	if kind == site.Unmatched || !origin.BodyAllowed(r.StatusCode()) {
		return 0
	}
	return int64(len(r.Body))
}

// failure is why a load with replay r and completeness out fails, or "".
func (c *replayCheck) failure(r server.Replay, out completeness) string {
	if r.Unmatched == 0 {
		return ""
	}
	example := out.firstCounted
	if example == "" && len(r.UnmatchedRequests) > 0 {
		example = r.UnmatchedRequests[0]
	}
	if c.strict {
		return fmt.Sprintf("%d requests matched nothing in the site (served 404), e.g. %.200s", r.Unmatched, example)
	}
	allowed := c.maxUnmatched * float64(r.Requests())
	if float64(out.Counted) <= allowed {
		return ""
	}
	return fmt.Sprintf("%d of %d requests matched nothing in the recording (%.1f %%, above the %g %% allowed: --max-unmatched or a spec's replay: {max_unmatched: N%%} allows more), e.g. %.200s",
		out.Counted, r.Requests(), 100*float64(out.Counted)/float64(r.Requests()), 100*c.maxUnmatched, example)
}

// remember adds the groups unmatched in this load to the steady ones.
func (c *replayCheck) remember(groups map[string]bool) {
	if c.steady == nil {
		c.steady = map[string]bool{}
	}
	for k := range groups {
		c.steady[k] = true
	}
}

// needsPriming says whether the next load should follow an unmeasured one
// that shows what the recording lacks: a recorded page before its first
// load.
func (c *replayCheck) needsPriming() bool { return !c.strict && !c.primed && c.steady == nil }

// learn takes what the unmeasured priming load lacked, without judging
// it; nil for a priming load that failed.
func (c *replayCheck) learn(m *Measured) {
	c.primed = true
	if m != nil {
		c.remember(c.groups(m.Replay, &completeness{}))
	}
}

// groups are the groups (steadyKey) of r's unmatched requests but the
// browser's own and the held navigations; out counts those and the steady
// ones.
func (c *replayCheck) groups(r server.Replay, out *completeness) map[string]bool {
	groups := map[string]bool{}
	held := map[string]int{}
	for _, req := range r.HeldNavigations {
		held[req]++
	}
	for _, req := range r.UnmatchedRequests {
		bare := withoutQuery(req)
		method, u, _ := strings.Cut(bare, " ")
		if c.own[u] {
			out.BrowserOwn++
			out.Causes = append(out.Causes, results.CauseBrowserOwn)
			continue
		}
		if held[req] > 0 {
			held[req]--
			out.Held++
			out.Causes = append(out.Causes, results.CauseNavigation)
			continue
		}
		if c.hasSibling(method, u) {
			out.Sibling++
			out.noteCounted(req)
			out.Causes = append(out.Causes, results.CauseSibling)
			continue
		}
		key := steadyKey(bare)
		if groups[key] = true; c.steady[key] {
			out.Steady++
			out.Causes = append(out.Causes, results.CauseSteady)
		} else {
			out.noteCounted(req)
			out.Causes = append(out.Causes, results.CauseUnrecorded)
		}
	}
	return groups
}

// noteCounted keeps req as the example of what counts, if none is kept.
func (out *completeness) noteCounted(req string) {
	if out.firstCounted == "" {
		out.firstCounted = req
	}
}

// hasSibling says whether the recording holds a sibling of a request for
// raw with method: the same file at another size (site.Matcher.HasSibling)
// or at another pixel density (HasDensitySibling).
func (c *replayCheck) hasSibling(method, raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" {
		return false
	}
	return c.matcher.HasSibling(u.Hostname(), method, u.EscapedPath()) || c.matcher.HasDensitySibling(u.Hostname(), method, u.EscapedPath())
}

// steadyKey groups an unmatched request ("METHOD URL", without query) by
// its method, host and the directory of its path: "GET https://host/a/b/".
func steadyKey(key string) string {
	if i := strings.LastIndexByte(key, '/'); i > strings.Index(key, "://")+2 {
		return key[:i+1]
	}
	return key
}

// imageFault says, of a broken image's URL, whether the recording holds a
// response for it that is no image (recorded: the recording is at fault)
// and whether the testbed serves it at all (served: the site has its host
// and a match).
func (c *replayCheck) imageFault(raw string) (recorded, served bool) {
	v, ok := c.images[raw]
	if !ok {
		v.recorded, v.served = c.judgeImage(raw)
		c.images[raw] = v
	}
	return v.recorded, v.served
}

// judgeImage is imageFault without the cache.
func (c *replayCheck) judgeImage(raw string) (recorded, served bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" {
		return false, false
	}
	r, kind := c.matcher.Match(u.Hostname(), "GET", u.EscapedPath(), u.RawQuery)
	if kind == site.Unmatched {
		return false, false
	}
	return !site.ImageOK(r), true
}

// excuseImage says whether a broken image of raw is the recording's fault:
// the recording lacks it or holds no image for it. Never for a generated
// page, and never for an image it holds and the load broke.
func (c *replayCheck) excuseImage(raw string) bool {
	if c.strict {
		return false
	}
	recorded, served := c.imageFault(raw)
	return recorded || !served
}

// withoutQuery is a URL, or "METHOD URL", without the query and fragment.
func withoutQuery(req string) string {
	req, _, _ = strings.Cut(req, "?")
	req, _, _ = strings.Cut(req, "#")
	return req
}
