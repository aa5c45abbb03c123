package client

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"golang.org/x/sys/unix"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/proc"
)

// DefaultChromiumPath is Debian's Chromium binary (not the /usr/bin wrapper).
const DefaultChromiumPath = "/usr/lib/chromium/chromium"

// Chromium loads pages in a fresh headless Chromium per load: a new profile,
// so a first visit has empty caches, no session tickets and no knowledge of
// the servers. A repeat visit loads the page twice in that browser and
// measures the second load.
type Chromium struct {
	// Path is the Chromium binary. Empty: DefaultChromiumPath.
	Path string
	// Namespace is where the browser runs (the client namespace).
	Namespace *netns.Namespace
	// ProfileDir holds the temporary profiles, each removed after its load.
	ProfileDir string
	// Timeout bounds one load, browser start included. Zero: 60 s.
	Timeout time.Duration
	// Warm keeps one browser running per protocol and loads each page in a
	// new browser context of it (its own cache, cookies, sockets, TLS
	// sessions and QUIC state) instead of starting a browser per load.
	// Close stops the browsers.
	Warm bool

	mu   sync.Mutex
	warm map[string]*browserProcess
}

// CheckChromium returns an error that says how to install Chromium if path
// (empty: DefaultChromiumPath) is not an executable.
func CheckChromium(path string) error {
	if path == "" {
		path = DefaultChromiumPath
	}
	info, err := os.Stat(path)
	if err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
		return fmt.Errorf("chromium not found at %s: install it with 'apt-get install chromium chromium-driver' (or run 'make demo'), or pass --chromium PATH", path)
	}
	return nil
}

// preferences turns off Chromium's network prediction, which pre-connects at
// navigation start and would hide handshake time.
const preferences = `{"net":{"network_prediction_options":2}}`

// collectJS reads the page's metrics once the load event has ended, or
// returns null before that.
const collectJS = `(() => {
  const nav = performance.getEntriesByType('navigation')[0];
  if (!nav || nav.loadEventEnd === 0) return null;
  const imgs = Array.from(document.images);
  return {
    document_protocol: nav.nextHopProtocol,
    document_status: nav.responseStatus || 0,
    document_transfer_bytes: nav.transferSize,
    ttfb_ms: nav.responseStart,
    dcl_ms: nav.domContentLoadedEventStart,
    onload_ms: nav.loadEventStart,
    plt_ms: nav.loadEventEnd,
    resources: performance.getEntriesByType('resource').map(r => ({
      url: r.name, protocol: r.nextHopProtocol, start_ms: r.startTime,
      response_end_ms: r.responseEnd, transfer_bytes: r.transferSize, status: r.responseStatus || 0})),
    fcp_ms: (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime || 0,
    lcp_ms: window.__quicbenchLCP || 0,
    images: imgs.length,
    broken_images: imgs.filter(i => !i.complete || i.naturalWidth === 0).length,
  };
})()`

// bufferJS lifts the Resource Timing buffer from 250 entries, so that pages
// with more objects are measured completely, and keeps the time of the
// latest Largest Contentful Paint candidate (the browser reports LCP only
// to observers).
const bufferJS = `performance.setResourceTimingBufferSize(100000);
window.__quicbenchLCP = 0;
try {
  new PerformanceObserver(list => {
    for (const e of list.getEntries()) window.__quicbenchLCP = e.startTime;
  }).observe({type: 'largest-contentful-paint', buffered: true});
} catch (e) {}`

// paintJS reads First Contentful Paint and the latest Largest Contentful
// Paint candidate.
const paintJS = `[(performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime || 0, window.__quicbenchLCP || 0]`

// paintWait bounds how long a load whose first paint came after its load
// event waits for it.
const paintWait = 500 * time.Millisecond

// Flags returns the command-line flags of a browser for req (without the
// user data directory).
func Flags(req Request) []chromedp.ExecAllocatorOption {
	opts := append(baseFlags(),
		chromedp.Flag("host-resolver-rules", req.HostResolverRules+",MAP * ~NOTFOUND"),
		chromedp.Flag("ignore-certificate-errors-spki-list", req.SPKIHash),
	)
	switch req.Protocol {
	case factor.H3:
		var origins []string
		for _, h := range req.Hosts {
			origins = append(origins, h+":443")
		}
		opts = append(opts, chromedp.Flag("enable-quic", true),
			chromedp.Flag("origin-to-force-quic-on", strings.Join(origins, ",")))
	case factor.H2:
		opts = append(opts, chromedp.Flag("disable-quic", true))
	case factor.H1:
		opts = append(opts, chromedp.Flag("disable-quic", true), chromedp.Flag("disable-http2", true))
	}
	return opts
}

// baseFlags are every browser's flags: chromedp's headless defaults, no
// sandbox (root), and nothing that competes with the page for the CPU.
func baseFlags() []chromedp.ExecAllocatorOption {
	return append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("mute-audio", true),
	)
}

// Load starts a fresh browser, loads req.URL, reads the metrics, verifies
// them, and stops the browser. It returns a Result with Failure set for any
// failed load, and an error only if the context was canceled.
func (c *Chromium) Load(ctx context.Context, req Request) (res Result, _ error) {
	res.Requested = req.Protocol
	wallStart := time.Now()
	defer func() { res.WallMs = ms(time.Since(wallStart)) }()
	if req.Protocol.NextHop() == "" {
		return res, fmt.Errorf("load: unknown protocol %q", req.Protocol)
	}
	timeout := c.Timeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	loadCtx, cancelLoad := context.WithTimeout(ctx, timeout)
	defer cancelLoad()
	fail := func(failure string) (Result, error) {
		res.Failure = failure
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		return res, nil
	}
	startAt := time.Now()
	t, failure, err := c.openTab(loadCtx, req)
	if err != nil {
		return res, err
	}
	if failure != "" {
		return fail(failure)
	}
	defer func() { t.close(res.Failure != "") }()
	if err := chromedp.Do(t.ctx); err != nil || *t.wrapErr != nil {
		return fail(fmt.Sprintf("browser start: %v", errors.Join(err, *t.wrapErr)))
	}
	res.BrowserStartMs = ms(time.Since(startAt))
	if failure := c.visits(t.ctx, loadCtx, req, timeout, &res); failure != "" {
		return fail(failure)
	}
	return res, nil
}

// tab is the browser tab a load runs in.
type tab struct {
	ctx     context.Context
	wrapErr *error
	// close disposes of the tab; failed says the load failed.
	close func(failed bool)
}

// openTab opens the tab for a load of req: a new browser context of the
// warm browser, or a fresh browser. It returns a failure text, or an error
// if no browser could be prepared at all.
func (c *Chromium) openTab(loadCtx context.Context, req Request) (*tab, string, error) {
	if !c.Warm {
		b, err := c.startBrowser(loadCtx, Flags(req))
		if err != nil {
			return nil, "", err
		}
		return &tab{ctx: b.ctx, wrapErr: b.wrapErr, close: func(bool) { b.close() }}, "", nil
	}
	wb, err := c.warmBrowser(req)
	if err != nil {
		return nil, fmt.Sprintf("browser start: %v", err), nil
	}
	// A new browser context per load: its own cookies, cache, sockets, TLS
	// sessions and QUIC state, disposed afterwards.
	tabCtx, cancelTab := chromedp.NewContext(wb.ctx, chromedp.WithNewBrowserContext())
	stopCancel := context.AfterFunc(loadCtx, cancelTab)
	return &tab{ctx: tabCtx, wrapErr: new(error), close: func(failed bool) {
		stopCancel()
		cancelTab()
		// A failed load may be a browser that died: the next load starts
		// a new one rather than failing on a dead one forever.
		if failed {
			c.dropWarm(req, wb)
		}
	}}, "", nil
}

// visits sets up the tab's page, makes a repeat visit's first load and
// then the measured one, filling res. It returns a failure text.
func (c *Chromium) visits(tabCtx, loadCtx context.Context, req Request, timeout time.Duration, res *Result) string {
	source := bufferJS
	if req.Deterministic {
		source = DeterministicJS + "\n" + source
	}
	if _, err := chromedp.Call(tabCtx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: source}); err != nil {
		return fmt.Sprintf("set up page: %v", err)
	}
	if err := setViewport(tabCtx); err != nil {
		return fmt.Sprintf("set up page: viewport: %v", err)
	}
	res.ViewportWidth, res.ViewportHeight = ViewportWidth, ViewportHeight
	var rec *harRecorder
	if req.HARPath != "" {
		rec = newHARRecorder()
		if err := chromedp.Listen(tabCtx, rec.event); err != nil {
			return fmt.Sprintf("record HAR: %v", err)
		}
		if _, err := chromedp.Call(tabCtx, network.Enable, network.EnableParams{}); err != nil {
			return fmt.Sprintf("record HAR: Network.enable: %v", err)
		}
	}
	res.Visit = req.Visit
	if res.Visit == "" {
		res.Visit = factor.FirstVisit
	}
	if res.Visit == factor.RepeatVisit {
		if failure := firstVisit(tabCtx, loadCtx, req, timeout, res); failure != "" {
			return failure
		}
	}
	if rec != nil {
		rec.reset() // the measured visit only
	}
	return c.measuredVisit(tabCtx, loadCtx, req, timeout, rec, res)
}

// firstVisit makes a repeat visit's first, unmeasured load, verifies it and
// leaves the page. It returns a failure text.
func firstVisit(tabCtx, loadCtx context.Context, req Request, timeout time.Duration, res *Result) string {
	first, failure := navigate(tabCtx, loadCtx, req.URL, timeout)
	if failure != "" {
		return "first visit: " + failure
	}
	firstReq := req
	firstReq.CacheAllowed = false
	if problems := Verify(firstReq, first); len(problems) > 0 {
		return "first visit: " + strings.Join(problems, "; ")
	}
	res.FirstVisitPLTMs = first.PLTMs
	if err := chromedp.Do(tabCtx, chromedp.Navigate("about:blank")); err != nil {
		return fmt.Sprintf("leave the page between visits: %v", err)
	}
	if req.BetweenVisits != nil {
		if err := req.BetweenVisits(loadCtx); err != nil {
			return fmt.Sprintf("between visits: %v", err)
		}
	}
	return ""
}

// measuredVisit makes the measured load, with its frames and HAR if asked
// for, and verifies it. It returns a failure text.
func (c *Chromium) measuredVisit(tabCtx, loadCtx context.Context, req Request, timeout time.Duration, rec *harRecorder, res *Result) string {
	var frames *frameRecorder
	if req.Visual {
		var err error
		if frames, err = startFrames(tabCtx); err != nil {
			return err.Error()
		}
	}
	m, failure := navigate(tabCtx, loadCtx, req.URL, timeout)
	if req.Loaded != nil {
		req.Loaded()
	}
	if failure != "" {
		return failure
	}
	res.PageMetrics = m
	if m.FCPMs == 0 {
		if failure := awaitPaint(tabCtx, loadCtx, res); failure != "" {
			return failure
		}
	}
	if frames != nil {
		if failure := c.finishVisual(tabCtx, loadCtx, frames, res); failure != "" {
			return failure
		}
	}
	if rec != nil {
		if err := rec.build(req.URL, m).WriteFile(req.HARPath); err != nil {
			return err.Error()
		}
	}
	if problems := Verify(req, res.PageMetrics); len(problems) > 0 {
		return strings.Join(problems, "; ")
	}
	return ""
}

// navigate loads url in the browser's tab and reads the page's metrics once
// its load event has ended. It returns a failure text for a failed load.
func navigate(browserCtx, loadCtx context.Context, url string, timeout time.Duration) (PageMetrics, string) {
	if err := chromedp.Do(browserCtx, chromedp.Navigate(url)); err != nil {
		if loadCtx.Err() != nil {
			return PageMetrics{}, fmt.Sprintf("timed out after %v", timeout)
		}
		return PageMetrics{}, fmt.Sprintf("navigation: %v", err)
	}
	for {
		m, err := chromedp.Run(browserCtx, chromedp.Evaluate[*PageMetrics](collectJS))
		if err != nil {
			if loadCtx.Err() != nil {
				return PageMetrics{}, fmt.Sprintf("timed out after %v waiting for loadEventEnd", timeout)
			}
			return PageMetrics{}, fmt.Sprintf("read metrics: %v", err)
		}
		if m != nil {
			return *m, ""
		}
		select {
		case <-loadCtx.Done():
			return PageMetrics{}, fmt.Sprintf("timed out after %v waiting for loadEventEnd", timeout)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// awaitPaint reads FCP and LCP again for up to paintWait: a page can paint
// its first content a frame after its load event. It returns a failure
// text; a page that paints nothing keeps FCP at 0.
func awaitPaint(tabCtx, loadCtx context.Context, res *Result) string {
	deadline := time.Now().Add(paintWait)
	for time.Now().Before(deadline) {
		select {
		case <-loadCtx.Done():
			return "timed out waiting for the first paint"
		case <-time.After(20 * time.Millisecond):
		}
		if failure := readPaint(tabCtx, res); failure != "" || res.FCPMs > 0 {
			return failure
		}
	}
	return ""
}

// readPaint reads FCP and LCP into res. It returns a failure text.
func readPaint(tabCtx context.Context, res *Result) string {
	paint, err := chromedp.Run(tabCtx, chromedp.Evaluate[[]float64](paintJS))
	if err != nil || len(paint) != 2 {
		return fmt.Sprintf("read FCP and LCP: %v", err)
	}
	res.FCPMs, res.LCPMs = paint[0], paint[1]
	return ""
}

// finishVisual lets the page paint for SettleAfterLoad after its load
// event, reads its paint timings again, stops the capture and
// computes the visual metrics into res. It returns a failure text.
func (c *Chromium) finishVisual(browserCtx, loadCtx context.Context, frames *frameRecorder, res *Result) string {
	select {
	case <-loadCtx.Done():
		return "timed out while the page settled after its load event"
	case <-time.After(SettleAfterLoad):
	}
	if failure := readPaint(browserCtx, res); failure != "" {
		return failure
	}
	captured, err := frames.stop(browserCtx)
	if err != nil {
		return err.Error()
	}
	start := time.Now()
	if res.Frames, err = withBlankStart(captured); err != nil {
		return err.Error()
	}
	vm, err := VisualMetrics(res.Frames)
	if err != nil {
		return err.Error()
	}
	res.Visual, res.VisualComputeMs = &vm, ms(time.Since(start))
	return ""
}

// browserProcess is a started (or starting) browser with its profile.
type browserProcess struct {
	ctx     context.Context
	cancel  func()
	profile string
	tmp     string // the browser's TMPDIR
	wrapErr *error
}

// close stops the browser and removes its profile, temporary directory
// and processes.
func (b *browserProcess) close() {
	b.cancel()
	killLeftovers(b.profile)
	os.RemoveAll(b.profile)
	os.RemoveAll(b.tmp)
}

// startBrowser prepares a browser with flags and a fresh profile in the
// client namespace (none: this one), living as long as parent; it starts on
// the first action on its context.
func (c *Chromium) startBrowser(parent context.Context, flags []chromedp.ExecAllocatorOption) (*browserProcess, error) {
	profile, err := os.MkdirTemp(c.ProfileDir, "profile-")
	if err != nil {
		return nil, fmt.Errorf("load: profile directory: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(profile, "Default"), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(profile, "Default", "Preferences"), []byte(preferences), 0o644); err != nil {
		return nil, err
	}
	// Chromium makes a directory for its singleton socket in TMPDIR and
	// removes it only when it exits cleanly: a TMPDIR of its own goes with
	// the browser. (Inside the profile, the socket's path could pass the
	// 108 bytes a Unix socket's path may have.)
	tmp, err := os.MkdirTemp("", tempPrefix(os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("load: temporary directory: %w", err)
	}
	path := c.Path
	if path == "" {
		path = DefaultChromiumPath
	}
	var wrapErr error
	opts := append(flags,
		chromedp.ExecPath(path),
		chromedp.UserDataDir(profile),
		chromedp.Env("TMPDIR="+tmp),
		chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
			if cmd.SysProcAttr == nil {
				cmd.SysProcAttr = &syscall.SysProcAttr{}
			}
			cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
			if c.Namespace != nil {
				wrapErr = c.Namespace.WrapCommand(cmd)
			}
		}),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(parent, opts...)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	return &browserProcess{ctx: browserCtx, cancel: func() { cancelBrowser(); cancelAlloc() }, profile: profile, tmp: tmp, wrapErr: &wrapErr}, nil
}

// tempPrefix starts the name of the temporary directories of the browsers
// of process pid, in os.TempDir().
func tempPrefix(pid int) string { return fmt.Sprintf("quicbench-chromium-%d-", pid) }

// TempDirs lists the temporary directories of this process's browsers
// that exist now (none once every browser is closed).
func TempDirs() []string {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), tempPrefix(os.Getpid())+"*"))
	return dirs
}

// RemoveStaleTemp removes the browsers' temporary directories of
// processes that are gone (a run killed with SIGKILL cannot remove them)
// and returns them.
func RemoveStaleTemp() []string {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "quicbench-chromium-*"))
	var removed []string
	for _, d := range dirs {
		pidText, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), "quicbench-chromium-"), "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue // not ours, or its process lives
		}
		if os.RemoveAll(d) == nil {
			removed = append(removed, d)
		}
	}
	return removed
}

// warmKey identifies the browser a request needs: the values Flags makes
// its command line of (the options themselves are functions, which print
// as pointers).
func warmKey(req Request) string {
	return strings.Join([]string{string(req.Protocol), req.HostResolverRules, req.SPKIHash, strings.Join(req.Hosts, ",")}, "\n")
}

// warmBrowser returns the running browser for req's protocol and flags,
// starting it on first use.
func (c *Chromium) warmBrowser(req Request) (*browserProcess, error) {
	key := warmKey(req)
	c.mu.Lock()
	defer c.mu.Unlock()
	if b := c.warm[key]; b != nil {
		return b, nil
	}
	b, err := c.startBrowser(context.Background(), Flags(req))
	if err != nil {
		return nil, err
	}
	if err := chromedp.Do(b.ctx); err != nil || *b.wrapErr != nil {
		b.close()
		return nil, errors.Join(err, *b.wrapErr)
	}
	if c.warm == nil {
		c.warm = map[string]*browserProcess{}
	}
	c.warm[key] = b
	return b, nil
}

// dropWarm stops b, the warm browser of req, and forgets it.
func (c *Chromium) dropWarm(req Request, b *browserProcess) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if key := warmKey(req); c.warm[key] == b {
		delete(c.warm, key)
	}
	b.close()
}

// Close stops the warm browsers, if any. Call it before the client
// namespace goes away.
func (c *Chromium) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, b := range c.warm {
		b.close()
		delete(c.warm, key)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// killLeftovers kills the processes of the browser that used profile until
// none is found three passes in a row (children can fork as the parent dies),
// for at most 2 s.
//
// A process that is a child subreaper (quicbench's main sets it) inherits the
// browser's orphaned children when they exit; killLeftovers reaps those too,
// so that no zombies stay behind.
func killLeftovers(profile string) {
	deadline := time.Now().Add(2 * time.Second)
	for quiet := 0; quiet < 3 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if killProcessesUsing(profile)+reapBrowserZombies() == 0 {
			quiet++
		} else {
			quiet = 0
		}
	}
}

// reapBrowserZombies reaps this process's exited children whose command name
// starts with "chrom" and returns how many it reaped. It never waits for
// other children, whose exit status belongs to os/exec.
func reapBrowserZombies() int {
	n := 0
	for _, p := range proc.List() {
		if p.State != "Z" || !strings.HasPrefix(p.Comm, "chrom") || p.PPID != os.Getpid() {
			continue
		}
		if got, err := unix.Wait4(p.PID, nil, unix.WNOHANG, nil); err == nil && got == p.PID {
			n++
		}
	}
	return n
}

// killProcessesUsing kills every process whose command line has
// --user-data-dir=dir (the browser's children can outlive it) and returns
// how many it found.
func killProcessesUsing(dir string) int {
	want := "--user-data-dir=" + dir
	n := 0
	for _, pid := range proc.Using(want) {
		if slices.Contains(proc.Cmdline(pid), want) {
			syscall.Kill(pid, syscall.SIGKILL)
			n++
		}
	}
	return n
}
