package har

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRoundTripAndTotal(t *testing.T) {
	h := New("quicbench-test", "1")
	h.Log.Pages = append(h.Log.Pages, Page{StartedDateTime: time.Unix(1_800_000_000, 0).UTC(), ID: "page_1", PageTimings: PageTimings{OnContentLoad: 10, OnLoad: 20}})
	timings := Timings{Blocked: 1, DNS: -1, Connect: 30, SSL: 20, Send: 0.5, Wait: 40, Receive: 5}
	h.Log.Entries = append(h.Log.Entries, Entry{Pageref: "page_1", Time: timings.Total(), Timings: timings,
		Request: Request{Method: "GET", URL: "https://a.test/", Headers: []NameValue{}, Cookies: []NameValue{}, QueryString: []NameValue{}}})
	// SSL is part of Connect and DNS does not apply: 1 + 30 + 0.5 + 40 + 5.
	if got := timings.Total(); got != 76.5 {
		t.Errorf("Total = %v, want 76.5", got)
	}
	path := filepath.Join(t.TempDir(), "x.har")
	if err := h.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Log.Version != "1.2" || got.Log.Creator.Name != "quicbench-test" || len(got.Log.Entries) != 1 || got.Log.Entries[0].Time != 76.5 ||
		got.Log.Pages[0].PageTimings.OnLoad != 20 {
		t.Errorf("read back %+v", got.Log)
	}
	data, _ := os.ReadFile(path)
	for _, key := range []string{`"cookies": []`, `"queryString": []`, `"startedDateTime"`, `"pageTimings"`} {
		if !strings.Contains(string(data), key) {
			t.Errorf("the file lacks %s, which HAR 1.2 requires", key)
		}
	}
	os.WriteFile(path, []byte(`{"log": {}}`), 0o644)
	if _, err := ReadFile(path); err == nil || !strings.Contains(err.Error(), "not a HAR file") {
		t.Errorf("a file without log.version: %v", err)
	}
}

// FuzzParse: any bytes either fail with an error or give a HAR that
// writes back and reads again with the same entries.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"log":{"version":"1.2","creator":{"name":"x","version":"1"},"pages":[],"entries":[]}}`))
	f.Add([]byte(`{"log":{"version":"1.2","entries":[{"request":{"method":"GET","url":"https://a.test/"},"response":{"status":200,"content":{"size":3,"text":"YWJj","encoding":"base64"}}}]}}`))
	f.Add([]byte(`{"log":{}}`))
	f.Add([]byte(`[1,2`))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := Parse(b)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("a multi-line error: %q", err)
			}
			return
		}
		out, err := json.Marshal(h)
		if err != nil {
			t.Fatalf("a parsed HAR does not write back: %v", err)
		}
		again, err := Parse(out)
		if err != nil || len(again.Log.Entries) != len(h.Log.Entries) {
			t.Fatalf("written back, it reads as %v entries (%v), want %d", again, err, len(h.Log.Entries))
		}
	})
}

// TestEmptyStartTimesAndPseudoHeaderMethods: a HAR whose entries and pages
// have empty or null startedDateTime and whose methods appear only as
// the :method pseudo-header (as TracerBench writes them) parses, with zero
// times and the pseudo-header's method; a time that is neither RFC 3339
// nor empty is still refused.
func TestEmptyStartTimesAndPseudoHeaderMethods(t *testing.T) {
	doc := `{"log":{"version":"1.2","creator":{"name":"TracerBench"},"pages":[{"startedDateTime":"","id":"p1","title":"https://a.test/"}],
	"entries":[{"pageref":"p1","startedDateTime":"","request":{"method":"","url":"https://a.test/","headers":[{"name":":method","value":"GET"}]},"response":{"status":200}},
	{"startedDateTime":null,"request":{"method":"POST","url":"https://a.test/x"},"response":{"status":204}},
	{"startedDateTime":"2020-01-02T03:04:05.5Z","request":{"url":"https://a.test/y"},"response":{"status":200}}]}}`
	h, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	e := h.Log.Entries
	if !h.Log.Pages[0].StartedDateTime.IsZero() || !e[0].StartedDateTime.IsZero() || !e[1].StartedDateTime.IsZero() || e[2].StartedDateTime.Year() != 2020 || e[0].Pageref != "p1" {
		t.Errorf("times %v %v %v %v", h.Log.Pages[0].StartedDateTime, e[0].StartedDateTime, e[1].StartedDateTime, e[2].StartedDateTime)
	}
	if e[0].Request.EffectiveMethod() != "GET" || e[1].Request.EffectiveMethod() != "POST" || e[2].Request.EffectiveMethod() != "" {
		t.Errorf("methods %q %q %q", e[0].Request.EffectiveMethod(), e[1].Request.EffectiveMethod(), e[2].Request.EffectiveMethod())
	}
	if _, err := Parse([]byte(strings.Replace(doc, `"startedDateTime":""`, `"startedDateTime":"yesterday"`, 1))); err == nil || !strings.Contains(err.Error(), "startedDateTime is neither an RFC 3339 time") || strings.Contains(err.Error(), "yesterday") {
		t.Errorf("a startedDateTime that is no time: %v, want it named without echoing it", err)
	}
}

// TestReadFileWithinStopsAtTheBudget: a HAR whose bodies pass the budget
// is refused as soon as they do, not after the whole file was read into
// memory (a 944 MB HAR took 2.1 GB before the import refused it); a
// base64 body counts as the bytes it decodes to.
func TestReadFileWithinStopsAtTheBudget(t *testing.T) {
	body := strings.Repeat("a", 100)
	b64 := strings.Repeat("QUJD", 25) // 100 characters, 75 bytes
	h := New("test", "1")
	for i := range 3 {
		text, enc := body, ""
		if i == 2 {
			text, enc = b64, "base64"
		}
		h.Log.Entries = append(h.Log.Entries, Entry{Request: Request{Method: "GET", URL: "https://a.test/" + strconv.Itoa(i)},
			Response: Response{Status: 200, Content: Content{Size: 100, Text: &text, Encoding: enc}}})
	}
	path := filepath.Join(t.TempDir(), "a.har")
	if err := h.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	var tooLarge *BodiesTooLargeError
	if _, err := ReadFileWithin(path, 199); !errors.As(err, &tooLarge) {
		t.Errorf("budget 199 bytes for 100 + 100 + 75: %v, want BodiesTooLargeError", err)
	}
	got, err := ReadFileWithin(path, 275)
	if err != nil || len(got.Log.Entries) != 3 {
		t.Errorf("budget 275 bytes: %v, want the 3 entries", err)
	}
	if all, err := ReadFile(path); err != nil || len(all.Log.Entries) != 3 {
		t.Errorf("no budget: %v", err)
	}
}
