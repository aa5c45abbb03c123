package report

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
)

// writeFrame writes a 400×225 frame of one colour as a trial's frame file.
func writeFrame(t *testing.T, dir, name string, c color.Color) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 400, 225))
	draw.Draw(img, img.Bounds(), image.NewUniform(c), image.Point{}, draw.Src)
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFilmstripShowsEachColumnsFrame: h2 turns red at 250 ms, h3 blue at
// 150 ms; the strip has columns 0 to 0.3 s, and a column's border is
// orange exactly where its row's picture changed.
func TestFilmstripShowsEachColumnsFrame(t *testing.T) {
	dir := t.TempDir()
	white, red, blue := color.White, color.RGBA{200, 0, 0, 255}, color.RGBA{0, 0, 200, 255}
	writeFrame(t, filepath.Join(dir, "artifacts/a-a1-frames"), "ms_000000.jpg", white)
	writeFrame(t, filepath.Join(dir, "artifacts/a-a1-frames"), "ms_000250.jpg", red)
	writeFrame(t, filepath.Join(dir, "artifacts/b-a1-frames"), "ms_000000.jpg", white)
	writeFrame(t, filepath.Join(dir, "artifacts/b-a1-frames"), "ms_000150.jpg", blue)
	os.WriteFile(filepath.Join(dir, "artifacts/b-a1-frames", "notes.txt"), []byte("not a frame"), 0o644)
	trial := func(id string, p factor.Protocol, si float64) results.Trial {
		return results.Trial{ID: id, Levels: results.Levels{Network: "n", Page: "synthetic:1x1KB", Origins: 1, Protocol: p, Visit: "first", Visual: true},
			Outcome: results.Outcome{Status: results.StatusOK}, Metrics: results.Metrics{PLT: results.F(300)},
			VisualMetrics: results.VisualMetrics{SpeedIndex: results.F(si)}, Artifacts: "artifacts/" + id + "-a1-frames"}
	}
	trials := []results.Trial{trial("a", factor.H2, 250), trial("b", factor.H3, 150)}
	a, err := analysis.Analyze(trials, analysis.Options{Metric: "si"})
	if err != nil {
		t.Fatal(err)
	}
	figs, err := visualFigures(dir, trials, a)
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != 2 || figs[0].Name != "filmstrip-1" || figs[1].Name != "progress-1" {
		t.Fatalf("figures %v", figNames(figs))
	}
	img, err := png.Decode(bytes.NewReader(figs[0].PNG))
	if err != nil {
		t.Fatal(err)
	}
	const pad, header, cols = 6, 20, 4
	thumbHeight := thumbWidth * 225 / 400
	if w := img.Bounds().Dx(); w != filmstripLabel+cols*(thumbWidth+pad)+pad {
		t.Fatalf("strip %d px wide, want %d columns", w, cols)
	}
	for row, changedAt := range []int{3, 2} {
		for col := range cols {
			x := filmstripLabel + pad + col*(thumbWidth+pad) - 1 // the border
			y := header + pad + row*(thumbHeight+pad) + thumbHeight/2
			got := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			if orange := got == changedBorder; orange != (col == changedAt) {
				t.Errorf("row %d column %d: border %v", row, col, got)
			}
		}
	}
}

func figNames(figs []Figure) []string {
	var out []string
	for _, f := range figs {
		out = append(out, f.Name)
	}
	return out
}

func TestFrameTimeNeedsBrowsertimesName(t *testing.T) {
	for name, want := range map[string]int64{"ms_000120.jpg": 120, "ms_001500.jpg": 1500} {
		if got, ok := frameTime(name); !ok || got != want {
			t.Errorf("frameTime(%q) = %d, %v; want %d", name, got, ok, want)
		}
	}
	for _, name := range []string{"000120.jpg", "ms_000120.png", "ms_12.jpg", "xx_000120.jpg", "ms_00012x.jpg"} {
		if _, ok := frameTime(name); ok {
			t.Errorf("frameTime(%q) accepted a name that is not ms_NNNNNN.jpg", name)
		}
	}
}
