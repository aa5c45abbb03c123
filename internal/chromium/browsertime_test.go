package chromium_test

import (
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/chromium"
	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/client/clienttest"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/firefox"
	"github.com/quicbench/quicbench/internal/site/gen"
	"github.com/quicbench/quicbench/internal/testenv"
)

// moduleRoot is the directory of go.mod, where make deps puts its tools
// (.cache).
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for ; dir != "/"; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
	}
	t.Fatal("no go.mod above the test's directory")
	return ""
}

// browsertimeMetrics are the figures visualmetrics-portable.py --json
// prints (times in ms).
type browsertimeMetrics struct {
	FirstVisualChange, LastVisualChange, SpeedIndex float64
	// VisualProgress is "time=percent" per frame, such as "0=0, 272=12".
	VisualProgress string
}

// progressOf parses VisualProgress into percent by whole millisecond.
func progressOf(t *testing.T, text string) map[int64]int {
	t.Helper()
	out := map[int64]int{}
	for _, pair := range strings.Split(text, ",") {
		var at int64
		var pct int
		if _, err := fmt.Sscanf(strings.TrimSpace(pair), "%d=%d", &at, &pct); err != nil {
			t.Fatalf("visual progress %q: %v", text, err)
		}
		out[at] = pct
	}
	return out
}

// writePNGFrames writes frames, decoded by Go, as ms_NNNNNN.png in dir and
// returns the times written. With --dir, visualmetrics takes the frames as
// they are (its video path first drops near-duplicates with ffmpeg's
// mpdecimate and its own elimination): frames whose pixels equal the
// previous frame's are left out, as is a second frame in the same
// millisecond; quicbench's own elimination, which is fuzzier, is what the
// FVC and LVC comparison checks.
func writePNGFrames(t *testing.T, dir string, frames []client.Frame) []int64 {
	t.Helper()
	decoded, err := client.DecodeFrames(frames)
	if err != nil {
		t.Fatal(err)
	}
	var times []int64
	var previous image.Image
	for _, f := range decoded {
		ms := f.At.Milliseconds()
		if slices.Contains(times, ms) || (previous != nil && samePixels(previous, f.Image)) {
			continue
		}
		previous = f.Image
		times = append(times, ms)
		out, err := os.Create(filepath.Join(dir, fmt.Sprintf("ms_%06d.png", ms)))
		if err != nil {
			t.Fatal(err)
		}
		if err := png.Encode(out, f.Image); err != nil {
			t.Fatal(err)
		}
		out.Close()
	}
	return times
}

// samePixels reports whether a and b are the same picture.
func samePixels(a, b image.Image) bool {
	if a.Bounds() != b.Bounds() {
		return false
	}
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y++ {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x++ {
			if a.At(x, y) != b.At(x, y) {
				return false
			}
		}
	}
	return true
}

// frameIndex is the index of the frame shown at time ms.
func frameIndex(times []int64, ms int64) int {
	i, found := slices.BinarySearch(times, ms)
	if !found {
		i--
	}
	return i
}

// TestVisualMetricsAgreeWithBrowsertime loads a page of 40 tiles through a
// 4 Mbit/s link over h2 and h3, in Chromium (frames from its trace) and in
// Firefox (frames from screenshots), hands the frames (as PNGs, so both
// read the same pixels) to Browsertime's own visualmetrics-portable.py,
// and checks that First and Last Visual Change agree to one frame and
// Speed Index within 5 %.
func TestVisualMetricsAgreeWithBrowsertime(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "apt-get install chromium")
	testenv.RequireCommand(t, "ffmpeg")
	root := moduleRoot(t)
	python := filepath.Join(root, ".cache/pytools/bin/python")
	script := filepath.Join(root, ".cache/browsertime/visualmetrics-portable.py")
	testenv.RequireFile(t, python, "make deps installs Pillow and NumPy there")
	testenv.RequireFile(t, script, "make deps fetches it from Browsertime's npm package")

	page, err := gen.Synthetic(factor.Page{Kind: factor.PageSynthetic, Objects: 40, ObjectBytes: 20_000}, []string{"www.quicbench.test"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	tb := clienttest.StartTestbed(t, page, 20*time.Millisecond, 4_000_000)
	browsers := map[string]client.Browser{"chromium": &chromium.Chromium{Namespace: tb.Topo.Client, ProfileDir: t.TempDir(), Timeout: 30 * time.Second}}
	if _, err := os.Stat(firefox.DefaultPath); err == nil {
		browsers["firefox"] = &firefox.Firefox{Namespace: tb.Topo.Client, ProfileDir: t.TempDir(), Timeout: 30 * time.Second}
	} else {
		t.Logf("no Firefox at %s (apt-get install firefox-esr libnss3-tools): Chromium only", firefox.DefaultPath)
	}
	for _, b := range browsers {
		t.Cleanup(b.Close) // waits for the browser that is still shutting down before its profile goes
	}
	for name, b := range browsers {
		for _, p := range []factor.Protocol{factor.H2, factor.H3} {
			res, err := b.Load(t.Context(), client.Request{URL: page.DocumentURL(), Protocol: p, Hosts: page.Hosts(),
				Addrs: tb.Addrs, SPKIHash: tb.Certs.SPKIHash, CAFile: tb.Certs.CAFile, Expected: page.Subresources, Visual: true})
			if err != nil || !res.OK() {
				t.Fatalf("%s %s: %v %s", name, p, err, res.Failure)
			}
			compareWithBrowsertime(t, name+" "+string(p), python, script, res)
		}
	}
}

// compareWithBrowsertime checks the visual metrics of load res (named
// p) against visualmetrics-portable.py's on the same frames.
func compareWithBrowsertime(t *testing.T, p, python, script string, res client.Result) {
	t.Helper()
	dir := t.TempDir()
	times := writePNGFrames(t, dir, res.Frames)
	out, err := exec.Command(python, script, "--dir", dir, "--json").Output()
	if err != nil {
		t.Fatalf("%s: visualmetrics-portable.py: %v", p, err)
	}
	var bt browsertimeMetrics
	if err := json.Unmarshal(out, &bt); err != nil {
		t.Fatalf("%s: visualmetrics-portable.py printed %q: %v", p, out, err)
	}
	m := res.Visual
	t.Logf("%s: %d frames; quicbench FVC %d, LVC %d, SI %d; Browsertime FVC %.0f, LVC %.0f, SI %.0f (SI off by %.2f %%)",
		p, len(times), m.FirstVisualChange.Milliseconds(), m.LastVisualChange.Milliseconds(), m.SpeedIndex,
		bt.FirstVisualChange, bt.LastVisualChange, bt.SpeedIndex, 100*(float64(m.SpeedIndex)-bt.SpeedIndex)/bt.SpeedIndex)
	// The progress of each frame quicbench kept is Browsertime's for
	// that frame, to a percent (VC85/95/99 follow from it).
	theirs := progressOf(t, bt.VisualProgress)
	compared := 0
	for _, pt := range m.Progress {
		want, ok := theirs[pt.At.Milliseconds()]
		if !ok {
			continue
		}
		compared++
		if pt.Percent < want-1 || pt.Percent > want+1 {
			t.Errorf("%s: progress at %d ms: %d %%, Browsertime's %d %%", p, pt.At.Milliseconds(), pt.Percent, want)
		}
	}
	if compared < 3 {
		t.Errorf("%s: only %d of quicbench's %d progress points are in Browsertime's %q", p, compared, len(m.Progress), bt.VisualProgress)
	}
	for _, c := range []struct {
		name        string
		ours, their int64
	}{{"FVC", m.FirstVisualChange.Milliseconds(), int64(bt.FirstVisualChange)}, {"LVC", m.LastVisualChange.Milliseconds(), int64(bt.LastVisualChange)}} {
		if d := frameIndex(times, c.ours) - frameIndex(times, c.their); d < -1 || d > 1 {
			t.Errorf("%s: %s %d ms, Browsertime's %d ms: %d frames apart", p, c.name, c.ours, c.their, d)
		}
	}
	if math.Abs(float64(m.SpeedIndex)-bt.SpeedIndex) > 0.05*bt.SpeedIndex {
		t.Errorf("%s: Speed Index %d, Browsertime's %.0f: more than 5 %% apart", p, m.SpeedIndex, bt.SpeedIndex)
	}
}
