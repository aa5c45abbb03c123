package firefox

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sync"

	"github.com/coder/websocket"
)

// maxMessageBytes bounds one WebDriver BiDi message from the browser: a
// page's metrics with every Resource Timing entry, or a screenshot.
const maxMessageBytes = 64 << 20

// bidi is a WebDriver BiDi session's connection: commands, each answered
// by its id, and events handed to a function.
type bidi struct {
	ws *websocket.Conn

	mu      sync.Mutex
	next    int
	waiting map[int]chan reply
	onEvent func(method string, params json.RawMessage)
	err     error // why the connection ended; nil while it lives
	done    chan struct{}
}

// reply is a command's answer: its result, or the error the browser gave.
type reply struct {
	result json.RawMessage
	err    error
}

// message is any message from the browser: a command's success or error
// (with its id) or an event (with its method).
type message struct {
	ID      *int            `json:"id"`
	Type    string          `json:"type"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   string          `json:"error"`
	Message string          `json:"message"`
}

// dialBiDi connects to the browser's WebDriver BiDi endpoint url, through
// dial (which reaches the browser's network namespace).
func dialBiDi(ctx context.Context, url string, dial func(ctx context.Context, network, addr string) (net.Conn, error)) (*bidi, error) {
	transport := &http.Transport{DialContext: dial}
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: &http.Client{Transport: transport}})
	if err != nil {
		return nil, fmt.Errorf("webdriver bidi: connect to %s: %w", url, err)
	}
	ws.SetReadLimit(maxMessageBytes)
	b := &bidi{ws: ws, waiting: map[int]chan reply{}, done: make(chan struct{})}
	go b.readLoop()
	return b, nil
}

// readLoop hands each message to the command waiting for it or to the
// event function, until the connection ends.
func (b *bidi) readLoop() {
	defer close(b.done)
	for {
		_, data, err := b.ws.Read(context.Background())
		if err != nil {
			b.end(fmt.Errorf("webdriver bidi: connection closed: %w", err))
			return
		}
		var m message
		if err := json.Unmarshal(data, &m); err != nil {
			b.end(fmt.Errorf("webdriver bidi: unreadable message: %w", err))
			return
		}
		b.dispatch(m)
	}
}

// dispatch hands m to its command or to the event function.
func (b *bidi) dispatch(m message) {
	b.mu.Lock()
	if m.ID == nil {
		onEvent := b.onEvent
		b.mu.Unlock()
		if m.Type == "event" && onEvent != nil {
			onEvent(m.Method, m.Params)
		}
		return
	}
	ch := b.waiting[*m.ID]
	delete(b.waiting, *m.ID)
	b.mu.Unlock()
	if ch == nil {
		return
	}
	if m.Type == "error" {
		ch <- reply{err: fmt.Errorf("%s: %s", m.Error, m.Message)}
		return
	}
	ch <- reply{result: m.Result}
}

// end fails every waiting command with err and every later one.
func (b *bidi) end(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == nil {
		b.err = err
	}
	for id, ch := range b.waiting {
		ch <- reply{err: b.err}
		delete(b.waiting, id)
	}
}

// setOnEvent sets the function that gets every event (nil: none). It is
// called on the reading goroutine: it must not block.
func (b *bidi) setOnEvent(fn func(method string, params json.RawMessage)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.onEvent = fn
}

// call sends the command method with params and decodes its result into
// result (nil: drop it).
func (b *bidi) call(ctx context.Context, method string, params, result any) error {
	if params == nil {
		params = struct{}{}
	}
	ch := make(chan reply, 1)
	b.mu.Lock()
	if b.err != nil {
		b.mu.Unlock()
		return fmt.Errorf("%s: %w", method, b.err)
	}
	b.next++
	id := b.next
	b.waiting[id] = ch
	b.mu.Unlock()
	data, err := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if err := b.ws.Write(ctx, websocket.MessageText, data); err != nil {
		b.forget(id)
		return fmt.Errorf("%s: send: %w", method, err)
	}
	select {
	case <-ctx.Done():
		b.forget(id)
		return fmt.Errorf("%s: %w", method, ctx.Err())
	case r := <-ch:
		if r.err != nil {
			return fmt.Errorf("%s: %w", method, r.err)
		}
		if result == nil {
			return nil
		}
		if err := json.Unmarshal(r.result, result); err != nil {
			return fmt.Errorf("%s: read the result: %w", method, err)
		}
		return nil
	}
}

// forget stops waiting for command id's answer.
func (b *bidi) forget(id int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.waiting, id)
}

// close closes the connection and waits for the reading goroutine.
func (b *bidi) close() {
	b.ws.CloseNow()
	<-b.done
}
