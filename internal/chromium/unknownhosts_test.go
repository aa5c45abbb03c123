package chromium

import (
	"slices"
	"testing"

	"github.com/chromedp/cdproto/network"

	"github.com/quicbench/quicbench/internal/client"
)

// TestUnknownHostWatcher: of the failed requests, only those whose name
// did not resolve are listed, once, and Take forgets them.
func TestUnknownHostWatcher(t *testing.T) {
	var log client.UnknownHostLog
	event := unknownHostEvents(&log)
	sent := func(id, url string) {
		event(&network.EventRequestWillBeSent{RequestID: network.RequestID(id), Request: &network.Request{Method: "GET", URL: url}})
	}
	sent("1", "https://cdn.unknown.test/a.png")
	sent("2", "https://www.page.test/b.js")
	sent("3", "https://www.page.test/c.css")
	event(&network.EventLoadingFailed{RequestID: "1", ErrorText: nameNotResolved})
	event(&network.EventLoadingFailed{RequestID: "2", ErrorText: "net::ERR_ABORTED"})
	event(&network.EventLoadingFinished{RequestID: "3"})
	event(&network.EventLoadingFailed{RequestID: "3", ErrorText: nameNotResolved}) // after it finished: no request
	got := log.Take()
	if got.Count != 1 || !slices.Equal(got.Requests, []string{"GET https://cdn.unknown.test/a.png"}) {
		t.Errorf("listed %+v", got)
	}
	if again := log.Take(); again.Count != 0 || len(again.Requests) != 0 {
		t.Errorf("Take did not forget: %+v", again)
	}
}
