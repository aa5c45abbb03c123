// Package firefox loads pages in headless Firefox through its built-in
// WebDriver BiDi endpoint (no geckodriver): a fresh browser and profile
// per load, in the client namespace, with its own view of /etc/hosts (the
// testbed's names, in a mount namespace of the browser's) and the run's
// certificate authority in the profile's NSS database. Firefox's HTTP/3
// stack is neqo, not Chromium's: the same page over the same servers
// compares two client stacks. browser.go is the browser's life cycle,
// profile.go its profile, bidi.go the protocol, load.go its client.Tab
// over BiDi (the visit is client.LoadIn).
package firefox

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/cpuuse"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/proc"

	"github.com/quicbench/quicbench/internal/trust"
)

// DefaultPath is Debian's Firefox ESR binary (not the /usr/bin link).
const DefaultPath = "/usr/lib/firefox-esr/firefox-esr"

// Kind is Firefox as a client: what it can do is factor.ClientFirefox's
// capabilities.
func Kind() client.Kind {
	return client.Kind{Client: factor.ClientFirefox, Executable: Executable(), OwnProcess: true, Check: CheckTools,
		New: func(env client.Env) client.Browser {
			return &Firefox{Path: env.Binary, Namespace: env.Namespace, ProfileDir: env.ProfileDir, Timeout: env.Timeout, Warm: env.Warm, Version: env.Version, CPU: env.CPU}
		}}
}

// Firefox loads pages in a fresh headless Firefox per load: a new profile,
// so a first visit has empty caches, no session tickets and no knowledge
// of the servers. A repeat visit loads the page twice in that browser and
// measures the second load.
type Firefox struct {
	// Path is the Firefox binary. Empty: DefaultPath.
	Path string
	// Namespace is where the browser runs (the client namespace); nil:
	// this process's.
	Namespace *netns.Namespace
	// ProfileDir holds the temporary profiles, each removed after its load.
	ProfileDir string
	// Timeout bounds one load, browser start included. Zero: 60 s.
	Timeout time.Duration
	// Warm keeps one browser running per protocol and loads each page in
	// a tab of a new user context of it (its own cache, cookies,
	// connections and TLS sessions) instead of starting a browser per
	// load. Close stops the browsers.
	Warm bool
	// Version names quicbench in the HARs it writes.
	Version string
	// CPU is the CPU accounting group the browsers start in; nil: none.
	CPU *cpuuse.Group

	// pool keeps the warm browsers and the fresh ones still shutting
	// down.
	pool client.Pool[*process]
	// mu guards the template.
	mu sync.Mutex
	// template is the profile every fresh profile starts from (see
	// template.go), made for the CA in templateCA on first use.
	template, templateCA string
}

// Executable is Firefox's binary, named by --firefox.
func Executable() *client.Executable {
	return &client.Executable{Flag: "firefox", Name: "Firefox", Default: DefaultPath, Install: "make firefox", Package: "apt-get install firefox-esr libnss3-tools"}
}

// CheckTools returns an error that says how to install certutil, which
// makes the profiles' certificate databases, if it is missing.
func CheckTools(string) error {
	if _, err := trust.LookPath("certutil"); err != nil {
		return fmt.Errorf("certutil: %v: install it with 'make firefox' (apt-get install libnss3-tools)", err)
	}
	return nil
}

// Close stops the warm browsers, if any, and removes the template profile
// the loads shared. Call it before the client namespace goes away.
func (f *Firefox) Close() {
	f.pool.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.template != "" {
		os.RemoveAll(f.template)
		f.template, f.templateCA = "", ""
	}
}

// Load loads req.URL in a fresh browser (or a tab of a new user context
// of the warm one) with client's visit driver (client.LoadIn): a Result
// with Failure set for a failed load, an error only if ctx was canceled.
func (f *Firefox) Load(ctx context.Context, req client.Request) (client.Result, error) {
	return client.LoadIn(ctx, f, f.pool.AwaitClosed, req, f.Warm, f.Timeout)
}

// process is a running browser with its profile and BiDi connection.
type process struct {
	proc    *proc.Process
	profile string
	bidi    *bidi
}

// NetLogModules are the modules and levels of Firefox's HTTP log, as
// about:logging's "Networking" preset has them, with time stamps.
const NetLogModules = "timestamp,nsHttp:5,cache2:5,nsSocketTransport:5,nsHostResolver:5,neqo_http3_session:5"

// NetLogFile starts the names of Firefox's HTTP log files in a load's net
// log directory (firefox.moz_log, and a file per child process).
const NetLogFile = "firefox"

// command is the browser's command line for profile: Firefox, in the
// client namespace, in a mount namespace of its own where /etc/hosts is the
// profile's hosts file; netLogDir, if set, gets its HTTP log.
func (f *Firefox) command(profile, netLogDir string) (*exec.Cmd, error) {
	path := f.Path
	if path == "" {
		path = DefaultPath
	}
	path, err := trust.Executable(path)
	if err != nil {
		return nil, fmt.Errorf("firefox: not run: %w", err)
	}
	cmd := exec.Command(path, "--headless", "--no-remote", "--profile", profile,
		"--remote-debugging-port", "0", "about:blank")
	if f.Namespace != nil {
		if err := f.Namespace.WrapCommand(cmd); err != nil {
			return nil, err
		}
	}
	// The profile's hosts file (and with dns: resolved its resolv.conf and
	// nsswitch.conf) is the browser's alone.
	if err := client.BindEtc(cmd, etcBinds(profile)); err != nil {
		return nil, fmt.Errorf("firefox: %w", err)
	}
	tmp := filepath.Join(profile, "tmp")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "HOME="+tmp, "MOZ_CRASHREPORTER_DISABLE=1", "MOZ_CRASHREPORTER=0")
	if netLogDir != "" {
		cmd.Env = append(cmd.Env, "MOZ_LOG="+NetLogModules, "MOZ_LOG_FILE="+filepath.Join(netLogDir, NetLogFile))
	}
	return cmd, nil
}

// listeningOn starts the line Firefox prints when its remote agent listens,
// before the endpoint's URL.
const listeningOn = "WebDriver BiDi listening on "

// start starts a browser for req with a fresh profile and opens a BiDi
// session with it.
func (f *Firefox) start(ctx context.Context, req client.Request) (*process, error) {
	profile, err := f.newProfile(ctx, req)
	if err != nil {
		return nil, err
	}
	return f.startOn(ctx, profile, req.NetLogDir)
}

// startOn starts a browser on profile (its HTTP log into netLogDir, if
// set) and opens a BiDi session with it; the profile goes with the
// browser.
func (f *Firefox) startOn(ctx context.Context, profile, netLogDir string) (*process, error) {
	cmd, err := f.command(profile, netLogDir)
	if err != nil {
		os.RemoveAll(profile)
		return nil, err
	}
	p := &process{profile: profile}
	f.CPU.Prepare(cmd)
	url, err := p.launch(ctx, cmd)
	if p.proc != nil && err == nil {
		err = f.CPU.Started(p.proc.Pid())
	}
	if err == nil {
		err = p.connect(ctx, url, f.dialer())
	}
	if err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// dialer reaches the browser's loopback: the client namespace's.
func (f *Firefox) dialer() func(ctx context.Context, network, addr string) (net.Conn, error) {
	if f.Namespace != nil {
		return f.Namespace.DialContext
	}
	return (&net.Dialer{}).DialContext
}

// launch starts cmd as the first process of a PID namespace of its own
// (every process the browser starts dies with it) and waits until it says
// where its BiDi endpoint listens.
func (p *process) launch(ctx context.Context, cmd *exec.Cmd) (string, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return "", fmt.Errorf("firefox: %w", err)
	}
	cmd.Stderr = w
	p.proc, err = proc.StartTree(cmd)
	w.Close()
	if err != nil {
		r.Close()
		return "", fmt.Errorf("firefox: start: %w", err)
	}
	found := make(chan string, 1)
	var last []string // what it printed before it listened: the last 10 lines
	// Read what the browser prints until it ends (a pipe nobody reads
	// would block it, or kill it when closed).
	go func() {
		defer r.Close()
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if _, url, ok := strings.Cut(sc.Text(), listeningOn); ok {
				found <- strings.TrimSpace(url)
				break
			}
			last = append(last[max(0, len(last)-9):], sc.Text())
		}
		close(found)
		for sc.Scan() {
		}
	}()
	select {
	case url, ok := <-found:
		if !ok {
			<-p.proc.Done()
			return "", fmt.Errorf("firefox: %s before it listened: %s", p.proc.Exited(), strings.Join(last, " | "))
		}
		return url + "/session", nil
	case <-ctx.Done():
		return "", fmt.Errorf("firefox: waiting for it to listen: %w", ctx.Err())
	}
}

// connect opens the BiDi connection and a session on it.
func (p *process) connect(ctx context.Context, url string, dial func(ctx context.Context, network, addr string) (net.Conn, error)) error {
	b, err := dialBiDi(ctx, url, dial)
	if err != nil {
		return err
	}
	p.bidi = b
	return b.call(ctx, "session.new", map[string]any{"capabilities": map[string]any{}}, nil)
}

// closeLater kills p's processes at once (so nothing of it reaches the
// servers after the load) and reaps them and removes its profile in the
// background, overlapping the harness's work after the load; the next
// timed load and Close wait for that.
func (f *Firefox) closeLater(p *process) {
	p.proc.KillGroup()
	f.pool.CloseLater(f.CPU.OnItsCPUs(p.Close))
}

// Close kills the browser and every process it started, and removes its
// profile.
func (p *process) Close() {
	if p.bidi != nil {
		p.bidi.close()
	}
	if p.proc != nil {
		p.proc.Kill()
	}
	os.RemoveAll(p.profile)
}
