package chromium

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/client"
)

// solidJPEG is a 320×180 JPEG of one colour (visualmetrics compares frames without a 40-pixel top band, so smaller frames would all match).
func solidJPEG(t *testing.T, c color.Color) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 320, 180))
	draw.Draw(img, img.Bounds(), image.NewUniform(c), image.Point{}, draw.Src)
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func traceEventJSON(t *testing.T, name string, tsMicros float64, snapshot []byte) []byte {
	t.Helper()
	ev := map[string]any{"name": name, "ts": tsMicros, "ph": "O", "args": map[string]any{}}
	if snapshot != nil {
		ev["args"] = map[string]any{"snapshot": snapshot}
	}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFramesOfAlignsTheTraceClockToNavigationStart: the mark made 2500 ms
// after navigation start has trace time 10,002,500 ms, so navigation
// started at 10,000,000 ms on the trace clock; the frame drawn last before
// it becomes the frame at 0 and earlier ones go.
func TestFramesOfAlignsTheTraceClockToNavigationStart(t *testing.T) {
	white, red := solidJPEG(t, color.White), solidJPEG(t, color.RGBA{255, 0, 0, 255})
	events := [][]byte{
		traceEventJSON(t, "Screenshot", 10_000_350_000, red), // out of order on purpose
		traceEventJSON(t, "Screenshot", 9_999_000_000, white),
		traceEventJSON(t, "Screenshot", 9_999_990_000, white),
		traceEventJSON(t, alignMark, 10_002_500_000, nil),
		traceEventJSON(t, "ResourceSendRequest", 10_000_100_000, nil),
	}
	frames, err := framesOf(events, 2500)
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) != 2 || frames[0].AtMs != 0 || frames[1].AtMs != 350 {
		t.Fatalf("frames at %v, want [0 350]", atsOf(frames))
	}
	m, err := client.VisualMetrics(frames)
	if err != nil {
		t.Fatal(err)
	}
	if m.FirstVisualChange != 350*time.Millisecond || m.LastVisualChange != 350*time.Millisecond || m.SpeedIndex != 350 {
		t.Errorf("FVC %v, LVC %v, SI %d; want 350 ms each", m.FirstVisualChange, m.LastVisualChange, m.SpeedIndex)
	}
}

// TestVisualMetricsStartsFromABlankFrame: a load whose first frame is
// already content began on a white page.
func TestVisualMetricsStartsFromABlankFrame(t *testing.T) {
	frames, err := client.WithBlankStart([]client.Frame{{AtMs: 120, JPEG: solidJPEG(t, color.RGBA{0, 0, 200, 255})}})
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) != 2 || frames[0].AtMs != 0 {
		t.Fatalf("frames at %v, want a blank one at 0 first", atsOf(frames))
	}
	m, err := client.VisualMetrics(frames)
	if err != nil {
		t.Fatal(err)
	}
	if m.FirstVisualChange != 120*time.Millisecond || m.SpeedIndex != 120 || m.VisualComplete85 != 120*time.Millisecond {
		t.Errorf("FVC %v, SI %d, VC85 %v; want 120 ms", m.FirstVisualChange, m.SpeedIndex, m.VisualComplete85)
	}
}

func TestFramesOfWantsTheMark(t *testing.T) {
	if _, err := framesOf([][]byte{traceEventJSON(t, "Screenshot", 1000, solidJPEG(t, color.White))}, 10); err == nil {
		t.Error("a trace without the alignment mark gave frames")
	}
	if _, err := framesOf([][]byte{[]byte("{not json")}, 10); err == nil {
		t.Error("a broken trace event gave frames")
	}
}

func atsOf(frames []client.Frame) []float64 {
	var out []float64
	for _, f := range frames {
		out = append(out, f.AtMs)
	}
	return out
}
