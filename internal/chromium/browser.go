// Package chromium loads pages in headless Chromium through the DevTools
// protocol (chromedp): a fresh browser and profile per load, or a warm
// browser with a browser context per load; a repeat visit in the same
// browser; its frames from the trace for visual metrics (capture.go); a
// HAR from its network events (har.go); and the recording of live pages
// into site archives (record.go). browser.go is the browser's life cycle,
// load.go its client.Tab over DevTools (the visit is client.LoadIn).
package chromium

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/sys/unix"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/cpuuse"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/proc"

	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/trust"
)

// Kind is Chromium as a client: what it can do is factor.ClientChromium's
// capabilities.
func Kind() client.Kind { return kindOf(factor.ClientChromium, Executable()) }

// ShellKind is Chromium's headless shell as a client
// (factor.ClientChromiumShell): driven as Chromium is, from its own
// binary.
func ShellKind() client.Kind { return kindOf(factor.ClientChromiumShell, ShellExecutable()) }

// kindOf is client c run from exe's binary by this package.
func kindOf(c factor.Client, exe *client.Executable) client.Kind {
	return client.Kind{Client: c, Executable: exe, OwnProcess: true, RemoveStale: RemoveStaleTemp,
		New: func(env client.Env) client.Browser {
			return &Chromium{Path: cmp.Or(env.Binary, exe.Default), Namespace: env.Namespace, ProfileDir: env.ProfileDir, Timeout: env.Timeout, Warm: env.Warm, CPU: env.CPU}
		}}
}

// DefaultChromiumPath is Debian's Chromium binary (not the /usr/bin wrapper).
const DefaultChromiumPath = "/usr/lib/chromium/chromium"

// DefaultShellPath is Debian's binary of Chromium's headless shell (not
// the /usr/bin wrapper).
const DefaultShellPath = "/usr/lib/chromium/chromium-headless-shell"

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
	// CPU is the CPU accounting group the browsers start in; nil: none.
	CPU *cpuuse.Group
	// RunAs, if set, is the unprivileged user the browsers run as, with
	// Chromium's sandbox on: for `record`, which loads live sites, when
	// started by root. Their profiles and temporary directories are given
	// to that user. Nil: this process's user, without the sandbox.
	RunAs *syscall.Credential

	// pool keeps the warm browsers and the fresh ones still shutting
	// down.
	pool client.Pool[*browserProcess]
}

// closeLater kills b's processes at once (so nothing of it reaches the
// servers after the load) and reaps them and removes its profile in the
// background, overlapping the harness's work after the load; AwaitClosed
// waits for that.
func (c *Chromium) closeLater(b *browserProcess) {
	killProcessesUsing(b.profile)
	c.pool.CloseLater(c.CPU.OnItsCPUs(b.Close))
}

// Executable is Chromium's binary, named by --chromium.
func Executable() *client.Executable {
	return &client.Executable{Flag: "chromium", Name: "Chromium", Default: DefaultChromiumPath, Install: "make demo-deps", Package: "apt-get install chromium"}
}

// ShellExecutable is the headless shell's binary, named by
// --chromium-shell.
func ShellExecutable() *client.Executable {
	return &client.Executable{Flag: "chromium-shell", Name: "Chromium's headless shell", Default: DefaultShellPath, Install: "make chromium-shell", Package: "apt-get install chromium-headless-shell"}
}

// preferences turns off Chromium's network prediction, which pre-connects at
// navigation start and would hide handshake time.
const preferences = `{"net":{"network_prediction_options":2}}`

// Flags returns the command-line flags of a browser for req (without the
// user data directory), as chromedp's options.
func Flags(req client.Request) []chromedp.ExecAllocatorOption {
	return allocatorOptions(requestFlags(req))
}

// flag is one of the browser's command-line flags: --name, or
// --name=value when value is not empty.
type flag struct{ name, value string }

// requestFlags are the flags of a browser for req: baseFlags and what
// the request asks for.
func requestFlags(req client.Request) []flag {
	flags := append(baseFlagList(), flag{"ignore-certificate-errors-spki-list", req.SPKIHash})
	if req.DNS.Resolves() {
		flags = withFeatures(flags, resolvingFeatures)
	} else {
		flags = append(flags, flag{"host-resolver-rules", ResolverRules(req.Addrs)})
	}
	switch {
	case req.Discovery.Discovers():
		flags = append(flags, discoveryFlags(req)...)
	case req.Protocol == factor.H3:
		var origins []string
		for _, h := range req.Hosts {
			origins = append(origins, h+":443")
		}
		flags = append(flags, flag{"enable-quic", ""}, flag{"origin-to-force-quic-on", strings.Join(origins, ",")})
	case req.Protocol == factor.H2:
		flags = append(flags, flag{"disable-quic", ""})
	case req.Protocol == factor.H1:
		flags = append(flags, flag{"disable-quic", ""}, flag{"disable-http2", ""})
	}
	if req.NetLogDir != "" {
		// Default capture: events without cookies, credentials or bodies.
		flags = append(flags, flag{"log-net-log", filepath.Join(req.NetLogDir, NetLogFile)},
			flag{"net-log-capture-mode", "Default"})
	}
	return flags
}

// discoveryFlags are a browser's flags for req under a discovery rule:
// QUIC on and nothing forced, for every protocol alike, so that the loads
// differ only in what the servers offer (Alt-Svc for h3); HTTP/2 off where
// the servers speak h1 over TCP (req.SpeaksHTTP2).
//
// Chromium accepts a QUIC server's certificate only from a publicly known
// root, unless its host is named in --origin-to-force-quic-on (the run's
// own authority is no known root: a discovered QUIC handshake failed with
// ERR_QUIC_HANDSHAKE_FAILED and the alternative was marked broken). The
// hosts are named there on UnusedPort, which no request of a page uses,
// so that their certificate is accepted and nothing is forced.
func discoveryFlags(req client.Request) []flag {
	var allowed []string
	for _, h := range req.Hosts {
		allowed = append(allowed, fmt.Sprintf("%s:%d", h, UnusedPort))
	}
	flags := []flag{{"enable-quic", ""}, {"origin-to-force-quic-on", strings.Join(allowed, ",")}}
	if !req.SpeaksHTTP2() {
		flags = append(flags, flag{"disable-http2", ""})
	}
	return flags
}

// resolvingFeatures are the features of a browser that looks its hosts
// up (dns: resolved): its own DNS client, which reads /etc/resolv.conf
// and asks for HTTPS records over plain DNS as well, and honours their
// alpn (all three on by default in Chromium 156 on Linux; named so that
// they stay on).
const resolvingFeatures = "AsyncDns,UseDnsHttpsSvcb:UseDnsHttpsSvcbEnableInsecure/true,UseDnsHttpsSvcbAlpn"

// withFeatures adds features to flags' --enable-features (Chromium reads
// only the last of a repeated flag).
func withFeatures(flags []flag, features string) []flag {
	for i, f := range flags {
		if f.name == "enable-features" {
			flags[i].value += "," + features
			return flags
		}
	}
	return append(flags, flag{"enable-features", features})
}

// UnusedPort is the port the hosts are named on in a discovering
// browser's --origin-to-force-quic-on (discoveryFlags): no page's request
// goes to it.
const UnusedPort = 1

// args are flags as command-line arguments.
func args(flags []flag) []string {
	out := make([]string, 0, len(flags))
	for _, f := range flags {
		if f.value == "" {
			out = append(out, "--"+f.name)
		} else {
			out = append(out, "--"+f.name+"="+f.value)
		}
	}
	return out
}

// allocatorOptions are flags as chromedp's options.
func allocatorOptions(flags []flag) []chromedp.ExecAllocatorOption {
	opts := make([]chromedp.ExecAllocatorOption, 0, len(flags))
	for _, f := range flags {
		if f.value == "" {
			opts = append(opts, chromedp.Flag(f.name, true))
		} else {
			opts = append(opts, chromedp.Flag(f.name, f.value))
		}
	}
	return opts
}

// NetLogFile is the name of Chromium's NetLog in a load's net log
// directory.
const NetLogFile = "chromium-netlog.json"

// ResolverRules is the value of Chromium's --host-resolver-rules that maps
// each host of addrs to its IP and every other name to nothing, such as
// "MAP a.test 198.19.0.10,MAP b.test 198.19.0.11,MAP * ~NOTFOUND" (hosts in
// order, so that the same mapping gives the same flags).
func ResolverRules(addrs map[string]netip.Addr) string {
	var rules []string
	for _, host := range slices.Sorted(maps.Keys(addrs)) {
		rules = append(rules, fmt.Sprintf("MAP %s %s", host, addrs[host]))
	}
	return strings.Join(append(rules, "MAP * ~NOTFOUND"), ",")
}

// baseFlags are every browser's flags as chromedp's options.
func baseFlags() []chromedp.ExecAllocatorOption { return allocatorOptions(baseFlagList()) }

// baseFlagList are every browser's flags: headless, as Puppeteer and
// chromedp start it (nothing in the background, no first-run pages, no
// throttling of a page that is not in front), no sandbox (root), and
// nothing that competes with the page for the CPU.
func baseFlagList() []flag {
	return []flag{
		{"headless", ""}, {"hide-scrollbars", ""}, {"mute-audio", ""},
		{"no-first-run", ""}, {"no-default-browser-check", ""},
		{"disable-background-networking", ""},
		{"enable-features", "NetworkService,NetworkServiceInProcess"},
		{"disable-background-timer-throttling", ""},
		{"disable-backgrounding-occluded-windows", ""},
		{"disable-breakpad", ""},
		{"disable-client-side-phishing-detection", ""},
		{"disable-default-apps", ""},
		{"disable-dev-shm-usage", ""},
		{"disable-extensions", ""},
		{"disable-features", disabledFeatures},
		{"disable-hang-monitor", ""},
		{"disable-ipc-flooding-protection", ""},
		{"disable-popup-blocking", ""},
		{"disable-prompt-on-repost", ""},
		{"disable-renderer-backgrounding", ""},
		{"disable-sync", ""},
		{"force-color-profile", "srgb"},
		{"metrics-recording-only", ""},
		{"safebrowsing-disable-auto-update", ""},
		{"enable-automation", ""},
		{"password-store", "basic"},
		{"use-mock-keychain", ""},
		{"no-sandbox", ""},
		{"disable-component-update", ""},
		{"disable-gpu", ""},
		// Chromium lists the Google accounts of a new profile's cookies
		// (a POST to accounts.google.com/ListAccounts) once its network
		// is up, whatever the flags above say, and asks again after an
		// answer it did not expect: to a recording with that host, the
		// testbed's servers, inside the load. Its account server is moved
		// to a port Chromium refuses to connect to.
		{"gaia-url", gaiaURL},
	}
}

// gaiaURL is where the browser's own Google account requests go: the
// client's loopback on the discard port, which Chromium calls unsafe and
// never connects to, so that they fail at once and reach nothing.
const gaiaURL = "http://127.0.0.1:9"

// disabledFeatures are the browser features every browser goes without:
// translation, and the omnibox popups Chromium builds from web pages
// (WebUI) at its start and keeps rendering in a renderer of their own,
// although a headless browser never shows them. Measured: they cost a
// fresh browser 0.8 s of CPU, more than the demo's page
// (BenchmarkBrowserCPUByInstrument).
const disabledFeatures = "Translate,BlinkGenPropertyTrees,WebUIOmniboxPopup,WebUIOmniboxAimPopup,WebUIOmniboxFullPopup"

// browserProcess is a started (or starting) browser with its profile.
type browserProcess struct {
	ctx     context.Context
	cancel  func()
	profile string
	tmp     string // the browser's TMPDIR
	wrapErr *error
}

// Close stops the browser and removes its profile, temporary directory
// and processes.
func (b *browserProcess) Close() {
	b.cancel()
	killLeftovers(b.profile)
	os.RemoveAll(b.profile)
	os.RemoveAll(b.tmp)
}

// startBrowser prepares a browser with flags and a fresh profile in the
// client namespace (none: this one), living as long as parent; it starts on
// the first action on its context. A valid resolver gives it a name
// service of its own that asks it alone (client.ResolverFiles).
func (c *Chromium) startBrowser(parent context.Context, flags []chromedp.ExecAllocatorOption, resolver netip.Addr) (*browserProcess, error) {
	path := c.Path
	if path == "" {
		path = DefaultChromiumPath
	}
	path, err := trust.Executable(path)
	if err != nil {
		return nil, fmt.Errorf("chromium: not run: %w", err)
	}
	profile, tmp, err := c.newProfile()
	if err != nil {
		return nil, err
	}
	var binds map[string]string
	if resolver.IsValid() {
		if binds, err = client.ResolverFiles(profile, resolver); err != nil {
			os.RemoveAll(profile)
			os.RemoveAll(tmp)
			return nil, err
		}
	}
	var wrapErr error
	opts := append(flags,
		chromedp.ExecPath(path),
		chromedp.UserDataDir(profile),
		chromedp.Env("TMPDIR="+tmp),
		chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
			if c.RunAs != nil {
				cmd.Env = append(cmd.Env, "HOME="+profile) // not root's
			}
			if cmd.SysProcAttr == nil {
				cmd.SysProcAttr = &syscall.SysProcAttr{}
			}
			cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
			cmd.SysProcAttr.Credential = c.RunAs
			if c.Namespace != nil {
				wrapErr = c.Namespace.WrapCommand(cmd)
			}
			if wrapErr == nil {
				wrapErr = client.BindEtc(cmd, binds)
			}
			c.CPU.Prepare(cmd)
		}),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(parent, opts...)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	return &browserProcess{ctx: browserCtx, cancel: func() { cancelBrowser(); cancelAlloc() }, profile: profile, tmp: tmp, wrapErr: &wrapErr}, nil
}

// newProfile makes a fresh profile (network prediction off) and a TMPDIR
// of the browser's own, both given to c.RunAs if it is set; on an error
// nothing is left.
func (c *Chromium) newProfile() (profile, tmp string, err error) {
	if profile, err = os.MkdirTemp(c.ProfileDir, "profile-"); err != nil {
		return "", "", fmt.Errorf("load: profile directory: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(profile)
			if tmp != "" {
				os.RemoveAll(tmp)
			}
		}
	}()
	if err = os.MkdirAll(filepath.Join(profile, "Default"), 0o755); err != nil {
		return
	}
	if err = os.WriteFile(filepath.Join(profile, "Default", "Preferences"), []byte(preferences), 0o644); err != nil {
		return
	}
	// Chromium makes a directory for its singleton socket in TMPDIR and
	// removes it only when it exits cleanly: a TMPDIR of its own goes with
	// the browser. (Inside the profile, the socket's path could pass the
	// 108 bytes a Unix socket's path may have.)
	if tmp, err = os.MkdirTemp("", tempPrefix(os.Getpid())); err != nil {
		return profile, "", fmt.Errorf("load: temporary directory: %w", err)
	}
	return profile, tmp, c.giveAway(profile, tmp)
}

// giveAway hands the browser's profile and temporary directory, just
// made and still this process's alone, to c.RunAs; its HOME becomes the
// profile. Nothing when c.RunAs is nil.
func (c *Chromium) giveAway(profile, tmp string) error {
	if c.RunAs == nil {
		return nil
	}
	uid, gid := int(c.RunAs.Uid), int(c.RunAs.Gid)
	for _, p := range []string{profile, filepath.Join(profile, "Default"), filepath.Join(profile, "Default", "Preferences"), tmp} {
		if err := os.Lchown(p, uid, gid); err != nil {
			return fmt.Errorf("chromium: give the profile to uid %d: %w", uid, err)
		}
	}
	return nil
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
// and returns them: directories of this user's only, never a link.
func RemoveStaleTemp() []string { return safefs.RemoveStaleOf("quicbench-chromium-") }

// started tells the CPU accounting group of the browser of ctx, which
// has started; an error when the browser could not join the group's CPU
// cap.
func (c *Chromium) started(ctx context.Context) error {
	if cc := chromedp.FromContext(ctx); cc != nil && cc.Browser != nil && cc.Browser.Process() != nil {
		return c.CPU.Started(cc.Browser.Process().Pid)
	}
	return nil
}

// warmKey identifies the browser a request needs: the values Flags makes
// its command line of (the options themselves are functions, which print
// as pointers).
func warmKey(req client.Request) string {
	return strings.Join([]string{string(req.Protocol), string(req.Discovery), string(req.Fallback), string(req.DNS), req.Resolver.String(), ResolverRules(req.Addrs), req.SPKIHash, strings.Join(req.Hosts, ",")}, "\n")
}

// resolverOf is the resolver a browser for req asks, if it resolves.
func resolverOf(req client.Request) netip.Addr {
	if req.DNS.Resolves() {
		return req.Resolver
	}
	return netip.Addr{}
}

// startWarm starts the warm browser for req, living until Close.
func (c *Chromium) startWarm(req client.Request) (*browserProcess, error) {
	b, err := c.startBrowser(context.Background(), Flags(req), resolverOf(req))
	if err != nil {
		return nil, err
	}
	if err := chromedp.Do(b.ctx); err != nil || *b.wrapErr != nil {
		b.Close()
		return nil, errors.Join(err, *b.wrapErr)
	}
	if err := c.started(b.ctx); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// Close stops the warm browsers, if any. Call it before the client
// namespace goes away.
func (c *Chromium) Close() { c.pool.Close() }

// Load loads req.URL in a fresh browser (or a new browser context of the
// warm one) with client's visit driver (client.LoadIn): a Result with
// Failure set for a failed load, an error only if ctx was canceled.
func (c *Chromium) Load(ctx context.Context, req client.Request) (client.Result, error) {
	return client.LoadIn(ctx, c, c.pool.AwaitClosed, req, c.Warm, c.Timeout)
}

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
		if hasArg(proc.Cmdline(pid), want) {
			syscall.Kill(pid, syscall.SIGKILL)
			n++
		}
	}
	return n
}

// hasArg says whether cmdline has the argument want. The browser's child
// processes rewrite their command line into one argument, the arguments
// joined by spaces (their process title), so an argument of one is also
// a word of it.
func hasArg(cmdline []string, want string) bool {
	for _, arg := range cmdline {
		if arg == want || strings.HasSuffix(arg, " "+want) || strings.Contains(arg, " "+want+" ") {
			return true
		}
	}
	return false
}
