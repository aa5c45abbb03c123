package experiment

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/spec"
	"github.com/quicbench/quicbench/internal/testenv"
)

// TestOverheadsCacheKeepsWhatItCanBelieve: a run's medians replace their
// clients' entries and keep the others; an entry too old, from the
// future, of an unknown client, of a browser without its CPU level (or
// one not as it is written), of no loads or over ten minutes is not
// believed; a client with under five trials in a run leaves its entry.
func TestOverheadsCacheKeepsWhatItCanBelieve(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	base, _ := os.UserCacheDir()
	now := time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)
	old := `[{"client":"firefox","browser":"fresh","client_cpu":"1","per_load_ms":4500,"loads":30,"at":"2026-11-20T10:00:00Z"},
 {"client":"chromium","browser":"fresh","client_cpu":"unlimited","per_load_ms":900,"loads":30,"at":"2026-11-20T10:00:00Z"},
 {"client":"chromium","browser":"warm","client_cpu":"unlimited","per_load_ms":400,"loads":9,"at":"2026-09-01T10:00:00Z"},
 {"client":"chromium","browser":"fresh","per_load_ms":400,"loads":9,"at":"2026-11-20T10:00:00Z"},
 {"client":"chromium","browser":"fresh","client_cpu":"01","per_load_ms":400,"loads":9,"at":"2026-11-20T10:00:00Z"},
 {"client":"lynx","per_load_ms":100,"loads":9,"at":"2026-11-20T10:00:00Z"},
 {"client":"loader","per_load_ms":100,"loads":0,"at":"2026-11-20T10:00:00Z"},
 {"client":"loader","per_load_ms":1e12,"loads":3,"at":"2026-11-20T10:00:00Z"},
 {"client":"loader","per_load_ms":5,"loads":3,"at":"2026-12-20T10:00:00Z"}]`
	if err := os.MkdirAll(filepath.Join(base, "quicbench"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, overheadsFile), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := spec.Parse([]byte("name: o\nrepetitions: 6\nfactors:\n  networks: [{rtt: 10ms}]\n  pages: [synthetic:1x1KB]\n  protocols: [h2]\n  clients: [chromium, loader]\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := overheadCollector{}
	for _, tr := range plan.Build(s).Trials {
		ms := 1100.0 + float64(tr.Rep)
		if tr.Cell.Levels.Client() == factor.ClientLoader {
			if tr.Rep > 4 {
				continue // 4 loader trials: too few
			}
			ms = 2
		}
		c.add(s, tr, results.F(ms))
	}
	c.save(now, slog.New(slog.DiscardHandler))
	o := MachineOverheads(now)
	want := map[plan.OverheadKey]time.Duration{
		{Client: factor.ClientChromium, Browser: factor.BrowserFresh, ClientCPU: factor.ClientCPUUnlimited}: 1103500 * time.Microsecond, // the median of 1101–1106
		{Client: factor.ClientFirefox, Browser: factor.BrowserFresh, ClientCPU: "1"}:                        4500 * time.Millisecond,
	}
	if len(o.Measured) != len(want) {
		t.Errorf("measured %v, want %v", o.Measured, want)
	}
	for k, d := range want {
		if got := o.Measured[k]; got.PerLoad != d {
			t.Errorf("%s: %+v, want %v a load", k, got, d)
		}
	}
	if m := o.Measured[plan.OverheadKey{Client: factor.ClientChromium, Browser: factor.BrowserFresh, ClientCPU: factor.ClientCPUUnlimited}]; m.Loads != 6 || !m.At.Equal(now) {
		t.Errorf("chromium's entry %+v, want 6 loads at %v", m, now)
	}
	if got := MachineOverheads(now.Add(61 * 24 * time.Hour)); len(got.Measured) != 0 {
		t.Errorf("two months later: %v, want nothing believed", got.Measured)
	}
}

// TestEstimateChargesTheMeasuredOverheads: a measured overhead replaces
// the constant trial by trial, and the plan says where its overheads come
// from.
func TestEstimateChargesTheMeasuredOverheads(t *testing.T) {
	s, err := spec.Parse([]byte("name: o\nrepetitions: 10\nfactors:\n  networks: [{rtt: 10ms}]\n  pages: [synthetic:1x1KB]\n  protocols: [h2, h3]\n  clients: [chromium, firefox]\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := plan.Build(s)
	at := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	chromium := plan.OverheadKey{Client: factor.ClientChromium, Browser: factor.BrowserFresh, ClientCPU: factor.ClientCPUUnlimited}
	o := plan.Overheads{Measured: map[plan.OverheadKey]plan.Measured{chromium: {PerLoad: 1550 * time.Millisecond, Loads: 45, At: at}}}
	if d := p.EstimateOn(s, o) - p.Estimate(s); d != 20*time.Second { // 20 Chromium trials, 1 s more each
		t.Errorf("the measured overhead adds %v, want 20 s", d)
	}
	text := o.Describe(s, p)
	for _, want := range []string{"chromium fresh (unlimited CPU) 1.55 s (45 loads, 2026-11-29)", "not measured here yet: firefox fresh (unlimited CPU) 1.30 s"} {
		if !strings.Contains(text, want) {
			t.Errorf("%q lacks %q", text, want)
		}
	}
	if (plan.Overheads{}).Describe(s, p) != "" {
		t.Error("constants alone are described")
	}
}

// FuzzParseOverheads: whatever the cache file holds, reading it neither
// panics nor believes an entry the rules refuse.
func FuzzParseOverheads(f *testing.F) {
	f.Add([]byte(`[{"client":"chromium","browser":"fresh","per_load_ms":1100,"loads":6,"at":"2026-11-29T18:00:00Z"}]`))
	f.Add([]byte(`[{"client":"firefox","per_load_ms":-1,"loads":6,"at":"2026-11-29T18:00:00Z"}]`))
	f.Add([]byte(`{"client":"chromium"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, e := range parseOverheads(data) {
			if !(e.PerLoadMs > 0) || e.Loads < 1 || e.At.IsZero() || time.Duration(e.PerLoadMs*float64(time.Millisecond)) > maxOverhead {
				t.Errorf("believed %+v", e)
			}
		}
	})
}

// TestPilotMeasuresTheOverheads: the pilot of a spec of the built-in
// loader loads its page six times and leaves the loader's overhead in
// the cache, measured now, and no run behind.
func TestPilotMeasuresTheOverheads(t *testing.T) {
	testenv.RequireRoot(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	s, err := spec.Parse([]byte(tinySpec))
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	if err := MeasureOverheads(t.Context(), s, nil, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	m, ok := MachineOverheads(time.Now()).Measured[plan.OverheadKey{Client: factor.ClientLoader}]
	if !ok || m.Loads != pilotLoads || m.At.Before(before) || m.PerLoad <= 0 || m.PerLoad > time.Second {
		t.Errorf("the loader's overhead after the pilot: %+v (found %v), want %d loads measured now, under a second each", m, ok, pilotLoads)
	}
}
