package firefox

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// fakeBrowser answers BiDi commands as a test says: a stand-in for the
// browser's endpoint in tests of the connection's own logic.
func fakeBrowser(t *testing.T, answer func(ws *websocket.Conn, id int, method string)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		for {
			_, data, err := ws.Read(r.Context())
			if err != nil {
				return
			}
			var cmd struct {
				ID     int    `json:"id"`
				Method string `json:"method"`
			}
			json.Unmarshal(data, &cmd)
			answer(ws, cmd.ID, cmd.Method)
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/session"
}

func send(ws *websocket.Conn, v any) {
	data, _ := json.Marshal(v)
	ws.Write(context.Background(), websocket.MessageText, data)
}

// TestBiDiMatchesAnswersToCommands: each command gets its own answer,
// events in between go elsewhere, and an error answer is an error that
// names the method and the browser's message.
func TestBiDiMatchesAnswersToCommands(t *testing.T) {
	url := fakeBrowser(t, func(ws *websocket.Conn, id int, method string) {
		send(ws, map[string]any{"type": "event", "method": "log.entryAdded", "params": map[string]any{}})
		if method == "bad.command" {
			send(ws, map[string]any{"type": "error", "id": id, "error": "unknown command", "message": "no such thing"})
			return
		}
		send(ws, map[string]any{"type": "success", "id": id, "result": map[string]any{"method": method}})
	})
	b, err := dialBiDi(t.Context(), url, (&net.Dialer{}).DialContext)
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	for _, m := range []string{"session.new", "browsingContext.getTree", "script.evaluate"} {
		var r struct{ Method string }
		if err := b.call(t.Context(), m, nil, &r); err != nil || r.Method != m {
			t.Errorf("%s: answer %q, %v", m, r.Method, err)
		}
	}
	err = b.call(t.Context(), "bad.command", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "bad.command: unknown command: no such thing") {
		t.Errorf("error answer gave %v", err)
	}
}

// TestBiDiFailsWaitingCommandsWhenTheBrowserGoes: a command waiting when
// the connection ends fails at once, and so does every later one.
func TestBiDiFailsWaitingCommandsWhenTheBrowserGoes(t *testing.T) {
	url := fakeBrowser(t, func(ws *websocket.Conn, id int, method string) { ws.CloseNow() })
	b, err := dialBiDi(t.Context(), url, (&net.Dialer{}).DialContext)
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := b.call(ctx, "session.new", nil, nil); err == nil || ctx.Err() != nil {
		t.Fatalf("a command on a closed connection gave %v (context %v)", err, ctx.Err())
	}
	if err := b.call(ctx, "session.new", nil, nil); err == nil {
		t.Fatal("a later command succeeded")
	}
}
