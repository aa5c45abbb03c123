package firefox

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestUnknownHostWatcher: of the failed requests (BiDi's
// network.fetchError), only those whose host did not resolve are listed,
// once, and take forgets them.
func TestUnknownHostWatcher(t *testing.T) {
	w := newUnknownHostWatcher()
	event := func(method, id, url, errorText string) {
		params, _ := json.Marshal(map[string]any{"request": map[string]string{"request": id, "url": url, "method": "GET"}, "errorText": errorText})
		w.event(method, params)
	}
	event("network.beforeRequestSent", "1", "https://cdn.unknown.test/a.png", "")
	event("network.beforeRequestSent", "2", "https://www.page.test/b.js", "")
	event("network.beforeRequestSent", "3", "https://www.page.test/c.css", "")
	event("network.fetchError", "1", "https://cdn.unknown.test/a.png", unknownHostError)
	event("network.fetchError", "2", "https://www.page.test/b.js", "NS_BINDING_ABORTED")
	event("network.responseCompleted", "3", "https://www.page.test/c.css", "")
	event("network.fetchError", "3", "https://www.page.test/c.css", unknownHostError) // after it completed
	w.event("network.fetchError", json.RawMessage(`{"request":`))                     // cut short: ignored
	got := w.take()
	if got.Count != 1 || !slices.Equal(got.Requests, []string{"GET https://cdn.unknown.test/a.png"}) {
		t.Errorf("listed %+v", got)
	}
	if again := w.take(); again.Count != 0 {
		t.Errorf("take did not forget: %+v", again)
	}
}
