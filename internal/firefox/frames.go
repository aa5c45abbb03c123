package firefox

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"time"

	xdraw "golang.org/x/image/draw"

	"github.com/quicbench/quicbench/internal/client"
)

// maxShots bounds the screenshots of one load (a minute at the pace
// measured here): a load that runs longer fails rather than growing
// without end.
const maxShots = 2400

// shotInterval paces the screenshots: at most 60 a second, a frame every
// 16.7 ms as a 60 Hz screen shows them, so that the capture takes no more
// CPU from the load than that needs.
const shotInterval = time.Second / 60

// shotQuality is the JPEG quality Firefox encodes screenshots at. Its
// encoding is most of a screenshot's time: at 0.9 one took 56–60 ms here
// during a load, at 0.5 11–30 ms.
const shotQuality = 0.5

// maxMissedShots is how many screenshots in a row may fail before the
// capture does: Firefox cannot take one at some moments of a navigation
// ("Unable to capture screenshot"), and the next one a few ms later works.
// Twenty in a row is a gap of about half a second.
const maxMissedShots = 20

// frameGrabber captures a load's frames by asking Firefox for a screenshot
// of the tab's viewport again and again (BiDi's
// browsingContext.captureScreenshot): Firefox keeps no trace of the frames
// it draws, as Chromium does. A screenshot takes 20–25 ms here, so frames
// are that far apart; each is stamped with the middle of its call on Go's
// monotonic clock, which the page's performance.now(), read the same way
// when the capture stops, ties to navigation start.
type frameGrabber struct {
	t      *tab
	cancel context.CancelFunc
	done   chan struct{}
	// shots, missed (the screenshots that failed) and err are the
	// goroutine's until done is closed.
	shots  []shot
	missed int
	err    error
}

// shot is one screenshot as Firefox encoded it, and when it was taken.
type shot struct {
	at   time.Time
	jpeg []byte
}

// CaptureFrames starts capturing the tab's viewport until Stop.
func (t *tab) CaptureFrames(ctx context.Context) (client.FrameCapture, error) {
	ctx, cancel := context.WithCancel(ctx)
	g := &frameGrabber{t: t, cancel: cancel, done: make(chan struct{})}
	go g.run(ctx)
	return g, nil
}

// run takes screenshots one after the other until ctx ends or one fails.
func (g *frameGrabber) run(ctx context.Context) {
	defer close(g.done)
	params := map[string]any{"context": g.t.context, "origin": "viewport",
		"format": map[string]any{"type": "image/jpeg", "quality": shotQuality}}
	missed := 0
	for ctx.Err() == nil {
		var r struct {
			Data string `json:"data"`
		}
		start := time.Now()
		err := g.t.bidi.call(ctx, "browsingContext.captureScreenshot", params, &r)
		end := time.Now()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			if missed++; missed > maxMissedShots {
				g.err = fmt.Errorf("capture frames: %d screenshots in a row failed: %w", missed, err)
				return
			}
			g.missed++
			continue
		}
		missed = 0
		data, err := base64.StdEncoding.DecodeString(r.Data)
		if err != nil {
			g.err = fmt.Errorf("capture frames: the screenshot is not base64: %w", err)
			return
		}
		g.shots = append(g.shots, shot{at: start.Add(end.Sub(start) / 2), jpeg: data})
		if len(g.shots) >= maxShots {
			g.err = fmt.Errorf("capture frames: the load took %d screenshots, the most one may", maxShots)
			return
		}
		if client.Pause(ctx, time.Until(start.Add(shotInterval))) != nil {
			return
		}
	}
}

// Abort ends the capture and waits for its goroutine.
func (g *frameGrabber) Abort() {
	g.cancel()
	<-g.done
}

// Stop ends the capture and returns the frames since navigation start,
// scaled to client.FrameMaxSide: the last screenshot taken before
// navigation start is the frame at 0 (what was on screen), earlier ones
// are dropped.
func (g *frameGrabber) Stop(ctx context.Context) ([]client.Frame, error) {
	navigationStart, err := g.navigationStart(ctx)
	g.Abort()
	if err != nil {
		return nil, err
	}
	if g.err != nil {
		return nil, g.err
	}
	return framesOf(g.shots, navigationStart)
}

// navigationStart is when the page's navigation started on Go's clock:
// performance.now() read in the page, taken from the middle of the call.
func (g *frameGrabber) navigationStart(ctx context.Context) (time.Time, error) {
	var nowMs float64
	before := time.Now()
	if err := g.t.Evaluate(ctx, "performance.now()", &nowMs); err != nil {
		return time.Time{}, fmt.Errorf("capture frames: read the page's clock: %w", err)
	}
	after := time.Now()
	return before.Add(after.Sub(before) / 2).Add(-time.Duration(nowMs * float64(time.Millisecond))), nil
}

// framesOf turns shots into frames timed from navigationStart, scaled. A
// shot whose bytes equal the previous one's shows no change (Firefox
// encodes the same screen the same way) and is left out: the frame is
// timed by the first shot that showed it.
func framesOf(shots []shot, navigationStart time.Time) ([]client.Frame, error) {
	first := 0
	for i, s := range shots {
		if !s.at.After(navigationStart) {
			first = i // the last one before navigation start
		}
	}
	var frames []client.Frame
	for i, s := range shots[first:] {
		if i > 0 && bytes.Equal(s.jpeg, shots[first+i-1].jpeg) {
			continue
		}
		scaled, err := scaleJPEG(s.jpeg, client.FrameMaxSide)
		if err != nil {
			return nil, fmt.Errorf("capture frames: frame %d: %w", len(frames), err)
		}
		at := max(0, float64(s.at.Sub(navigationStart))/float64(time.Millisecond))
		frames = append(frames, client.Frame{AtMs: at, JPEG: scaled})
	}
	if len(frames) == 0 {
		return nil, errors.New("capture frames: no screenshot was taken")
	}
	return frames, nil
}

// scaleJPEG scales a JPEG down so that its longer side is at most side
// pixels (bilinear), encoded again at quality 90.
func scaleJPEG(data []byte, side int) ([]byte, error) {
	img, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w <= side && h <= side {
		return data, nil
	}
	if w >= h {
		w, h = side, max(1, h*side/w)
	} else {
		w, h = max(1, w*side/h), side
	}
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	xdraw.BiLinear.Scale(out, out.Bounds(), img, b, xdraw.Src, nil)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, out, &jpeg.Options{Quality: 90}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
