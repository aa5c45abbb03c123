package firefox

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/quicbench/quicbench/internal/client"
)

// TestUnknownHostWatcher: of the failed requests (BiDi's
// network.fetchError), only those whose host did not resolve are listed,
// once, and Take forgets them.
func TestUnknownHostWatcher(t *testing.T) {
	var log client.UnknownHostLog
	event := func(method, id, url, errorText string) {
		params, _ := json.Marshal(map[string]any{"request": map[string]string{"request": id, "url": url, "method": "GET"}, "errorText": errorText})
		fileUnknownHostEvent(&log, method, params)
	}
	event("network.beforeRequestSent", "1", "https://cdn.unknown.test/a.png", "")
	event("network.beforeRequestSent", "2", "https://www.page.test/b.js", "")
	event("network.beforeRequestSent", "3", "https://www.page.test/c.css", "")
	event("network.fetchError", "1", "https://cdn.unknown.test/a.png", unknownHostError)
	event("network.fetchError", "2", "https://www.page.test/b.js", "NS_BINDING_ABORTED")
	event("network.responseCompleted", "3", "https://www.page.test/c.css", "")
	event("network.fetchError", "3", "https://www.page.test/c.css", unknownHostError) // after it completed
	fileUnknownHostEvent(&log, "network.fetchError", json.RawMessage(`{"request":`))  // cut short: ignored
	got := log.Take()
	if got.Count != 1 || !slices.Equal(got.Requests, []string{"GET https://cdn.unknown.test/a.png"}) {
		t.Errorf("listed %+v", got)
	}
	if again := log.Take(); again.Count != 0 {
		t.Errorf("Take did not forget: %+v", again)
	}
}
