package visual

import (
	"image"
	"math"
)

// dropDuplicates keeps the frames that show a change, as visualmetrics'
// duplicate elimination does: frames at the start that match the first
// (blank) one within 10 % per channel and pixel are dropped, and of the
// frames at the end that match the last one within 15 % (up to 5 pixels
// may differ more), only the earliest is kept. Frames are compared inside
// visualmetrics' crop, which leaves out margins where a browser's chrome
// would be.
func dropDuplicates(frames []Frame) []Frame {
	if len(frames) < 2 {
		return frames
	}
	crop := cropOf(frames[0].Image.Bounds())
	kept := []Frame{frames[0]}
	i := 1
	for i < len(frames) && matches(frames[0].Image, frames[i].Image, crop, 0.10, 0) {
		i++
	}
	kept = append(kept, frames[i:]...)
	if len(kept) <= 2 {
		return kept
	}
	final := kept[len(kept)-1].Image
	first := len(kept) - 1 // the earliest frame of the final run
	for first-1 > 0 && matches(final, kept[first-1].Image, crop, 0.15, 5) {
		first--
	}
	return kept[:first+1]
}

// cropOf is the region visualmetrics compares frames in: without a top
// band of 4 % of the height, a right margin of 4 % of the width and a
// bottom margin of 6 % of the width (40, 10 and 10 pixels for frames of
// at most 400 × 400).
func cropOf(b image.Rectangle) image.Rectangle {
	w, h := b.Dx(), b.Dy()
	top, right, bottom := 40, 10, 10
	if h > 400 || w > 400 {
		top = int(math.Ceil(float64(h) * 0.04))
		right = int(math.Ceil(float64(w) * 0.04))
		bottom = int(math.Ceil(float64(w) * 0.06))
	}
	width, height := max(w-right, 1), max(h-top-bottom, 1)
	return image.Rect(b.Min.X, b.Min.Y+top, b.Min.X+width, b.Min.Y+top+height).Intersect(b)
}

// matches reports whether a and b differ inside crop in at most
// maxDifferent pixels, a pixel differing if a channel differs by more
// than fuzz (a fraction of 255).
func matches(a, b image.Image, crop image.Rectangle, fuzz float64, maxDifferent int) bool {
	tolerance := fuzz * 255
	different := 0
	for y := crop.Min.Y; y < crop.Max.Y; y++ {
		for x := crop.Min.X; x < crop.Max.X; x++ {
			r1, g1, b1 := rgb8(a, x, y)
			r2, g2, b2 := rgb8(b, x, y)
			if farther(r1, r2, tolerance) || farther(g1, g2, tolerance) || farther(b1, b2, tolerance) {
				different++
				if different > maxDifferent {
					return false
				}
			}
		}
	}
	return true
}

// farther reports whether two channel values differ by more than
// tolerance.
func farther(a, b uint8, tolerance float64) bool {
	return math.Abs(float64(a)-float64(b)) > tolerance
}
