package report

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/har"
	"github.com/quicbench/quicbench/internal/results"
)

// TestWaterfallOfAHugeHARIsBounded: a HAR artifact of 20,000 entries
// (round four: 140 s and 4.3 GB) draws its first maxWaterfallRows rows and
// says so, and absurd times (the largest float, NaN, negative) stay on an
// axis within results.MaxMillis.
func TestWaterfallOfAHugeHARIsBounded(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	h := har.New("bounds", "")
	for i := range 20_000 {
		tm := har.Timings{Blocked: -1, DNS: -1, Connect: -1, SSL: -1, Send: 1, Wait: 10, Receive: 5}
		total := tm.Total()
		switch i {
		case 1:
			tm.Wait, total = math.MaxFloat64, math.MaxFloat64
		case 2:
			tm.Receive, total = math.NaN(), math.Inf(1)
		}
		h.Log.Entries = append(h.Log.Entries, har.Entry{StartedDateTime: start.Add(time.Duration(i) * time.Millisecond), Timings: tm, Time: total,
			Request: har.Request{URL: fmt.Sprintf("https://a.test/%d", i)}, Response: har.Response{Status: 200}})
	}
	tr := results.Trial{ID: "t1"}
	tr.PLT = results.F(900)
	w := Waterfall{Trial: tr, HAR: h,
		Samples: []results.Sample{{AtMs: 100, QuicbenchCPUMs: 1}, {AtMs: results.MaxMillis, QuicbenchCPUMs: 2}}}
	if end := waterfallsEnd([]Waterfall{w}); !(end > 0 && end <= results.MaxMillis) {
		t.Fatalf("the axis ends at %g ms, want within (0, %g]", end, results.MaxMillis)
	}
	f, err := waterfallOf(w, "waterfall", sharedAxes{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.Title, "20000 requests; the first 400 drawn") {
		t.Errorf("the title does not say how many it drew: %s", f.Title)
	}
	if n := strings.Count(string(f.SVG), "a.test/"); n > 2*maxWaterfallRows {
		t.Errorf("the SVG names %d URLs, want at most %d rows' worth", n, maxWaterfallRows)
	}
}

// TestLanesStopAtTheAxis: a sample after the axis's end is not drawn.
func TestLanesStopAtTheAxis(t *testing.T) {
	samples := []results.Sample{{AtMs: 100, QuicbenchCPUMs: 10}, {AtMs: 200, QuicbenchCPUMs: 20}, {AtMs: 5e8, QuicbenchCPUMs: 30}}
	for _, l := range lanesOf(samples, 1000) {
		if last := l.steps[len(l.steps)-1].to; last > 1000 {
			t.Errorf("lane %s runs to %g ms, past the axis's 1000", l.name, last)
		}
	}
}

// TestFiguresStopWhenCanceled: Ctrl-C during the figures stops them.
func TestFiguresStopWhenCanceled(t *testing.T) {
	a, err := analysis.Analyze(fakeTrials(), analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Figures(ctx, a, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Figures with a canceled context: %v, want context.Canceled", err)
	}
}
