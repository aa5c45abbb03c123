package firefox

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"testing"
	"time"
)

// jpegOf is a w × h JPEG of one colour.
func jpegOf(t *testing.T, w, h int, c color.Color) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestFramesOf: the last shot before navigation start is the frame at 0,
// earlier ones are dropped, a shot equal to the one before is no frame,
// and frames are scaled to 500 pixels on their longer side.
func TestFramesOf(t *testing.T) {
	start := time.Now()
	white, red := jpegOf(t, 1366, 768, color.White), jpegOf(t, 1366, 768, color.RGBA{R: 255, A: 255})
	shots := []shot{{start.Add(-40 * time.Millisecond), white}, {start.Add(-10 * time.Millisecond), white},
		{start.Add(20 * time.Millisecond), white}, {start.Add(50 * time.Millisecond), red}, {start.Add(70 * time.Millisecond), red}}
	frames, err := framesOf(shots, start)
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) != 2 || frames[0].AtMs != 0 || frames[1].AtMs != 50 {
		t.Fatalf("frames at %v; want 0 and 50 ms", frames)
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(frames[1].JPEG))
	if err != nil || cfg.Width != 500 || cfg.Height != 281 {
		t.Errorf("frame size %d × %d (%v); want 500 × 281", cfg.Width, cfg.Height, err)
	}
	if _, err := framesOf(nil, start); err == nil {
		t.Error("no shots gave frames")
	}
}
