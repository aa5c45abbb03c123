package report

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/image/draw"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/visual"
)

// Filmstrip limits: the settings drawn, the columns of one strip, the
// width of a frame in it (pixels) and the largest frame file read.
const (
	maxFilmstrips  = 12
	maxColumns     = 60
	thumbWidth     = 160
	maxFrameBytes  = 8 << 20
	filmstripLabel = 64 // the width of the protocol column, pixels
)

// loadFrames reads the frames a visual trial kept in the run directory
// dir (artifacts/<trial>-a<n>-frames/ms_NNNNNN.jpg), in time order; nil
// if it kept none.
func loadFrames(dir string, t results.Trial) ([]visual.Frame, error) {
	var frameDir string
	for _, a := range strings.Split(t.Artifacts, ",") {
		if strings.HasSuffix(a, "-frames") && insideRun(a) {
			frameDir = a
		}
	}
	if frameDir == "" {
		return nil, nil
	}
	names, err := safefs.ListIn(dir, frameDir)
	if err != nil {
		return nil, fmt.Errorf("frames of trial %s: %w", t.ID, err)
	}
	var frames []visual.Frame
	for _, name := range names {
		ms, ok := frameTime(name)
		if !ok {
			continue
		}
		data, err := safefs.ReadIn(dir, filepath.Join(frameDir, name), maxFrameBytes)
		if err != nil {
			return nil, fmt.Errorf("frames of trial %s: %w", t.ID, err)
		}
		img, err := jpeg.Decode(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("frames of trial %s: %s is not a JPEG frame", t.ID, name)
		}
		frames = append(frames, visual.Frame{At: time.Duration(ms) * time.Millisecond, Image: img})
	}
	slices.SortFunc(frames, func(a, b visual.Frame) int { return cmp.Compare(a.At, b.At) })
	return frames, nil
}

// frameTime is the time in a frame's file name ms_NNNNNN.jpg.
func frameTime(name string) (int64, bool) {
	digits, hasPrefix := strings.CutPrefix(name, "ms_")
	digits, hasSuffix := strings.CutSuffix(digits, ".jpg")
	if !hasPrefix || !hasSuffix || len(digits) != 6 {
		return 0, false
	}
	ms, err := strconv.ParseInt(digits, 10, 64)
	return ms, err == nil
}

// stripRow is one protocol's load in a filmstrip.
type stripRow struct {
	label   string
	trial   results.Trial
	frames  []visual.Frame
	metrics visual.Metrics // of frames
}

// visualFigures draws, for each compared visual setting (at most
// maxFilmstrips), a filmstrip of every protocol's median-Speed-Index
// load, one above the other, and their visual progress curves.
func visualFigures(dir string, trials []results.Trial, a *analysis.Analysis) ([]Figure, error) {
	var figs []Figure
	v := analysis.VariedIn(valid(a))
	_, samples := settingSamples(a)
	for _, c := range valid(a) {
		if !c.Setting.Visual().On() || len(figs) >= 2*maxFilmstrips {
			continue
		}
		var rows []stripRow
		for _, s := range samples[c.Setting] {
			t := nearestMedian(trials, c.Setting, s.Protocol, "si")
			if t == nil {
				continue
			}
			frames, err := loadFrames(dir, *t)
			if err != nil {
				return nil, err
			}
			if len(frames) == 0 {
				continue
			}
			m, err := visual.Compute(frames)
			if err != nil {
				return nil, fmt.Errorf("frames of trial %s: %w", t.ID, err)
			}
			rows = append(rows, stripRow{label: string(s.Protocol), trial: *t, frames: frames, metrics: m})
		}
		if len(rows) < 2 {
			continue
		}
		n := len(figs)/2 + 1
		strip, err := filmstrip(fmt.Sprintf("filmstrip-%d", n), v.Label(c.Setting)+" "+c.Setting.Page(), rows)
		if err != nil {
			return nil, err
		}
		curves, err := progressCurves(fmt.Sprintf("progress-%d", n), v.Label(c.Setting)+" "+c.Setting.Page(), rows)
		if err != nil {
			return nil, err
		}
		figs = append(figs, strip, curves)
	}
	return figs, nil
}

// nearestMedian is the verified trial of protocol p in setting s whose
// metric m is nearest the median of those trials.
func nearestMedian(trials []results.Trial, s analysis.Setting, p factor.Protocol, m string) *results.Trial {
	value := analysis.MetricOf(m)
	var candidates []*results.Trial
	var values []float64
	for i := range trials {
		t := &trials[i]
		if t.Protocol == p && analysis.SettingOf(*t) == s && t.Status == results.StatusOK && value(*t) != nil {
			candidates, values = append(candidates, t), append(values, *value(*t))
		}
	}
	if len(values) == 0 {
		return nil
	}
	sorted := slices.Sorted(slices.Values(values))
	median := sorted[len(sorted)/2]
	best := 0
	for i, x := range values {
		if math.Abs(x-median) < math.Abs(values[best]-median) {
			best = i
		}
	}
	return candidates[best]
}

// stripStep is the time between a filmstrip's columns: 100 ms, or more
// for a long load so that it keeps at most maxColumns.
func stripStep(end time.Duration) time.Duration {
	for _, step := range []time.Duration{100, 200, 500, 1000, 2000, 5000} {
		if end/(step*time.Millisecond) < maxColumns {
			return step * time.Millisecond
		}
	}
	return end / maxColumns
}

// stripEnd is the time of a filmstrip's last column: the latest last
// visual change, rounded up to a step.
func stripEnd(rows []stripRow) time.Duration {
	var end time.Duration
	for _, r := range rows {
		end = max(end, r.frames[len(r.frames)-1].At)
	}
	step := stripStep(end)
	return (end + step - 1) / step * step
}

var (
	changedBorder = color.RGBA{0xff, 0x8c, 0x00, 0xff} // orange: the screen changed
	stillBorder   = color.RGBA{0xdd, 0xdd, 0xdd, 0xff}
)

// filmstrip draws what each row's load showed every step, side by side
// as WebPageTest shows them.
func filmstrip(name, setting string, rows []stripRow) (Figure, error) {
	end := stripEnd(rows)
	step := stripStep(end)
	cols := int(end/step) + 1
	b := rows[0].frames[0].Image.Bounds()
	thumbHeight := thumbWidth * b.Dy() / max(b.Dx(), 1)
	const pad, header = 6, 20
	img := image.NewRGBA(image.Rect(0, 0, filmstripLabel+cols*(thumbWidth+pad)+pad, header+len(rows)*(thumbHeight+pad)+pad))
	var marks []placedTip
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	for c := range cols {
		x := filmstripLabel + pad + c*(thumbWidth+pad)
		drawText(img, x, 14, fmt.Sprintf("%.1f s", (time.Duration(c)*step).Seconds()))
	}
	for r, row := range rows {
		y := header + pad + r*(thumbHeight+pad)
		drawText(img, 4, y+thumbHeight/2, row.label)
		if row.trial.SpeedIndex != nil {
			drawText(img, 4, y+thumbHeight/2+14, fmt.Sprintf("SI %.0f", *row.trial.SpeedIndex))
		}
		shown := -1
		for c := range cols {
			at := time.Duration(c) * step
			i := frameAt(row.frames, at)
			x := filmstripLabel + pad + c*(thumbWidth+pad)
			// A visual change: a frame that visualmetrics' duplicate
			// elimination keeps came on screen since the last column.
			change := changeAt(row.metrics.Progress, at)
			border := stillBorder
			if c > 0 && change != shown {
				border = changedBorder
			}
			shown = change
			frame := image.Rect(x, y, x+thumbWidth, y+thumbHeight)
			marks = append(marks, thumbTip(row, frame, at, i, change))
			draw.Draw(img, frame.Inset(-2), image.NewUniform(border), image.Point{}, draw.Src)
			draw.ApproxBiLinear.Scale(img, frame, row.frames[i].Image, row.frames[i].Image.Bounds(), draw.Src, nil)
		}
	}
	var labels, ids []string
	for _, r := range rows {
		labels, ids = append(labels, r.label), append(ids, r.trial.ID)
	}
	title := fmt.Sprintf("Filmstrip: %s, the %s loads of median Speed Index, every %v", setting, strings.Join(labels, ", "), step)
	caption := fmt.Sprintf("As WebPageTest shows them: each column is what the screen showed at that time since navigation start; an orange border marks a change since the column before. Trials %s; their frames are in the run's artifacts.", strings.Join(ids, ", "))
	f, err := imageFigure(name, title, caption, img, marks)
	f.Trials = ids
	return f, err
}

// thumbTip tells a filmstrip's thumbnail at time at: the row's load, the
// frame shown and the visual progress then, leading to the load.
func thumbTip(row stripRow, frame image.Rectangle, at time.Duration, shown, change int) placedTip {
	text := fmt.Sprintf("%s, trial %s at %v: the frame of %v", row.label, row.trial.ID, at, row.frames[shown].At)
	if change < len(row.metrics.Progress) {
		text += fmt.Sprintf(", visual progress %d %%", row.metrics.Progress[change].Percent)
	}
	r := vg.Rectangle{Min: vg.Point{X: vg.Length(frame.Min.X), Y: vg.Length(frame.Min.Y)}, Max: vg.Point{X: vg.Length(frame.Max.X), Y: vg.Length(frame.Max.Y)}}
	return placedTip{rect: r, text: text, href: "#" + loadAnchor(row.trial.ID)}
}

// changeAt is the index of the latest visual change at or before at.
func changeAt(progress []visual.Point, at time.Duration) int {
	return latestAt(len(progress), func(i int) time.Duration { return progress[i].At }, at)
}

// frameAt is the index of the frame on screen at time at.
func frameAt(frames []visual.Frame, at time.Duration) int {
	return latestAt(len(frames), func(i int) time.Duration { return frames[i].At }, at)
}

// latestAt is the last of n items in time order (timeOf) at or before at,
// or 0.
func latestAt(n int, timeOf func(int) time.Duration, at time.Duration) int {
	latest := 0
	for i := range n {
		if timeOf(i) <= at {
			latest = i
		}
	}
	return latest
}

// drawText writes s in black at x, y (the baseline).
func drawText(img draw.Image, x, y int, s string) {
	d := font.Drawer{Dst: img, Src: image.Black, Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

// imageFigure is a figure of a picture: its PNG, and an SVG that holds
// the PNG so that the HTML report stays one self-contained file.
func imageFigure(name, title, caption string, img image.Image, marks []placedTip) (Figure, error) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return Figure{}, fmt.Errorf("figure %s: %w", name, err)
	}
	w, h := img.Bounds().Dx(), img.Bounds().Dy()
	svg := fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d"><image width="%d" height="%d" href="data:image/png;base64,%s"/>%s</svg>`,
		w, h, w, h, w, h, base64.StdEncoding.EncodeToString(buf.Bytes()), tipShapes(marks))
	return Figure{Name: name, Title: title, Caption: caption, SVG: []byte(svg), PNG: buf.Bytes()}, nil
}

// progressCurves plots each row's visual progress over time.
func progressCurves(name, setting string, rows []stripRow) (Figure, error) {
	p := newPlot(fmt.Sprintf("Visual progress: %s, the loads of median Speed Index", setting), "time since navigation start (ms)", "visual progress (%)")
	marks := &tips{}
	for i, row := range rows {
		m := row.metrics
		pts := plotter.XYs{}
		for _, pt := range m.Progress {
			pts = append(pts, plotter.XY{X: float64(pt.At) / float64(time.Millisecond), Y: float64(pt.Percent)})
			marks.point(pts[len(pts)-1].X, pts[len(pts)-1].Y, fmt.Sprintf("%s, trial %s: %d %% at %v", row.label, row.trial.ID, pt.Percent, pt.At), "#"+loadAnchor(row.trial.ID))
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return Figure{}, fmt.Errorf("figure %s: %w", name, err)
		}
		line.StepStyle = plotter.PostStep
		line.Color = protocolColor(i)
		line.Width = vg.Points(2)
		p.Add(line)
		si := float64(m.SpeedIndex)
		if row.trial.SpeedIndex != nil {
			si = *row.trial.SpeedIndex // as measured, from the frames' exact times
		}
		p.Legend.Add(fmt.Sprintf("%s (trial %s, Speed Index %.0f)", row.label, row.trial.ID, si), line)
	}
	p.Y.Min, p.Y.Max = 0, 100
	p.Legend.Top, p.Legend.Left = false, false
	return render(name, p.Title.Text, "Each step is a frame: the share of the final picture's colours on screen (Browsertime's histogram progress). The area above a curve is its Speed Index.", p, 8*vg.Inch, 4*vg.Inch, marks)
}
