// Package visual computes what the user sees during a page load from its
// frames (screenshots with their times since navigation start), as
// Browsertime's visualmetrics does: frames that repeat the blank first
// frame or the final one are dropped, each frame's visual progress is
// measured from per-channel colour histograms that ignore near-white
// pixels, and First and Last Visual Change, Speed Index and Visually
// Complete 85/95/99 % follow from the progress. It is pure: frames in,
// metrics out.
package visual

import (
	"errors"
	"fmt"
	"image"
	"math"
	"time"
)

// Frame is one screenshot of a load.
type Frame struct {
	// At is the frame's time since navigation start.
	At    time.Duration
	Image image.Image
}

// Point is the visual progress at a frame.
type Point struct {
	At time.Duration
	// Percent is the progress, a whole percentage rounded down.
	Percent int
}

// Metrics are a load's visual metrics; times are since navigation start.
type Metrics struct {
	FirstVisualChange, LastVisualChange time.Duration
	// SpeedIndex is Σ Δt · (1 − progress) over the frames, in
	// milliseconds (an integer, as visualmetrics reports it).
	SpeedIndex int64
	// VisualComplete85, 95 and 99 are when the progress reached the level
	// for good (a later drop below it moves the time to where it climbs
	// back); -1 if it never did.
	VisualComplete85, VisualComplete95, VisualComplete99 time.Duration
	// Progress is the progress at each frame kept.
	Progress []Point
}

// Compute returns the metrics of frames, which must be in time order and
// of one size.
func Compute(frames []Frame) (Metrics, error) {
	if len(frames) == 0 {
		return Metrics{}, errors.New("visual: no frames")
	}
	size := frames[0].Image.Bounds().Size()
	for i, f := range frames {
		if f.Image.Bounds().Size() != size {
			return Metrics{}, fmt.Errorf("visual: frames differ in size: frame %d of %d is %v, the first %v", i+1, len(frames), f.Image.Bounds().Size(), size)
		}
		if i > 0 && f.At < frames[i-1].At {
			return Metrics{}, errors.New("visual: frames out of time order")
		}
	}
	kept := dropDuplicates(frames)
	hists := make([]Histogram, len(kept))
	for i, f := range kept {
		hists[i] = HistogramOf(f.Image)
	}
	m := Metrics{FirstVisualChange: kept[0].At, LastVisualChange: kept[0].At}
	if len(kept) > 1 {
		m.FirstVisualChange, m.LastVisualChange = kept[1].At, kept[len(kept)-1].At
	}
	for i, f := range kept {
		m.Progress = append(m.Progress, Point{At: f.At, Percent: Progress(hists[i], hists[0], hists[len(hists)-1])})
	}
	m.SpeedIndex = speedIndex(m.Progress)
	m.VisualComplete85, m.VisualComplete95, m.VisualComplete99 = visuallyComplete(m.Progress)
	return m, nil
}

// Histogram counts a frame's pixels per channel (red, green, blue) and
// 8-bit value, leaving out near-white pixels (every channel at least 250),
// which are background.
type Histogram [3][256]int64

// HistogramOf is img's histogram.
func HistogramOf(img image.Image) Histogram {
	var h Histogram
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl := rgb8(img, x, y)
			if r >= 250 && g >= 250 && bl >= 250 {
				continue
			}
			h[0][r]++
			h[1][g]++
			h[2][bl]++
		}
	}
	return h
}

// rgb8 is the pixel at (x, y) as 8-bit channels.
func rgb8(img image.Image, x, y int) (r, g, b uint8) {
	r32, g32, b32, _ := img.At(x, y).RGBA()
	return uint8(r32 >> 8), uint8(g32 >> 8), uint8(b32 >> 8)
}

// Progress is how far h has come from first to last: over every channel
// and value, Σ min(|h − first|, |last − first|) / Σ |last − first|, as a
// whole percentage rounded down; 100 if first and last are alike.
func Progress(h, first, last Histogram) int {
	var matched, total int64
	for c := range h {
		for v := range h[c] {
			cur, target := abs(h[c][v]-first[c][v]), abs(last[c][v]-first[c][v])
			matched += min(cur, target)
			total += target
		}
	}
	if total == 0 {
		return 100
	}
	return int(math.Floor(float64(matched) / float64(total) * 100))
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// speedIndex is Σ Δt · (1 − progress) in whole milliseconds, the progress
// of each interval being that of the frame that starts it.
func speedIndex(progress []Point) int64 {
	si := 0.0
	last, lastProgress := progress[0].At, 0.0
	for _, p := range progress {
		si += float64(ms(p.At)-ms(last)) * (1 - lastProgress)
		last, lastProgress = p.At, float64(p.Percent)/100
	}
	return int64(si)
}

// ms is d in whole milliseconds, as visualmetrics names its frames.
func ms(d time.Duration) int64 { return int64(d / time.Millisecond) }

// visuallyComplete is when progress reached 85, 95 and 99 % to stay:
// falling below a level forgets it and every level above (Browsertime's
// rule), so it is found again where the progress climbs back.
func visuallyComplete(progress []Point) (vc85, vc95, vc99 time.Duration) {
	levels := [3]int{85, 95, 99}
	at := [3]time.Duration{-1, -1, -1}
	for _, p := range progress {
		for i, level := range levels {
			if p.Percent >= level && at[i] < 0 {
				at[i] = p.At
			}
		}
		for i, level := range levels {
			if at[i] >= 0 && p.Percent < level {
				for j := i; j < len(at); j++ {
					at[j] = -1
				}
				break
			}
		}
	}
	return at[0], at[1], at[2]
}
