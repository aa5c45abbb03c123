package visual

import (
	"image"
	"image/color"
	"image/draw"
	"strings"
	"testing"
	"time"
)

// page draws a 100 × 100 white frame with a black square of side n at
// (20, 45), inside the region frames are compared in.
func page(n int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, 100, 100))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	draw.Draw(img, image.Rect(20, 45, 20+n, 45+n), image.NewUniform(color.Black), image.Point{}, draw.Src)
	return img
}

func at(ms int, img image.Image) Frame {
	return Frame{At: time.Duration(ms) * time.Millisecond, Image: img}
}

// TestALoadInFrames: a blank frame repeated, a quarter of the content,
// all of it, and the final frame repeated; the repeats are dropped, and
// the metrics follow visualmetrics' definitions.
func TestALoadInFrames(t *testing.T) {
	m, err := Compute([]Frame{at(0, page(0)), at(100, page(0)), at(200, page(20)), at(300, page(40)), at(400, page(40)), at(500, page(40))})
	if err != nil {
		t.Fatal(err)
	}
	want := []Point{{0, 0}, {200 * time.Millisecond, 25}, {300 * time.Millisecond, 100}}
	if len(m.Progress) != len(want) {
		t.Fatalf("progress %v, want %v", m.Progress, want)
	}
	for i := range want {
		if m.Progress[i] != want[i] {
			t.Errorf("progress %v, want %v", m.Progress, want)
		}
	}
	// 200 ms at 0 % and 100 ms at 25 %: 200 + 75.
	if m.FirstVisualChange != 200*time.Millisecond || m.LastVisualChange != 300*time.Millisecond || m.SpeedIndex != 275 {
		t.Errorf("FVC %v, LVC %v, SI %d; want 200ms, 300ms, 275", m.FirstVisualChange, m.LastVisualChange, m.SpeedIndex)
	}
	if m.VisualComplete85 != 300*time.Millisecond || m.VisualComplete99 != 300*time.Millisecond {
		t.Errorf("VC85 %v, VC99 %v; want 300ms", m.VisualComplete85, m.VisualComplete99)
	}
}

// TestNoiseBelowTheFuzzIsNoChange: a frame that differs from the blank one
// by less than 10 % per channel is not a visual change.
func TestNoiseBelowTheFuzzIsNoChange(t *testing.T) {
	noisy := image.NewRGBA(image.Rect(0, 0, 100, 100))
	draw.Draw(noisy, noisy.Bounds(), image.NewUniform(color.RGBA{240, 240, 240, 255}), image.Point{}, draw.Src)
	m, err := Compute([]Frame{at(0, page(0)), at(50, noisy), at(120, page(40))})
	if err != nil {
		t.Fatal(err)
	}
	if m.FirstVisualChange != 120*time.Millisecond || len(m.Progress) != 2 {
		t.Errorf("FVC %v with progress %v; want the noise dropped", m.FirstVisualChange, m.Progress)
	}
}

// TestNearWhiteIsBackground: pixels with every channel at least 250 are
// left out of the histogram.
func TestNearWhiteIsBackground(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 2, 1))
	img.Set(0, 0, color.RGBA{250, 250, 250, 255})
	img.Set(1, 0, color.RGBA{249, 250, 255, 255})
	h := HistogramOf(img)
	if h[0][249] != 1 || h[1][250] != 1 || h[2][255] != 1 || h[0][250] != 0 {
		t.Errorf("histogram counts r249 %d g250 %d b255 %d r250 %d; want 1, 1, 1, 0", h[0][249], h[1][250], h[2][255], h[0][250])
	}
}

// TestVisuallyCompleteStaysReached: a drop below a level forgets it and
// the levels above, so they are found where the progress climbs back.
func TestVisuallyCompleteStaysReached(t *testing.T) {
	p := []Point{{0, 0}, {100, 96}, {200, 90}, {300, 99}, {400, 100}}
	vc85, vc95, vc99 := visuallyComplete(p)
	if vc85 != 100 || vc95 != 300 || vc99 != 300 {
		t.Errorf("VC85 %v, VC95 %v, VC99 %v; want 100, 300, 300", vc85, vc95, vc99)
	}
	if _, _, never := visuallyComplete([]Point{{0, 0}, {100, 98}}); never != -1 {
		t.Errorf("VC99 of a load that never reached it: %v, want -1", never)
	}
}

func TestComputeRefusesBadFrames(t *testing.T) {
	if _, err := Compute(nil); err == nil {
		t.Error("no frames accepted")
	}
	if _, err := Compute([]Frame{at(10, page(0)), at(5, page(1))}); err == nil {
		t.Error("frames out of order accepted")
	}
	_, err := Compute([]Frame{at(0, page(0)), at(5, image.NewRGBA(image.Rect(0, 0, 5, 5)))})
	if want := "frame 2 of 2 is (5,5), the first (100,100)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("frames of two sizes: %v, want an error naming %q", err, want)
	}
}
