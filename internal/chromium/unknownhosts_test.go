package chromium

import (
	"slices"
	"testing"

	"github.com/chromedp/cdproto/network"
)

// TestUnknownHostWatcher: of the failed requests, only those whose name
// did not resolve are listed, once, and take forgets them.
func TestUnknownHostWatcher(t *testing.T) {
	w := newUnknownHostWatcher()
	sent := func(id, url string) {
		w.event(&network.EventRequestWillBeSent{RequestID: network.RequestID(id), Request: &network.Request{Method: "GET", URL: url}})
	}
	sent("1", "https://cdn.unknown.test/a.png")
	sent("2", "https://www.page.test/b.js")
	sent("3", "https://www.page.test/c.css")
	w.event(&network.EventLoadingFailed{RequestID: "1", ErrorText: nameNotResolved})
	w.event(&network.EventLoadingFailed{RequestID: "2", ErrorText: "net::ERR_ABORTED"})
	w.event(&network.EventLoadingFinished{RequestID: "3"})
	w.event(&network.EventLoadingFailed{RequestID: "3", ErrorText: nameNotResolved}) // after it finished: no request
	got := w.take()
	if got.Count != 1 || !slices.Equal(got.Requests, []string{"GET https://cdn.unknown.test/a.png"}) {
		t.Errorf("listed %+v", got)
	}
	if again := w.take(); again.Count != 0 || len(again.Requests) != 0 {
		t.Errorf("take did not forget: %+v", again)
	}
}
