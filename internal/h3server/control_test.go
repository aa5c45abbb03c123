package h3server

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/stacks"
)

// transcriptDir holds the control protocol's transcript, which the
// server's cargo test checks too.
var transcriptDir = filepath.Join("..", "..", "servers", "common", "testdata")

// step is a line of the transcript: fromServer for "<", else ">".
type step struct {
	fromServer bool
	line       string
}

func readTranscript(t *testing.T) []step {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(transcriptDir, "control.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var steps []step
	for _, l := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(l, "< "):
			steps = append(steps, step{true, l[2:]})
		case strings.HasPrefix(l, "> "):
			steps = append(steps, step{false, l[2:]})
		case l != "" && !strings.HasPrefix(l, "#"):
			t.Fatalf("transcript line %q is neither a comment nor < or >", l)
		}
	}
	return steps
}

// fakeServer plays the server's side of steps over the pipes: it writes
// each "<" line and reads each ">" line, which must be the transcript's.
func fakeServer(t *testing.T, steps []step, commands io.Reader, replies io.WriteCloser) <-chan []string {
	wrong := make(chan []string, 1)
	go func() {
		defer replies.Close()
		in := bufio.NewReader(commands)
		var errs []string
		for _, s := range steps {
			if s.fromServer {
				io.WriteString(replies, s.line+"\n")
				continue
			}
			got, err := in.ReadString('\n')
			if got = strings.TrimSuffix(got, "\n"); err != nil || got != s.line {
				errs = append(errs, "quicbench wrote "+got+", the transcript says "+s.line)
			}
		}
		wrong <- errs
	}()
	return wrong
}

// TestControlTranscript drives the transcript's commands through
// quicbench's side of the protocol (the methods the testbed calls) against
// a fake server that answers as the transcript does: quicbench must write
// exactly its commands and read its replies into what they mean.
func TestControlTranscript(t *testing.T) {
	steps := readTranscript(t)
	commandsR, commandsW := io.Pipe()
	repliesR, repliesW := io.Pipe()
	s := over(BinaryQuinn, commandsW, repliesR)
	wrong := fakeServer(t, steps, commandsR, repliesW)
	if err := s.readLine(&s.Ready, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if want := (stacks.QUICTransport{Congestion: "cubic", InitialWindowBytes: 32 * 1200, Pacing: true}); s.QUICTransport() != want {
		t.Errorf("ready: %+v, want %+v", s.QUICTransport(), want)
	}
	calls := []struct {
		command string
		call    func() error
	}{
		{"cache on", func() error { return s.SetCache(true) }},
		{"counts", func() error {
			c, err := s.Counts()
			if err == nil && c != (server.Counts{H3: 4}) {
				t.Errorf("counts %+v, want four h3 requests", c)
			}
			return err
		}},
		{"replay", func() error {
			return wantReplay(t, s, server.Replay{Exact: 1, Fuzzy: 1, Variant: 1, Unmatched: 1,
				UnmatchedRequests: []string{"GET https://www.quicbench.test/missing"}, BodyBytes: 5120})
		}},
		{"replay", func() error { return wantReplay(t, s, server.Replay{}) }},
		{"qlog /run/quicbench/qlog", func() error { return s.SetQlogDir("/run/quicbench/qlog") }},
		{"qlog off", func() error { return s.SetQlogDir("") }},
		{"conns", func() error {
			recs, err := s.Connections()
			if err == nil && len(recs) != 0 {
				t.Errorf("records %+v, want none", recs)
			}
			return err
		}},
		{"close", s.CloseConnections},
		{"cache off", func() error { return s.SetCache(false) }},
		{"status", func() error {
			if err := s.do("status", &struct{}{}); err == nil || !strings.Contains(err.Error(), "unknown command") {
				t.Errorf("an unknown command gave error %v", err)
			}
			return nil
		}},
	}
	var sent []string
	for _, st := range steps {
		if !st.fromServer {
			sent = append(sent, st.line)
		}
	}
	var ours []string
	for _, c := range calls {
		ours = append(ours, c.command)
		if err := c.call(); err != nil {
			t.Errorf("%s: %v", c.command, err)
		}
	}
	if !slices.Equal(ours, sent) {
		t.Errorf("the test's calls %q are not the transcript's commands %q", ours, sent)
	}
	commandsW.Close()
	if errs := <-wrong; len(errs) > 0 {
		t.Errorf("the fake server saw: %s", strings.Join(errs, "; "))
	}
}

func wantReplay(t *testing.T, s *Server, want server.Replay) error {
	got, err := s.TakeReplay()
	if len(got.UnmatchedRequests) == 0 {
		got.UnmatchedRequests = nil // [] in the reply
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Errorf("replay %+v, want %+v", got, want)
	}
	return err
}

// TestRecordAsTheServerWritesIt reads testdata/record.json, which the
// server's cargo test writes from a record of its own, into a connection
// record.
func TestRecordAsTheServerWritesIt(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(transcriptDir, "record.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r Record
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&r); err != nil {
		t.Fatal(err)
	}
	got := r.connRecord()
	want := server.ConnRecord{Transport: "quic", ALPN: "h3", ServerName: "www.quicbench.test", Remote: "198.18.0.1:40123", Handshake: "0rtt",
		Requests: 33, OpenedAt: time.Unix(0, 1764000000123456789), BytesSent: 354210, BytesReceived: 12040, Congestion: "cubic",
		SmoothedRTTMs: 101.5, CwndBytes: 98304, Retransmits: 3,
		Serving: []server.Window{{From: time.Unix(0, 1764000000200000000), To: time.Unix(0, 1764000000200400000)}}}
	if !got.OpenedAt.Equal(want.OpenedAt) {
		t.Errorf("opened at %v, want %v", got.OpenedAt, want.OpenedAt)
	}
	if len(got.Serving) != 1 || !got.Serving[0].From.Equal(want.Serving[0].From) || !got.Serving[0].To.Equal(want.Serving[0].To) {
		t.Errorf("serving %v, want %v", got.Serving, want.Serving)
	}
	got.OpenedAt, got.Serving = want.OpenedAt, want.Serving
	if !reflect.DeepEqual(got, want) {
		t.Errorf("record\n got %+v\nwant %+v", got, want)
	}
}

// TestStallsCrossTheControlProtocol: a Go origin's record with stalls
// reads back with the same stalls, to the nanosecond; one without has
// none (the Rust servers send none).
func TestStallsCrossTheControlProtocol(t *testing.T) {
	t0 := time.Unix(1764000000, 123456789)
	rec := server.ConnRecord{Transport: "quic", OpenedAt: t0, Stalls: []server.Window{{From: t0, To: t0.Add(81 * time.Millisecond)}}}
	data, err := json.Marshal(RecordOf(rec))
	if err != nil {
		t.Fatal(err)
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	got := r.connRecord().Stalls
	if len(got) != 1 || !got[0].From.Equal(t0) || got[0].To.Sub(got[0].From) != 81*time.Millisecond {
		t.Errorf("stalls %v from %s", got, data)
	}
	rec.Stalls = nil
	if data, _ := json.Marshal(RecordOf(rec)); strings.Contains(string(data), "stalls") {
		t.Errorf("a record without stalls writes them: %s", data)
	}
}
