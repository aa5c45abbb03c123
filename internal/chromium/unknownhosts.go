package chromium

import (
	"sync"

	"github.com/chromedp/cdproto/network"

	"github.com/quicbench/quicbench/internal/client"
)

// nameNotResolved is the error text of a request whose host Chromium could
// not resolve: ResolverRules maps every name but the page's hosts to
// ~NOTFOUND.
const nameNotResolved = "net::ERR_NAME_NOT_RESOLVED"

// unknownHostWatcher lists the requests of a visit that failed because
// their host is none of the page's: for a recording, the hosts it lacks.
// Such requests never reach a server, so the servers' replay cannot count
// them. It needs Network.enable.
type unknownHostWatcher struct {
	mu       sync.Mutex
	requests map[network.RequestID]string // "METHOD URL" of requests not yet finished
	failed   client.UnknownHostLog
}

func newUnknownHostWatcher() *unknownHostWatcher {
	return &unknownHostWatcher{requests: map[network.RequestID]string{}}
}

// event is the chromedp.Listen callback: it only files the event.
func (w *unknownHostWatcher) event(ev any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		if e.Request != nil {
			w.requests[e.RequestID] = e.Request.Method + " " + e.Request.URL
		}
	case *network.EventLoadingFinished:
		delete(w.requests, e.RequestID)
	case *network.EventLoadingFailed:
		if request, ok := w.requests[e.RequestID]; ok && e.ErrorText == nameNotResolved {
			w.failed.Add(request)
		}
		delete(w.requests, e.RequestID)
	}
}

// take returns the failed requests so far and forgets them.
func (w *unknownHostWatcher) take() client.UnknownHostRequests { return w.failed.Take() }
