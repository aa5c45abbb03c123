package firefox

import (
	"encoding/json"
	"sync"

	"github.com/quicbench/quicbench/internal/client"
)

// unknownHostError is BiDi's errorText for a request whose host Firefox
// could not resolve: its /etc/hosts names only the page's hosts.
const unknownHostError = "NS_ERROR_UNKNOWN_HOST"

// unknownHostWatcher lists the requests of a visit that failed because
// their host is none of the page's: for a recording, the hosts it lacks.
// Such requests never reach a server, so the servers' replay cannot count
// them.
type unknownHostWatcher struct {
	mu       sync.Mutex
	requests map[string]string // "METHOD URL" of requests not yet completed, by id
	failed   client.UnknownHostLog
}

func newUnknownHostWatcher() *unknownHostWatcher {
	return &unknownHostWatcher{requests: map[string]string{}}
}

// event files one network event; it runs on the connection's reading
// goroutine and never blocks.
func (w *unknownHostWatcher) event(method string, params json.RawMessage) {
	var e struct {
		Request   bidiRequest `json:"request"`
		ErrorText string      `json:"errorText"`
	}
	if json.Unmarshal(params, &e) != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	id := e.Request.ID
	switch method {
	case "network.beforeRequestSent":
		w.requests[id] = e.Request.Method + " " + e.Request.URL
	case "network.responseCompleted":
		delete(w.requests, id)
	case "network.fetchError":
		if request, ok := w.requests[id]; ok && e.ErrorText == unknownHostError {
			w.failed.Add(request)
		}
		delete(w.requests, id)
	}
}

// take returns the failed requests so far and forgets them.
func (w *unknownHostWatcher) take() client.UnknownHostRequests { return w.failed.Take() }
