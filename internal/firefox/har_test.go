package firefox

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"

	"github.com/quicbench/quicbench/internal/client"
)

// replayEvents feeds the events Firefox 153 sent during a load of a page
// of two images over h2 (recorded from the real browser) to h.
func replayEvents(t *testing.T, h *harRecorder) {
	t.Helper()
	f, err := os.Open("testdata/bidi-network-events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var ev struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		h.event(ev.Method, ev.Params)
	}
}

// TestHARFromFirefoxEvents turns a real load's events into HAR entries:
// the data: URL Firefox loads for itself left out, the document on a new
// connection with DNS, connect and TLS phases, the images on the reused
// one without them, in the order they started.
func TestHARFromFirefoxEvents(t *testing.T) {
	h := newHARRecorder("")
	replayEvents(t, h)
	out := h.build("https://www.quicbench.test/", "v1", client.PageMetrics{DCLMs: 50, OnLoadMs: 90})
	if len(out.Log.Entries) != 3 {
		t.Fatalf("%d entries, want the document and 2 images", len(out.Log.Entries))
	}
	doc, img := out.Log.Entries[0], out.Log.Entries[1]
	if doc.Request.URL != "https://www.quicbench.test/" || doc.Response.HTTPVersion != "h2" || doc.Response.Status != 200 {
		t.Errorf("first entry %s %s %d", doc.Request.URL, doc.Response.HTTPVersion, doc.Response.Status)
	}
	if doc.Timings.DNS < 0 || doc.Timings.Connect <= 0 || doc.Timings.SSL <= 0 || doc.Timings.SSL > doc.Timings.Connect {
		t.Errorf("the document's phases %+v", doc.Timings)
	}
	if img.Timings.DNS != -1 || img.Timings.Connect != -1 || img.Timings.SSL != -1 || img.Timings.Wait <= 0 || img.Response.BodySize != 3000 {
		t.Errorf("an image on the open connection: phases %+v, body %d B", img.Timings, img.Response.BodySize)
	}
	if !out.Log.Pages[0].StartedDateTime.Equal(doc.StartedDateTime) || out.Log.Pages[0].PageTimings.OnLoad != 90 || out.Log.Creator.Version != "v1" {
		t.Errorf("page %+v, creator %+v", out.Log.Pages[0], out.Log.Creator)
	}
	h.Reset()
	if got := h.build("x", "", client.PageMetrics{}); len(got.Log.Entries) != 0 {
		t.Errorf("after reset: %d entries", len(got.Log.Entries))
	}
}

// FuzzHAREvent: no event, however malformed, makes the recorder panic,
// and the HAR it builds stays writable.
func FuzzHAREvent(f *testing.F) {
	f.Add("network.responseCompleted", []byte(`{"request":{"request":"1","url":"https://a/","timings":{"requestTime":1,"requestStart":2}},"response":{"protocol":"h3","status":200}}`))
	f.Add("network.fetchError", []byte(`{"request":{"request":"1","url":"https://a/"}}`))
	f.Add("network.beforeRequestSent", []byte(`{"request":{"request":"2","url":"http://b/","timings":{"requestTime":1e300}}}`))
	f.Fuzz(func(t *testing.T, method string, params []byte) {
		h := newHARRecorder("")
		h.event(method, params)
		h.event("network.responseCompleted", params)
		out := h.build("https://a/", "", client.PageMetrics{})
		if _, err := json.Marshal(out); err != nil {
			t.Fatalf("HAR not writable: %v", err)
		}
	})
}
