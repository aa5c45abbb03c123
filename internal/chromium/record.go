package chromium

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/site/imports"
)

// RecordRequest is a page to record.
type RecordRequest struct {
	URL string // the page, an https URL
	// Addrs and SPKIHash map host names to addresses and accept a
	// certificate, as for Load; empty for the real network.
	Addrs    map[string]netip.Addr
	SPKIHash string
	// Settle is how long recording goes on after the load event, for
	// what scripts fetch late. Zero: DefaultSettle.
	Settle time.Duration
}

// DefaultSettle is how long a recording waits after the load event.
const DefaultSettle = 2 * time.Second

// Record loads req.URL in a fresh browser and keeps every response it
// received, with its status, header fields and body, as a site archive.
// It intercepts each response (DevTools Fetch domain, response stage) and
// takes its body before the page sees it. Chromium hands over bodies
// decoded: one whose Content-Encoding is gzip, deflate or br is compressed
// again so that it goes on the wire coded as recorded (imports.Report
// counts those), others are kept decoded without the field.
func (c *Chromium) Record(ctx context.Context, req RecordRequest) (*site.Archive, imports.Report, error) {
	timeout := c.Timeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	loadCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	flags := recordFlags(req)
	if c.RunAs != nil {
		flags = append(flags, chromedp.Flag("no-sandbox", false))
	}
	b, err := c.startBrowser(loadCtx, flags, netip.Addr{})
	if err != nil {
		return nil, imports.Report{}, err
	}
	defer b.Close()
	rec := &responseRecorder{ctx: b.ctx}
	if err := chromedp.Listen(b.ctx, rec.event); err != nil || *b.wrapErr != nil {
		return nil, imports.Report{}, fmt.Errorf("record %s: browser start: %v", req.URL, firstError(err, *b.wrapErr))
	}
	if _, err := chromedp.Call(b.ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*", RequestStage: fetch.RequestStageResponse}}}); err != nil {
		return nil, imports.Report{}, fmt.Errorf("record %s: Fetch.enable: %w", req.URL, err)
	}
	if _, failure := client.Navigate(loadCtx, &tab{ctx: b.ctx}, req.URL, timeout); failure != "" {
		return nil, imports.Report{}, fmt.Errorf("record %s: %s", req.URL, failure)
	}
	settle := req.Settle
	if settle == 0 {
		settle = DefaultSettle
	}
	if err := client.Pause(loadCtx, settle); err != nil {
		return nil, imports.Report{}, fmt.Errorf("record %s: %w", req.URL, err)
	}
	return rec.archive(req.URL)
}

// recordFlags are the browser's flags for a recording: the usual ones
// without forcing a protocol, cross-site frames in the page's process so
// that the page's Fetch domain sees their requests too, and the testbed's
// mapping if given.
func recordFlags(req RecordRequest) []chromedp.ExecAllocatorOption {
	opts := append(baseFlags(),
		chromedp.Flag("disable-site-isolation-trials", true),
		chromedp.Flag("disable-features", disabledFeatures+",IsolateOrigins,site-per-process"),
	)
	if len(req.Addrs) > 0 {
		opts = append(opts, chromedp.Flag("host-resolver-rules", ResolverRules(req.Addrs)))
	}
	if req.SPKIHash != "" {
		opts = append(opts, chromedp.Flag("ignore-certificate-errors-spki-list", req.SPKIHash))
	}
	return opts
}

// responseRecorder keeps the responses paused at the response stage.
type responseRecorder struct {
	ctx context.Context
	wg  sync.WaitGroup
	mu  sync.Mutex
	// got are the responses in the order they arrived; failed counts
	// those whose body could not be taken.
	got    []recordedResponse
	failed int
}

// recordedResponse is one intercepted response.
type recordedResponse struct {
	method, url string
	status      int
	header      []site.Field
	body        []byte
}

// event is the chromedp.Listen callback: a paused response is taken in a
// goroutine of its own (an event handler must not wait for the browser).
func (r *responseRecorder) event(ev any) {
	e, ok := ev.(*fetch.EventRequestPaused)
	if !ok {
		return
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.take(e)
	}()
}

// take reads a paused response's body, keeps the response and lets the
// page have it.
func (r *responseRecorder) take(e *fetch.EventRequestPaused) {
	defer chromedp.Call(r.ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
	if e.ResponseErrorReason != "" || e.ResponseStatusCode == 0 || e.Request == nil {
		return
	}
	resp := recordedResponse{method: e.Request.Method, url: e.Request.URL, status: int(e.ResponseStatusCode)}
	for _, h := range e.ResponseHeaders {
		resp.header = append(resp.header, site.Field{Name: h.Name, Value: h.Value})
	}
	if resp.status < 300 || resp.status >= 400 { // a redirect has no body to take
		body, err := chromedp.Call(r.ctx, fetch.GetResponseBody, fetch.GetResponseBodyParams{RequestID: e.RequestID})
		if err != nil {
			r.mu.Lock()
			r.failed++
			r.mu.Unlock()
			return
		}
		resp.body = body.Body
	}
	r.mu.Lock()
	r.got = append(r.got, resp)
	r.mu.Unlock()
}

// archive waits for the responses still being taken and returns them as
// an archive of the page document.
func (r *responseRecorder) archive(document string) (*site.Archive, imports.Report, error) {
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := imports.NewRecording("record")
	for _, resp := range r.got {
		if err := rec.AddDecoded(resp.method, resp.url, "", resp.status, resp.header, resp.body); err != nil {
			return nil, rec.Report(), fmt.Errorf("record %s: %w", document, err)
		}
	}
	a, rep, err := rec.Finish(document)
	rep.NoBody += r.failed
	if err != nil {
		return nil, rep, fmt.Errorf("record %s: %w", document, err)
	}
	return a, rep, nil
}

// firstError is the first of errs that is not nil.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
