package client

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The scripts a browser runs in the page, the same in every browser: they
// use only the page's own performance APIs.

// MetricsJS reads the page's metrics once the load event has ended, or
// returns null before that.
const MetricsJS = `(() => {
  const nav = performance.getEntriesByType('navigation')[0];
  if (!nav || nav.loadEventEnd === 0) return null;
  const timing = r => ({
    url: r.name, protocol: r.nextHopProtocol, start_ms: r.startTime,
    response_end_ms: r.responseEnd, transfer_bytes: r.transferSize, status: r.responseStatus || 0,
    dns_start_ms: r.domainLookupStart, connect_start_ms: r.connectStart, connect_end_ms: r.connectEnd,
    tls_start_ms: r.secureConnectionStart, request_start_ms: r.requestStart, response_start_ms: r.responseStart});
  const imgs = Array.from(document.images);
  const broken = imgs.filter(i => i.complete && (i.currentSrc || i.getAttribute('src')) && i.naturalWidth === 0);
  return {
    document_url: nav.name,
    document_protocol: nav.nextHopProtocol,
    document_status: nav.responseStatus || 0,
    document_transfer_bytes: nav.transferSize,
    ttfb_ms: nav.responseStart,
    request_start_ms: nav.requestStart,
    dcl_ms: nav.domContentLoadedEventStart,
    onload_ms: nav.loadEventStart,
    plt_ms: nav.loadEventEnd,
    resources: performance.getEntriesByType('resource').map(timing),
    document: timing(nav),
    fcp_ms: (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime || 0,
    lcp_ms: window.__quicbenchLCP || 0,
    images: imgs.length,
    broken_images: broken.length,
    broken_image_urls: broken.slice(0, 200).map(i => i.currentSrc || i.src),
    held_navigations: window.__quicbenchHeld || [],
  };
})()`

// SetupJS lifts the Resource Timing buffer from 250 entries, so that pages
// with more objects are measured completely, and keeps the time of the
// latest Largest Contentful Paint candidate (the browser reports LCP only
// to observers).
const SetupJS = `performance.setResourceTimingBufferSize(100000);
window.__quicbenchLCP = 0;
try {
  new PerformanceObserver(list => {
    for (const e of list.getEntries()) window.__quicbenchLCP = e.startTime;
  }).observe({type: 'largest-contentful-paint', buffered: true});
} catch (e) {}`

// HoldJS is the script that holds the tab on its page: a navigation of
// the top-level document to another document, made by the page, whose
// URL without query is none of documents is cancelled before it starts
// (the Navigation API's navigate event, where the browser has it) and
// listed in window.__quicbenchHeld as "METHOD URL" (the first
// MaxBrokenListed). A navigation cancelled only when its response comes
// (a 204) would not do: the browser stops the page's loading when a
// navigation starts, and its load event never fires.
func HoldJS(documents []string) string {
	list, _ := json.Marshal(documents) // strings always marshal
	return fmt.Sprintf(holdTemplate, list, MaxBrokenListed)
}

// holdTemplate is HoldJS with its documents (a JSON array) and its
// listing bound to fill.
const holdTemplate = `if (window.top === window && window.navigation) {
  const documents = new Set(%s);
  window.__quicbenchHeld = [];
  navigation.addEventListener('navigate', e => {
    const to = new URL(e.destination.url);
    if (e.destination.sameDocument || e.navigationType === 'traverse' || !e.cancelable ||
        !/^https?:$/.test(to.protocol) || documents.has(to.origin + to.pathname)) return;
    e.preventDefault();
    to.hash = '';
    if (window.__quicbenchHeld.length < %d) window.__quicbenchHeld.push((e.formData ? 'POST ' : 'GET ') + to.href);
  });
}`

// PaintJS reads First Contentful Paint and the latest Largest Contentful
// Paint candidate.
const PaintJS = `[(performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime || 0, window.__quicbenchLCP || 0]`

// Pause waits for d, or until ctx is done and then returns its error.
func Pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// DefaultClockStartMs is where a deterministic page's clock starts when
// the recording does not say when it was made: 1,700,000,000,000 ms since
// 1970 (2023-11-14 22:13:20 UTC).
const DefaultClockStartMs = 1_700_000_000_000

// DeterministicJS is the script that runs before a page's own scripts
// when its loads are deterministic, as WebPageReplay's deterministic.js
// does: Math.random becomes a generator with a fixed seed, and the clock
// (Date.now, new Date()) starts at start (zero: DefaultClockStartMs) and
// advances by 1 ms on each reading, so that scripts that put the time or
// random numbers into URLs request the same URLs on every load, near those
// recorded. performance.now() is left alone: the page's metrics depend on
// it.
func DeterministicJS(start time.Time) string {
	ms := int64(DefaultClockStartMs)
	if !start.IsZero() {
		ms = start.UnixMilli()
	}
	return strings.Replace(deterministicTemplate, "CLOCK_START_MS", strconv.FormatInt(ms, 10), 1)
}

// deterministicTemplate is DeterministicJS with its clock's start to fill
// in.
const deterministicTemplate = `(() => {
  let seed = 0x2545f491;
  Math.random = function () {
    seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5;
    return (seed >>> 0) / 4294967296;
  };
  const RealDate = Date;
  let now = CLOCK_START_MS;
  const tick = () => now++;
  function FixedDate(...args) {
    if (!new.target) return new RealDate(tick()).toString();
    return args.length ? new RealDate(...args) : new RealDate(tick());
  }
  FixedDate.prototype = RealDate.prototype;
  FixedDate.now = tick;
  FixedDate.parse = RealDate.parse;
  FixedDate.UTC = RealDate.UTC;
  Date = FixedDate;
})();`
