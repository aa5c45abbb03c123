package client

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"slices"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"

	"github.com/quicbench/quicbench/internal/visual"
)

// The viewport of every Chromium load, in CSS pixels at a device scale
// factor of 1: a common desktop screen. Visual metrics depend on it, so it
// is fixed and recorded with the results.
const (
	ViewportWidth  = 1366
	ViewportHeight = 768
)

// SettleAfterLoad is how long a visual load keeps capturing after the
// load event ends, for what paints later (late images, fonts, scripts):
// the last visual change can come after onload.
const SettleAfterLoad = 2 * time.Second

// screenshotMaxSize is the largest side, in pixels, of a captured frame
// (500 × 281 for the viewport), and screenshotMaxCount the most frames a
// trace holds: Chromium's defaults, whose product is near its memory
// budget per trace. A load that draws more frames (an animation) fails
// rather than losing its last changes.
const (
	screenshotMaxSize  = 500
	screenshotMaxCount = 450
)

// alignMark is the User Timing mark whose trace event aligns the trace's
// clock with navigation start.
const alignMark = "quicbench-align"

// Frame is one screenshot of a visual load as Chromium encoded it.
type Frame struct {
	// AtMs is the time since navigation start, in milliseconds, when the
	// frame was drawn.
	AtMs float64
	// JPEG is the image.
	JPEG []byte
}

// setViewport fixes the tab's viewport at ViewportWidth × ViewportHeight.
func setViewport(ctx context.Context) error {
	_, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: ViewportWidth, Height: ViewportHeight, DeviceScaleFactor: 1,
	})
	return err
}

// frameRecorder captures a load's frames with Chromium's tracing: every
// frame the compositor draws is a Screenshot event with a JPEG and the
// time it was drawn on the trace clock. (Page.startScreencast also works,
// but stamps frames with the wall clock and needs an acknowledgement per
// frame during the load; measured here, its frames lag the change that
// drew them by 7–17 ms, the trace's by 5–6 ms.)
type frameRecorder struct {
	mu     sync.Mutex
	events [][]byte
	done   chan struct{}
	lost   bool
}

// startFrames starts tracing screenshots in the tab of ctx.
func startFrames(ctx context.Context) (*frameRecorder, error) {
	r := &frameRecorder{done: make(chan struct{})}
	if err := chromedp.Listen(ctx, r.event); err != nil {
		return nil, fmt.Errorf("capture frames: %w", err)
	}
	_, err := chromedp.Call(ctx, tracing.Start, tracing.StartParams{
		TraceConfig: &tracing.TraceConfig{
			RecordMode:         tracing.TraceConfigRecordModeRecordAsMuchAsPossible,
			IncludedCategories: []string{"-*", "disabled-by-default-devtools.screenshot", "blink.user_timing"},
		},
		ScreenshotMaxSize:  screenshotMaxSize,
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

// stop marks the alignment point, ends tracing and returns the frames in
// time order since navigation start.
func (r *frameRecorder) stop(ctx context.Context) ([]Frame, error) {
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
func framesOf(events [][]byte, markMs float64) ([]Frame, error) {
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
	var frames []Frame
	for _, s := range shots {
		at := s.Ts/1000 - navStartMs
		if at <= 0 {
			frames = frames[:0]
			at = 0
		}
		frames = append(frames, Frame{AtMs: at, JPEG: s.Args.Snapshot})
	}
	return frames, nil
}

// withBlankStart returns frames starting at navigation start: a load whose
// first frame came later began on a blank page (a new tab is white), and
// a white frame of the same size at 0 stands for it.
func withBlankStart(frames []Frame) ([]Frame, error) {
	if len(frames) == 0 || frames[0].AtMs <= 0 {
		return frames, nil
	}
	first, err := jpeg.DecodeConfig(bytes.NewReader(frames[0].JPEG))
	if err != nil {
		return nil, fmt.Errorf("visual metrics: frame 0: %w", err)
	}
	blank := image.NewRGBA(image.Rect(0, 0, first.Width, first.Height))
	draw.Draw(blank, blank.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	var b bytes.Buffer
	if err := jpeg.Encode(&b, blank, &jpeg.Options{Quality: 90}); err != nil {
		return nil, fmt.Errorf("visual metrics: blank frame: %w", err)
	}
	return slices.Insert(frames, 0, Frame{JPEG: b.Bytes()}), nil
}

// VisualMetrics decodes frames and computes their visual metrics.
func VisualMetrics(frames []Frame) (visual.Metrics, error) {
	decoded, err := DecodeFrames(frames)
	if err != nil {
		return visual.Metrics{}, err
	}
	return visual.Compute(decoded)
}

// DecodeFrames decodes frames' JPEGs.
func DecodeFrames(frames []Frame) ([]visual.Frame, error) {
	var decoded []visual.Frame
	for i, f := range frames {
		img, err := jpeg.Decode(bytes.NewReader(f.JPEG))
		if err != nil {
			return nil, fmt.Errorf("visual metrics: frame %d: %w", i, err)
		}
		decoded = append(decoded, visual.Frame{At: time.Duration(f.AtMs * float64(time.Millisecond)), Image: img})
	}
	return decoded, nil
}
