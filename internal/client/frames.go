package client

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"slices"
	"time"

	"github.com/quicbench/quicbench/internal/visual"
)

// FrameMaxSide is the largest side, in pixels, of a visual load's frames
// (500 × 281 for the default viewport): Chromium's default for the screenshots it
// traces, to which Firefox's are scaled down.
const FrameMaxSide = 500

// SettleAfterLoad is how long a visual load keeps capturing after the
// load event ends, for what paints later (late images, fonts, scripts):
// the last visual change can come after onload.
const SettleAfterLoad = 2 * time.Second

// Frame is one screenshot of a visual load as the browser encoded it.
type Frame struct {
	// AtMs is the time since navigation start, in milliseconds, when the
	// frame was drawn.
	AtMs float64
	// JPEG is the image.
	JPEG []byte
}

// WithBlankStart returns frames starting at navigation start: a load whose
// first frame came later began on a blank page (a new tab is white), and
// a white frame of the same size at 0 stands for it.
func WithBlankStart(frames []Frame) ([]Frame, error) {
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

// SetVisual gives res the frames captured since navigation start (a blank
// one at 0 if they start later, WithBlankStart), their visual metrics and
// the time computing them took.
func SetVisual(res *Result, captured []Frame) error {
	start := time.Now()
	frames, err := WithBlankStart(captured)
	if err != nil {
		return err
	}
	vm, err := VisualMetrics(frames)
	if err != nil {
		return err
	}
	res.Frames, res.Visual = frames, &vm
	res.VisualComputeMs = float64(time.Since(start)) / float64(time.Millisecond)
	return nil
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
