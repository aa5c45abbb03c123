package report

import (
	"bytes"
	"maps"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quicbench/quicbench/internal/results"
)

// TestLanesAreRatesBetweenSamples: cumulative samples become each
// interval's rate: CPU ms per ms as cores, bytes per ms as Mbit/s; a
// party counted in quicbench's process (nil) has no lane.
func TestLanesAreRatesBetweenSamples(t *testing.T) {
	samples := []results.Sample{
		{AtMs: 50, ClientCPUMs: results.F(25), QuicbenchCPUMs: 5, DownBytes: 6250, UpBytes: 0},
		{AtMs: 100, ClientCPUMs: results.F(125), QuicbenchCPUMs: 7.5, DownBytes: 68750, UpBytes: 625},
		{AtMs: 120, ClientCPUMs: results.F(125), QuicbenchCPUMs: 7.5, DownBytes: 68750, UpBytes: 625},
	}
	got := map[string][]laneStep{}
	for _, l := range lanesOf(samples, math.Inf(1)) {
		got[l.name+" "+l.unit] = l.steps
	}
	want := map[string][]laneStep{
		"browser CPU cores":   {{0, 50, 0.5}, {50, 100, 2}, {100, 120, 0}},
		"quicbench CPU cores": {{0, 50, 0.1}, {50, 100, 0.05}, {100, 120, 0}},
		"link down Mbit/s":    {{0, 50, 1}, {50, 100, 10}, {100, 120, 0}},
		"link up Mbit/s":      {{0, 50, 0}, {50, 100, 0.1}, {100, 120, 0}},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(laneStep{}), cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })); diff != "" {
		t.Errorf("lanes (-want +got):\n%s", diff)
	}
	if lanesOf(nil, math.Inf(1)) != nil {
		t.Error("a load without samples has lanes")
	}
}

// TestLaneScalesAreSharedAndRound: every waterfall's lanes of one unit
// share the highest rate among them, rounded up to 1, 2 or 5 × 10^k; the
// link's are at its rate where every load's link had one.
func TestLaneScalesAreSharedAndRound(t *testing.T) {
	ws := []Waterfall{
		{Samples: []results.Sample{{AtMs: 50, ClientCPUMs: results.F(60), DownBytes: 50_000}}},    // 1.2 cores, 8 Mbit/s
		{Samples: []results.Sample{{AtMs: 100, ServerCPUMs: results.F(30), DownBytes: 150_000}}},  // its server lane alone, 12 Mbit/s
		{Samples: []results.Sample{{AtMs: 100, ClientCPUMs: results.F(20), QuicbenchCPUMs: 140}}}, // 1.4 cores
	}
	ws[1].Samples[0].ClientCPUMs = results.F(0)
	if got, want := laneScales(ws), map[string]float64{unitCores: 2, unitMbps: 20}; !maps.Equal(got, want) {
		t.Errorf("scales %v, want %v", got, want)
	}
	for i := range ws {
		ws[i].Trial.RateDownBps, ws[i].Trial.RateUpBps = 10_000_000, 5_000_000
	}
	if got := laneScales(ws)[unitMbps]; got != 10 {
		t.Errorf("the link's lanes' scale is %v Mbit/s, want the link's 10", got)
	}
	ws[2].Trial.RateUpBps = 0 // unlimited: the samples' highest again
	if got := laneScales(ws)[unitMbps]; got != 20 {
		t.Errorf("with an unlimited link, the link's lanes' scale is %v Mbit/s, want 20", got)
	}
	for v, want := range map[float64]float64{0.3: 0.5, 1: 1, 1.01: 2, 7: 10, 0: 1, 45: 50} {
		if got := niceCeil(v); got != want {
			t.Errorf("niceCeil(%v) = %v, want %v", v, got, want)
		}
	}
}

// TestTheLanesLieUnderTheWaterfall: a sampled load's waterfall names each
// lane with its scale under its rows, tips each step, and grows by the
// lanes' height; the caption says what the lanes are.
func TestTheLanesLieUnderTheWaterfall(t *testing.T) {
	tr := results.Trial{ID: "c-r1", Levels: results.Levels{Protocol: "h3", Network: "n", Page: "p"}}
	tr.PLT = results.F(260)
	w := Waterfall{Trial: tr, HAR: waterfallHAR(time.Unix(1_800_000_000, 0))}
	plain, err := waterfallOf(w, "waterfall", sharedAxes{})
	if err != nil {
		t.Fatal(err)
	}
	w.Samples = []results.Sample{
		{AtMs: 100, ClientCPUMs: results.F(80), ServerCPUMs: results.F(10), QuicbenchCPUMs: 4, DownBytes: 20_000, UpBytes: 2_000},
		{AtMs: 200, ClientCPUMs: results.F(190), ServerCPUMs: results.F(30), QuicbenchCPUMs: 9, DownBytes: 120_000, UpBytes: 4_000},
	}
	f, err := waterfallOf(w, "waterfall", sharedAxes{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"browser CPU, 0–2 cores", "server CPU, 0–2 cores", "quicbench CPU, 0–2 cores", "link down, 0–10 Mbit/s", "link up, 0–10 Mbit/s",
		"browser CPU: 1.10 cores from 100 to 200 ms", "link down: 8.00 Mbit/s from 100 to 200 ms"} {
		if !bytes.Contains(f.SVG, []byte(want)) {
			t.Errorf("the sampled waterfall lacks %q", want)
		}
	}
	if bytes.Contains(plain.SVG, []byte("browser CPU")) {
		t.Error("a waterfall without samples has lanes")
	}
	if !strings.Contains(f.Caption, "lanes") || len(f.PNG) <= len(plain.PNG) || svgHeight(t, f.SVG) <= svgHeight(t, plain.SVG) {
		t.Errorf("the lanes did not grow the figure: %v against %v pt", svgHeight(t, f.SVG), svgHeight(t, plain.SVG))
	}
}

// svgHeight is the height an SVG figure declares, in points.
func svgHeight(t *testing.T, svg []byte) float64 {
	t.Helper()
	m := regexp.MustCompile(`<svg[^>]* height="([0-9.]+)pt"`).FindSubmatch(svg)
	if m == nil {
		t.Fatal("the SVG declares no height in points")
	}
	h, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
