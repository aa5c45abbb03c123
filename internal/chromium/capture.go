package chromium

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"

	"github.com/quicbench/quicbench/internal/client"
)

// screenshotMaxCount is the most frames a trace holds: Chromium's default,
// whose product with the frame size (client.FrameMaxSide) is near its
// memory budget per trace. A load that draws more frames (an animation)
// fails rather than losing its last changes.
const screenshotMaxCount = 450

// alignMark is the User Timing mark whose trace event aligns the trace's
// clock with navigation start.
const alignMark = "quicbench-align"

// frameRecorder captures a load's frames with Chromium's tracing: every
// frame the compositor draws is a Screenshot event with a JPEG and the
// time it was drawn on the trace clock. (Page.startScreencast also works,
// but stamps frames with the wall clock and needs an acknowledgement per
// frame during the load; measured here, its frames lag the change that
// drew them by 7–17 ms, the trace's by 5–6 ms.)
type frameRecorder struct {
	tabCtx context.Context
	mu     sync.Mutex
	events [][]byte
	done   chan struct{}
	lost   bool
}

// startFrames starts tracing screenshots in the tab of ctx.
func startFrames(ctx context.Context) (*frameRecorder, error) {
	r := &frameRecorder{tabCtx: ctx, done: make(chan struct{})}
	if err := chromedp.Listen(ctx, r.event); err != nil {
		return nil, fmt.Errorf("capture frames: %w", err)
	}
	_, err := chromedp.Call(ctx, tracing.Start, tracing.StartParams{
		TraceConfig: &tracing.TraceConfig{
			RecordMode:         tracing.TraceConfigRecordModeRecordAsMuchAsPossible,
			IncludedCategories: []string{"-*", "disabled-by-default-devtools.screenshot", "blink.user_timing"},
		},
		ScreenshotMaxSize:  client.FrameMaxSide,
		ScreenshotMaxCount: screenshotMaxCount,
	})
	if err != nil {
		return nil, fmt.Errorf("capture frames: Tracing.start: %w", err)
	}
	return r, nil
}

// event is the chromedp.Listen callback: it keeps the trace's events.
func (r *frameRecorder) event(ev any) {
	switch e := ev.(type) {
	case *tracing.EventDataCollected:
		r.mu.Lock()
		for _, v := range e.Value {
			r.events = append(r.events, bytes.Clone(v))
		}
		r.mu.Unlock()
	case *tracing.EventTracingComplete:
		r.mu.Lock()
		r.lost = e.DataLossOccurred
		r.mu.Unlock()
		close(r.done)
	}
}

// Abort leaves the trace running: it ends with the tab, a fresh browser's
// or a warm browser's context, which the load disposes of.
func (r *frameRecorder) Abort() {}

// Stop marks the alignment point, ends tracing and returns the frames in
// time order since navigation start. Its calls go to the tab, whose
// context ends with the load's.
func (r *frameRecorder) Stop(context.Context) ([]client.Frame, error) {
	ctx := r.tabCtx
	markMs, err := chromedp.Run(ctx, chromedp.Evaluate[float64](
		fmt.Sprintf("performance.mark(%q).startTime", alignMark)))
	if err != nil {
		return nil, fmt.Errorf("capture frames: mark: %w", err)
	}
	if _, err := chromedp.Call(ctx, tracing.End, cdp.Empty{}); err != nil {
		return nil, fmt.Errorf("capture frames: Tracing.end: %w", err)
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		return nil, fmt.Errorf("capture frames: the trace did not end: %w", ctx.Err())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lost {
		return nil, errors.New("capture frames: Chromium lost trace data (too many frames)")
	}
	return framesOf(r.events, markMs)
}

// traceEvent is the part of a trace event that frames need.
type traceEvent struct {
	Name string  `json:"name"`
	Ts   float64 `json:"ts"` // µs on the trace clock
	Args struct {
		Snapshot []byte `json:"snapshot"` // a Screenshot's JPEG
	} `json:"args"`
}

// framesOf picks the Screenshot events out of a trace and times them from
// navigation start, which the alignment mark made at markMs (its
// startTime) tells on the trace clock. The last frame drawn before
// navigation start is the frame at 0 (what was on screen); earlier ones
// are dropped.
func framesOf(events [][]byte, markMs float64) ([]client.Frame, error) {
	var shots []traceEvent
	markTs := -1.0
	for _, raw := range events {
		var ev traceEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, fmt.Errorf("capture frames: trace event: %w", err)
		}
		switch ev.Name {
		case "Screenshot":
			shots = append(shots, ev)
		case alignMark:
			markTs = ev.Ts
		}
	}
	if markTs < 0 {
		return nil, errors.New("capture frames: the trace has no alignment mark")
	}
	if len(shots) >= screenshotMaxCount {
		return nil, fmt.Errorf("capture frames: the page drew %d frames or more (an animation?), the most a trace holds", screenshotMaxCount)
	}
	navStartMs := markTs/1000 - markMs
	slices.SortStableFunc(shots, func(a, b traceEvent) int { return cmp.Compare(a.Ts, b.Ts) })
	var frames []client.Frame
	for _, s := range shots {
		at := s.Ts/1000 - navStartMs
		if at <= 0 {
			frames = frames[:0]
			at = 0
		}
		frames = append(frames, client.Frame{AtMs: at, JPEG: s.Args.Snapshot})
	}
	return frames, nil
}
