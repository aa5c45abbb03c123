package chromium

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/proc"
	"github.com/quicbench/quicbench/internal/testenv"
	"github.com/quicbench/quicbench/internal/trust"
)

// The bare browser of the CPU benchmarks: a Chromium driven over a DevTools
// pipe of the benchmark's own, with nothing subscribed that a load does not
// ask for (chromedp enables Network, DOM, CSS, Log, Inspector, Page and
// Runtime on every tab it attaches to), against which quicbench's
// instrumented load is measured.

// awaitMetricsJS is a promise of client.MetricsJS's value once the page's
// load event has ended: the page tells the bare visit (a load event
// listener, then a check every 10 ms until loadEventEnd is set) instead of
// the visit asking every 20 ms as client.Navigate does. It is null in a
// page still at about:blank, the document before the navigation's: ask
// again.
const awaitMetricsJS = `new Promise(resolve => {
  if (location.protocol === 'about:') return resolve(null);
  const read = () => { const m = ` + client.MetricsJS + `; if (m) resolve(m); else setTimeout(read, 10); };
  if (document.readyState === 'complete') read();
  else addEventListener('load', () => setTimeout(read, 0), {once: true});
})`

// devtools is a connection to a browser's DevTools protocol over the pipe
// Chromium opens with --remote-debugging-pipe: it reads commands from its
// file descriptor 3 and writes replies and events to 4, one JSON message
// per NUL-terminated frame. It does nothing of its own: no domain is
// enabled and no event is asked for unless a caller asks.
type devtools struct {
	out *os.File // commands, the browser's fd 3

	mu      sync.Mutex
	next    int64
	pending map[int64]chan devtoolsReply
	// handlers get the events of a session ("" the browser's) by
	// method; they run on the reader and must not block.
	handlers map[eventKey]func(json.RawMessage)
	err      error         // why the connection ended, once done is closed
	done     chan struct{} // closed when the reader stops
}

// eventKey names the events of one method in one session.
type eventKey struct{ session, method string }

// devtoolsMessage is one frame: a command, a reply or an event.
type devtoolsMessage struct {
	ID      int64           `json:"id,omitempty"`
	Session string          `json:"sessionId,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  any             `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *devtoolsError  `json:"error,omitempty"`
}

// devtoolsReply is what a command's reader gets: its result or its error.
type devtoolsReply struct {
	result json.RawMessage
	err    error
}

// devtoolsError is the browser's error reply to a command.
type devtoolsError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func (e *devtoolsError) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

// errDevtoolsClosed is the end of a connection whose browser closed its
// pipe.
var errDevtoolsClosed = errors.New("the browser closed its DevTools pipe")

// newDevtools starts reading in from the browser and returns the
// connection that writes commands to out. It ends when in does.
func newDevtools(out *os.File, in io.Reader) *devtools {
	d := &devtools{out: out, pending: map[int64]chan devtoolsReply{},
		handlers: map[eventKey]func(json.RawMessage){}, done: make(chan struct{})}
	go d.read(in)
	return d
}

// read dispatches the browser's frames until in ends, then fails the
// commands still waiting.
func (d *devtools) read(in io.Reader) {
	r := bufio.NewReaderSize(in, 1<<16)
	var err error
	for {
		var frame []byte
		if frame, err = r.ReadBytes(0); err != nil {
			break
		}
		var msg struct {
			ID      int64           `json:"id"`
			Session string          `json:"sessionId"`
			Method  string          `json:"method"`
			Params  json.RawMessage `json:"params"`
			Result  json.RawMessage `json:"result"`
			Error   *devtoolsError  `json:"error"`
		}
		if err = json.Unmarshal(frame[:len(frame)-1], &msg); err != nil {
			err = fmt.Errorf("devtools: a frame that is not JSON: %w", err)
			break
		}
		d.dispatch(msg.ID, eventKey{msg.Session, msg.Method}, msg.Params, devtoolsReply{msg.Result, errOrNil(msg.Error)})
	}
	if errors.Is(err, io.EOF) {
		err = errDevtoolsClosed
	}
	d.mu.Lock()
	d.err = err
	for id, ch := range d.pending {
		ch <- devtoolsReply{err: err}
		delete(d.pending, id)
	}
	d.mu.Unlock()
	close(d.done)
}

// errOrNil is e as an error, nil when e is.
func errOrNil(e *devtoolsError) error {
	if e == nil {
		return nil
	}
	return e
}

// dispatch hands a reply (id not zero) to its command or an event to its
// handler.
func (d *devtools) dispatch(id int64, event eventKey, params json.RawMessage, reply devtoolsReply) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if id != 0 {
		if ch, ok := d.pending[id]; ok {
			ch <- reply
			delete(d.pending, id)
		}
		return
	}
	if h := d.handlers[event]; h != nil {
		h(params)
	}
}

// call sends method with params to session ("": the browser) and decodes
// the result into result (nil: drops it), within ctx.
func (d *devtools) call(ctx context.Context, session, method string, params, result any) error {
	ch := make(chan devtoolsReply, 1)
	d.mu.Lock()
	if d.err != nil {
		d.mu.Unlock()
		return fmt.Errorf("%s: %w", method, d.err)
	}
	d.next++
	id := d.next
	d.pending[id] = ch
	frame, err := json.Marshal(devtoolsMessage{ID: id, Session: session, Method: method, Params: params})
	if err == nil {
		_, err = d.out.Write(append(frame, 0))
	}
	if err != nil {
		delete(d.pending, id)
	}
	d.mu.Unlock()
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case <-ctx.Done():
		d.mu.Lock()
		delete(d.pending, id)
		d.mu.Unlock()
		return fmt.Errorf("%s: %w", method, ctx.Err())
	case reply := <-ch:
		if reply.err != nil {
			return fmt.Errorf("%s: %w", method, reply.err)
		}
		if result == nil || len(reply.result) == 0 {
			return nil
		}
		return json.Unmarshal(reply.result, result)
	}
}

// on has handle get the events of method in session from now on;
// handle runs on the reader and must not block.
func (d *devtools) on(session, method string, handle func(json.RawMessage)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.handlers[eventKey{session, method}] = handle
}

// leanBrowser is a Chromium started with a DevTools pipe of quicbench's own
// (devtools), so that nothing is subscribed to that a load does not ask
// for.
type leanBrowser struct {
	proc    *proc.Process // nil until started
	dt      *devtools
	profile string
	tmp     string
	output  *proc.Output // the browser's standard output and error
}

// startLean starts Chromium with args (flags, without the user data
// directory) and a fresh profile, in c's namespace and CPU group, and
// connects to its DevTools pipe.
func (c *Chromium) startLean(args []string) (_ *leanBrowser, err error) {
	path := c.Path
	if path == "" {
		path = DefaultChromiumPath
	}
	path, err = trust.Executable(path)
	if err != nil {
		return nil, fmt.Errorf("chromium: not run: %w", err)
	}
	b := &leanBrowser{output: &proc.Output{}}
	if b.profile, b.tmp, err = c.newProfile(); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			b.Close()
		}
	}()
	cmdIn, toBrowser, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("chromium: DevTools pipe: %w", err)
	}
	fromBrowser, cmdOut, err := os.Pipe()
	if err != nil {
		cmdIn.Close()
		toBrowser.Close()
		return nil, fmt.Errorf("chromium: DevTools pipe: %w", err)
	}
	cmd := c.leanCommand(path, args, b.profile, b.tmp)
	cmd.ExtraFiles = []*os.File{cmdIn, cmdOut} // fds 3 and 4
	cmd.Stdout, cmd.Stderr = b.output, b.output
	if c.Namespace != nil {
		if err := c.Namespace.WrapCommand(cmd); err != nil {
			return nil, err
		}
	}
	c.CPU.Prepare(cmd)
	b.proc, err = proc.Start(cmd) // its parent-death signal from a thread that lives
	cmdIn.Close()
	cmdOut.Close()
	if err != nil {
		toBrowser.Close()
		fromBrowser.Close()
		return nil, fmt.Errorf("chromium: start: %w", err)
	}
	go func() { b.proc.Wait(); fromBrowser.Close() }()
	b.dt = newDevtools(toBrowser, fromBrowser)
	return b, c.CPU.Started(b.proc.Pid())
}

// leanCommand is the browser's command line: args, the profile, the
// DevTools pipe, and about:blank as its first page.
func (c *Chromium) leanCommand(path string, args []string, profile, tmp string) *exec.Cmd {
	all := append([]string{}, args...)
	all = append(all, "--user-data-dir="+profile, "--remote-debugging-pipe", "about:blank")
	cmd := exec.Command(path, all...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	if c.RunAs != nil {
		cmd.Env = append(cmd.Env, "HOME="+profile)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.RunAs} // proc.Start adds the parent-death signal
	return cmd
}

// Close kills the browser and every process of its profile, and removes
// the profile and temporary directory.
func (b *leanBrowser) Close() {
	if b.proc != nil {
		b.proc.Kill()
		killLeftovers(b.profile)
	}
	os.RemoveAll(b.profile)
	os.RemoveAll(b.tmp)
}

// firstPage attaches to the page the browser opened at its start and
// returns the session's id; it waits for the page to exist.
func (b *leanBrowser) firstPage(ctx context.Context) (string, error) {
	for {
		var got struct {
			TargetInfos []struct {
				TargetID string `json:"targetId"`
				Type     string `json:"type"`
			} `json:"targetInfos"`
		}
		if err := b.dt.call(ctx, "", "Target.getTargets", struct{}{}, &got); err != nil {
			return "", fmt.Errorf("chromium: %w (its output: %q)", err, b.output.LastLine())
		}
		for _, t := range got.TargetInfos {
			if t.Type != "page" {
				continue
			}
			var attached struct {
				SessionID string `json:"sessionId"`
			}
			err := b.dt.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": t.TargetID, "flatten": true}, &attached)
			return attached.SessionID, err
		}
		if err := client.Pause(ctx, 10*time.Millisecond); err != nil {
			return "", fmt.Errorf("chromium: no page opened: %w", err)
		}
	}
}

// leanPage is one attached page of a lean browser.
type leanPage struct {
	dt      *devtools
	session string
}

// Navigate goes to url; it returns once the browser has committed the
// navigation (or failed it).
func (p *leanPage) Navigate(ctx context.Context, url string) error {
	var got struct {
		ErrorText string `json:"errorText"`
	}
	if err := p.dt.call(ctx, p.session, "Page.navigate", map[string]any{"url": url}, &got); err != nil {
		return err
	}
	if got.ErrorText != "" {
		return fmt.Errorf("page load error %s", got.ErrorText)
	}
	return nil
}

// Evaluate evaluates js in the page, awaiting it if it is a promise, and
// decodes its value into out.
func (p *leanPage) Evaluate(ctx context.Context, js string, out any) error {
	var got struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception *struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	params := map[string]any{"expression": js, "returnByValue": true, "awaitPromise": true}
	if err := p.dt.call(ctx, p.session, "Runtime.evaluate", params, &got); err != nil {
		return err
	}
	if e := got.ExceptionDetails; e != nil {
		if e.Exception != nil {
			return errors.New(e.Exception.Description)
		}
		return errors.New(e.Text)
	}
	value := got.Result.Value
	if len(value) == 0 {
		value = json.RawMessage("null")
	}
	return json.Unmarshal(value, out)
}

// TestNoBrowserUIBesideThePage: a browser with quicbench's flags that has
// loaded a page and idled a moment has no target but its page: none of the
// omnibox popups Chromium otherwise renders from WebUI in a renderer of
// their own (0.8 s of a fresh browser's CPU, measured), which a headless
// browser never shows. A Chromium that renames the features fails it.
func TestNoBrowserUIBesideThePage(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, DefaultChromiumPath, "apt-get install chromium")
	c := &Chromium{ProfileDir: t.TempDir()}
	lb, err := c.startLean(args(baseFlagList()))
	if err != nil {
		t.Fatal(err)
	}
	defer lb.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	session, err := lb.firstPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := &leanPage{dt: lb.dt, session: session}
	if err := p.Navigate(ctx, "data:text/html,<title>page</title><p>text"); err != nil {
		t.Fatal(err)
	}
	if _, err := leanMetrics(ctx, p, true); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the popups came after the first page
	var got struct {
		TargetInfos []struct {
			Type, URL string
		} `json:"targetInfos"`
	}
	if err := lb.dt.call(ctx, "", "Target.getTargets", map[string]any{"filter": []any{map[string]any{}}}, &got); err != nil {
		t.Fatal(err)
	}
	pages := 0
	for _, target := range got.TargetInfos {
		switch target.Type {
		case "page":
			pages++
		case "tab":
		default:
			t.Errorf("a %s target beside the page: %s", target.Type, target.URL)
		}
	}
	if pages != 1 {
		t.Errorf("%d pages, want 1 (targets: %+v)", pages, got.TargetInfos)
	}
}
