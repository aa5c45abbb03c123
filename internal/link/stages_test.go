package link

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
)

var t0 = time.Unix(1000, 0)

func ms(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }

func TestGilbertElliottStationaryLossRate(t *testing.T) {
	models := []GilbertElliott{
		{P: 0.01, R: 0.3, LossBad: 1, LossGood: 0},       // Gilbert: 3.2% in bursts of ~3.3
		{P: 0.05, R: 0.5, LossBad: 0.8, LossGood: 0.001}, // Gilbert-Elliott
		{P: 0.001, R: 0.1, LossBad: 0.5, LossGood: 0.0},
	}
	for _, g := range models {
		const n = 400_000
		d := mustNew(t, Config{GilbertElliott: &g, Seed: 3})
		for range n {
			d.Send(t0, 100)
		}
		got := float64(d.Stats().DroppedLoss) / n
		want := g.StationaryLoss()
		tol := 3.3 * math.Sqrt(g.AsymptoticVariance()/n) // 99.9%
		if math.Abs(got-want) > tol {
			t.Errorf("%+v: loss rate %.5f, want %.5f ± %.5f", g, got, want, tol)
		}
	}
}

func TestGilbertLossComesInBursts(t *testing.T) {
	g := GilbertElliott{P: 0.01, R: 0.25, LossBad: 1, LossGood: 0}
	d := mustNew(t, Config{GilbertElliott: &g, Seed: 11})
	bursts, lost, inBurst := 0, 0, false
	for range 400_000 {
		_, v := d.Send(t0, 100)
		if v == DroppedLoss {
			lost++
			if !inBurst {
				bursts++
			}
		}
		inBurst = v == DroppedLoss
	}
	// Bursts of the bad state last 1/r = 4 packets on average (geometric).
	if mean := float64(lost) / float64(bursts); math.Abs(mean-4) > 0.25 {
		t.Errorf("mean burst %.2f packets (%d losses in %d bursts), want 4 ± 0.25", mean, lost, bursts)
	}
}

func TestGilbertElliottValidate(t *testing.T) {
	bad := []GilbertElliott{{P: -0.1, R: 0.5}, {P: 0.1, R: 1.5}, {P: 0.1, R: 0}, {P: 0.1, R: 0.2, LossBad: math.NaN()}}
	for _, g := range bad {
		if _, err := New(Config{GilbertElliott: &g}, t0); err == nil {
			t.Errorf("accepted %+v", g)
		}
	}
	if _, err := New(Config{Loss: 0.1, GilbertElliott: &GilbertElliott{P: 0.1, R: 0.1}}, t0); err == nil {
		t.Error("accepted Bernoulli and Gilbert-Elliott at once")
	}
}

func trace(ms ...int64) *Trace { return &Trace{Name: "test", Ms: ms} }

// departures sends packets (arrival offset, size) and returns their delivery
// offsets from t0 (the link has no delay).
func departures(t *testing.T, tr *Trace, packets [][2]float64) []time.Duration {
	t.Helper()
	d := mustNewAt(t, Config{Trace: tr}, t0)
	var out []time.Duration
	for _, p := range packets {
		at, v := d.Send(t0.Add(ms(p[0])), int(p[1]))
		if v != Delivered {
			t.Fatalf("packet %v: %v", p, v)
		}
		out = append(out, at.Sub(t0))
	}
	return out
}

func mustNewAt(t *testing.T, cfg Config, start time.Time) *Direction {
	t.Helper()
	d, err := New(cfg, start)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestTraceSemantics checks each rule of Mahimahi's LinkQueue.
func TestTraceSemantics(t *testing.T) {
	tests := []struct {
		name    string
		trace   *Trace
		packets [][2]float64 // arrival ms, size
		want    []float64    // departure ms
	}{
		{"one opportunity per ms", trace(1), [][2]float64{{0, 1500}, {0, 1500}, {0, 1500}}, []float64{1, 2, 3}},
		{"repeated times are several opportunities", trace(1, 1, 3), [][2]float64{{0, 1500}, {0, 1500}, {0, 1500}, {0, 1500}, {0, 1500}}, []float64{1, 1, 3, 4, 4}},
		{"small packets share an opportunity", trace(1), [][2]float64{{0, 500}, {0, 500}, {0, 500}, {0, 500}}, []float64{1, 1, 1, 2}},
		{"a packet spans opportunities", trace(1), [][2]float64{{0, 1000}, {0, 1000}, {0, 1000}}, []float64{1, 2, 2}},
		{"an arrival at the opportunity's time uses it", trace(1), [][2]float64{{2, 1500}}, []float64{2}},
		{"an arrival between opportunities waits", trace(1), [][2]float64{{1.5, 1500}}, []float64{2}},
		{"leftover bytes are lost when the queue empties", trace(1), [][2]float64{{0, 500}, {1.5, 500}}, []float64{1, 2}},
		{"leftover bytes serve a packet that waited", trace(10), [][2]float64{{0, 500}, {5, 500}}, []float64{10, 10}},
		{"the trace wraps at its last time", trace(5), [][2]float64{{0, 1500}, {0, 1500}, {12, 1500}}, []float64{5, 10, 15}},
		{"a trace starting at 0 wraps onto its last time", trace(0, 4), [][2]float64{{0, 1500}, {0, 1500}, {0, 1500}, {0, 1500}}, []float64{0, 4, 4, 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := departures(t, tt.trace, tt.packets)
			for i := range tt.want {
				if got[i] != ms(tt.want[i]) {
					t.Fatalf("departures %v, want %v ms", got, tt.want)
				}
			}
		})
	}
}

// TestTraceCapacityOfRealTraces saturates a link driven by each of the real
// cellular traces for 30 s: it must deliver exactly the trace's
// opportunities in that time, one 1500-byte packet each.
func TestTraceCapacityOfRealTraces(t *testing.T) {
	files, _ := filepath.Glob("../../../shared/traces/*.down")
	if len(files) == 0 {
		t.Skip("the shared traces are not beside the repository")
	}
	for _, f := range files {
		tr, err := ReadTraceFile(f)
		if err != nil {
			t.Fatal(err)
		}
		const window = 30 * time.Second
		want := 0
		for k := int64(0); ; k++ {
			r := &traceRate{trace: tr, epoch: t0}
			if r.at(k).Sub(t0) > window {
				break
			}
			want++
		}
		d := mustNewAt(t, Config{Trace: tr}, t0)
		got := 0
		for i := 0; i <= want+10; i++ {
			at, _ := d.Send(t0, 1500)
			if at.Sub(t0) <= window {
				got++
			}
		}
		if got != want {
			t.Errorf("%s: %d packets in 30 s, want the %d opportunities", filepath.Base(f), got, want)
		}
		meanMbit := tr.MeanRate() / 1e6
		t.Logf("%s: %d opportunities in 30 s (%.2f Mbit/s); mean over the trace %.2f Mbit/s", filepath.Base(f), want, float64(want)*12000/30/1e6, meanMbit)
	}
}

func TestParseTraceErrors(t *testing.T) {
	tests := map[string]string{
		"":               "empty",
		"1\nx\n3":        "t:2: the line is not a whole number",
		"5\n3":           "t:2: 3 is before the previous line's 5",
		"-1\n2":          "t:1: -1 is negative",
		"0\n0":           "the last time is 0",
		"1\n\n2":         "t:2: the line is not a whole number of milliseconds (it is blank)",
		"1.5":            "not a whole number",
		"99999999999999": "too large",
	}
	for in, want := range tests {
		_, err := ParseTrace("t", strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseTrace(%q) = %v, want an error containing %q", in, err, want)
		}
	}
	// No error quotes the file: it may be any file the user can name.
	for _, secret := range []string{"root:$6$salt$hash:19000:0:99999:7:::", "PATH=/usr/bin\x00HOME=/root", "12\nsecret"} {
		_, err := ParseTrace("t", strings.NewReader(secret))
		if err == nil || strings.Contains(err.Error(), "root") || strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "PATH") {
			t.Errorf("ParseTrace of a non-trace: %v, want an error that quotes none of it", err)
		}
	}
	tr, err := ParseTrace("t", strings.NewReader(" 1\n1 \n3\n"))
	if err != nil || len(tr.Ms) != 3 || tr.Period() != 3*time.Millisecond {
		t.Fatalf("ParseTrace = %+v, %v", tr, err)
	}
	if got := tr.MeanRate(); got != 3*12000/0.003 {
		t.Errorf("MeanRate %v, want 12 Mbit/s", got)
	}
}

func TestReadTraceFileMissing(t *testing.T) {
	_, err := ReadTraceFile(filepath.Join(t.TempDir(), "nope.down"))
	if err == nil || !strings.Contains(err.Error(), "nope.down") || !os.IsNotExist(errorsUnwrapAll(err)) {
		t.Errorf("error %v", err)
	}
}

func errorsUnwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok || u.Unwrap() == nil {
			return err
		}
		err = u.Unwrap()
	}
}

// errorWords are the words ParseTrace's errors use themselves.
const errorWords = "trace fuzz line whole number milliseconds blank characters long trace has one time per Mahimahi negative too large before previous times must decrease empty needs least with last lines more than lasts bufio Scanner token"

func FuzzParseTrace(f *testing.F) {
	for _, s := range []string{"1", "0\n0\n1\n1\n2", "5\n3", "", "x", "1\n\n", " 7 \n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tr, err := ParseTrace("fuzz", strings.NewReader(s))
		if err != nil {
			// Nothing of the file is quoted: no run of 4 letters of it
			// appears in the error unless the message has it anyway.
			for _, word := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) }) {
				if len(word) >= 4 && strings.Contains(err.Error(), word) && !strings.Contains(errorWords, word) {
					t.Fatalf("the error %q quotes %q of the file", err, word)
				}
			}
			return
		}
		if tr.validate() != nil {
			t.Fatalf("ParseTrace(%q) accepted an invalid trace %v", s, tr.Ms)
		}
		d := mustNewAt(t, Config{Trace: tr}, t0)
		var last time.Time
		for i := range 20 {
			at, _ := d.Send(t0.Add(time.Duration(i)*time.Millisecond), 700)
			if at.Before(last) {
				t.Fatalf("trace %v delivered out of order", tr.Ms)
			}
			last = at
		}
	})
}

func TestQueueInPackets(t *testing.T) {
	d := mustNew(t, Config{RateBitsPerSecond: 12_000_000, QueuePackets: 2})
	var got []Verdict
	for range 4 {
		_, v := d.Send(t0, 100)
		got = append(got, v)
	}
	if got[0] != Delivered || got[1] != Delivered || got[2] != DroppedQueue || got[3] != DroppedQueue {
		t.Errorf("verdicts %v, want 2 delivered then 2 dropped", got)
	}
	if s := d.Stats(); s.PeakQueuePackets != 2 {
		t.Errorf("peak %d packets, want 2", s.PeakQueuePackets)
	}
}

func TestQueueLimitsTraceLinks(t *testing.T) {
	d := mustNewAt(t, Config{Trace: trace(10), QueueBytes: 3000}, t0)
	var got []Verdict
	for range 3 {
		_, v := d.Send(t0, 1500)
		got = append(got, v)
	}
	if got[2] != DroppedQueue {
		t.Errorf("verdicts %v: the third 1500-byte packet should overflow a 3000-byte queue", got)
	}
}

func TestJitterNeverReordersAndKeepsMeanDelay(t *testing.T) {
	d := mustNew(t, Config{Delay: 50 * time.Millisecond, Jitter: 5 * time.Millisecond, Seed: 5})
	var last time.Time
	var sum time.Duration
	const n = 2000
	for i := range n {
		now := t0.Add(time.Duration(i) * 10 * time.Millisecond)
		at, _ := d.Send(now, 100)
		delay := at.Sub(now)
		if delay < 45*time.Millisecond || delay > 55*time.Millisecond {
			t.Fatalf("packet %d delayed %v, outside 50 ± 5 ms", i, delay)
		}
		if at.Before(last) {
			t.Fatalf("packet %d reordered", i)
		}
		last = at
		sum += delay
	}
	if mean := sum / n; mean < ms(49.7) || mean > ms(50.3) {
		t.Errorf("mean delay %v, want 50 ± 0.3 ms", mean)
	}
	// Packets closer than the jitter would reorder: they must not.
	d = mustNew(t, Config{Delay: 50 * time.Millisecond, Jitter: 20 * time.Millisecond, Seed: 6})
	last = time.Time{}
	for i := range 1000 {
		at, _ := d.Send(t0.Add(time.Duration(i)*time.Millisecond), 100)
		if at.Before(last) {
			t.Fatalf("packet %d reordered under heavy jitter", i)
		}
		last = at
	}
}

func TestValidateRejectsConflicts(t *testing.T) {
	for _, c := range []Config{{Jitter: -1}, {Trace: trace(1), RateBitsPerSecond: 5}, {QueuePackets: -1}, {Trace: trace(0)}, {Trace: trace(3, 1)}} {
		if _, err := New(c, t0); err == nil {
			t.Errorf("accepted %+v", c)
		}
	}
}

// TestDropHead fills a 3-packet queue (1 ms per packet) and sends a fourth:
// drop-head drops the oldest waiting packet, p1, not the arriving one, and
// p2 moves 1 ms earlier. The same with a trace of one opportunity per ms.
func TestDropHead(t *testing.T) {
	for _, cfg := range []Config{
		{RateBitsPerSecond: 12_000_000, QueuePackets: 3, DropHead: true},
		{Trace: trace(1), QueuePackets: 3, DropHead: true},
	} {
		d := mustNewAt(t, cfg, t0)
		var at [4]time.Time
		var slots [4]*Slot
		for i := range 4 {
			var v Verdict
			at[i], v, slots[i] = d.SendTracked(t0, 1500)
			if v != Delivered || slots[i] == nil {
				t.Fatalf("packet %d: %v, slot %v", i, v, slots[i])
			}
		}
		final := func(i int) time.Duration { return at[i].Add(slots[i].Shift()).Sub(t0) }
		if !slots[1].Dropped() || slots[0].Dropped() || slots[2].Dropped() || slots[3].Dropped() {
			t.Errorf("dropped: %v %v %v %v, want only packet 1", slots[0].Dropped(), slots[1].Dropped(), slots[2].Dropped(), slots[3].Dropped())
		}
		if final(0) != ms(1) || final(2) != ms(2) || final(3) != ms(3) {
			t.Errorf("packets 0, 2, 3 leave at %v %v %v, want 1 2 3 ms", final(0), final(2), final(3))
		}
		if s := d.Stats(); s.DroppedQueue != 1 || s.Delivered != 3 {
			t.Errorf("stats %+v, want 1 queue drop, 3 delivered", s)
		}
	}
}

func TestDropHeadWithOnlyThePacketInService(t *testing.T) {
	d := mustNew(t, Config{RateBitsPerSecond: 12_000_000, QueuePackets: 1, DropHead: true})
	d.SendTracked(t0, 1500)
	if _, v, _ := d.SendTracked(t0, 1500); v != DroppedQueue {
		t.Errorf("%v: nothing waits behind the packet in service, so the arriving one must go", v)
	}
}

func TestDropHeadKeepsOrderUnderJitter(t *testing.T) {
	d := mustNew(t, Config{Delay: 20 * time.Millisecond, Jitter: 5 * time.Millisecond, RateBitsPerSecond: 12_000_000, QueuePackets: 5, DropHead: true, Seed: 9})
	type sent struct {
		at   time.Time
		slot *Slot
	}
	var all []sent
	for i := range 400 {
		at, v, slot := d.SendTracked(t0.Add(time.Duration(i)*300*time.Microsecond), 1500)
		if v == Delivered {
			all = append(all, sent{at, slot})
		}
	}
	var last time.Time
	for i, p := range all {
		if p.slot.Dropped() {
			continue
		}
		final := p.at.Add(p.slot.Shift())
		if final.Before(last) {
			t.Fatalf("packet %d reordered by a drop-head", i)
		}
		if p.slot.Shift() > 0 {
			t.Fatalf("packet %d moved later", i)
		}
		last = final
	}
	if d.Stats().DroppedQueue == 0 {
		t.Fatal("the overloaded queue never dropped")
	}
}
