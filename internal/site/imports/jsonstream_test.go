package imports

import (
	"bufio"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestReadWPRStreams: keys with escapes (encoding/json writes & as
// \u0026), other keys of every kind skipped, null messages, and the
// shapes it refuses.
func TestReadWPRStreams(t *testing.T) {
	req := base64.StdEncoding.EncodeToString([]byte("GET /?a=1&b=2 HTTP/1.1\r\nHost: a.test\r\n\r\n"))
	text := `{"Certs": {"a.test": ["x", 1.5e3, true, null, {"k": [false]}]}, "Requests": {"a.test": {"https://a.test/?a=1\u0026b=2 \ud83d\ude00": [` +
		`{"SerializedRequest": "` + req + `", "SerializedResponse": null, "Other": {"n": -1}}]}}, "NegotiatedProtocol": {"a.test": "h2"}, "DeterministicTimeSeedMs": 1714564800000}`
	items, recordedAt, err := readWPR(&jsonStream{r: bufio.NewReader(strings.NewReader(text))})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].host != "a.test" || items[0].url != "https://a.test/?a=1&b=2 😀" ||
		!strings.HasPrefix(string(items[0].entry.SerializedRequest), "GET /?a=1&b=2") || items[0].entry.SerializedResponse != nil {
		t.Errorf("items %+v", items)
	}
	if !recordedAt.Equal(time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("recorded at %v, want the time seed 2024-05-01 12:00 UTC", recordedAt)
	}
	for in, want := range map[string]error{
		`{"Requests": []}`: errNotWPR,
		`{"Requests": {"a": {"u": [{"SerializedRequest": "!!"}]}}}`: nil, // not base64: named below
		`{"Requests": {"a": {"u": [}}}`:                             errNotWPR,
		`{"Requests": {"a": {"u": [{},]}}}`:                         errNotWPR,
		`{"Requests": {"a" "u"}}`:                                   errNotWPR,
		`{"Requests": {"a": {"u": [{"x": tru}]}}}`:                  errJSON,
		`{"Requests": {`:                                            nil,
		`{"DeterministicTimeSeedMs": 1e}`:                           errJSON,
	} {
		_, _, err := readWPR(&jsonStream{r: bufio.NewReader(strings.NewReader(in))})
		if err == nil || want != nil && !errors.Is(err, want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want %v", in, err, want)
		}
	}
}
