package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/chromium"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/testbed/standin"
	"github.com/quicbench/quicbench/internal/testenv"
)

// TestCompareALiveSiteThenReportAndExport: compare --page url:… against
// the stand-in site (pinned by --resolve, its CA by --ca) answers with
// what the origin offered, the round trip beyond the emulator and the
// host it did not pin (its static files' second name), and its run reads
// back through report and export as every other run does.
func TestCompareALiveSiteThenReportAndExport(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "make deps")
	st := standin.Serve(t, 4, 5_000, []string{standin.Host, standin.Static}, []string{standin.Host})
	dir := filepath.Join(t.TempDir(), "live")
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"compare", "--details", "--page", "url:https://" + standin.Host + "/", "--resolve", standin.Host + "=" + standin.Addr.String(),
		"--ca", st.Certs.CAFile, "--protocols", "h2,h3", "--runs", "1", "--rtt", "40ms", "--loss", "0", "--netcheck=false", "--out", dir}, &stdout, &stderr)
	out := stdout.String()
	if code != exitOK {
		t.Fatalf("compare exited %d: %s\n%s", code, stderr.String(), out)
	}
	for _, want := range []string{"url:https://www.standin.test/ on ", "h3  ", "live site: www.standin.test 203.0.113.10: h3 h2 http/1.1; RTT 40ms emulated + ", "ms measured to the origin (TCP handshakes; ", "ms after the loads; ICMP echoes ", "ms, 0 % lost)", "Answer:",
		"not sent: the requests (listed ones, over all loads) to hosts the run did not pin: static.standin.test (4); to load them too, add --resolve static.standin.test"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare's output lacks %q:\n%s", want, out)
		}
	}
	t.Logf("compare's answer:\n%s", out)
	if strings.Contains(out, "failed:") {
		t.Errorf("a live load failed:\n%s", out)
	}
	stdout.Reset()
	if code := Run(context.Background(), []string{"report", dir}, &stdout, &stderr); code != exitOK {
		t.Fatalf("report exited %d: %s", code, stderr.String())
	}
	if code := Run(context.Background(), []string{"export", dir}, &stdout, &stderr); code != exitOK {
		t.Fatalf("export exited %d: %s", code, stderr.String())
	}
	csv, err := os.ReadFile(filepath.Join(dir, "export", "trials.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// the politeness cap and the address policy: exit status 2, one line, loads kept
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-loads", "1"}, "the run reached --max-loads 1: raise it to load the site more often (1 completed loads are kept in "},
		{[]string{"--resolve", standin.Host + "=10.9.8.7"}, "www.standin.test resolves to 10.9.8.7, a private address: aiming a benchmark there needs --allow-private"},
	} {
		var out, errOut bytes.Buffer
		args := append([]string{"compare", "--page", "url:https://" + standin.Host + "/", "--resolve", standin.Host + "=" + standin.Addr.String(),
			"--ca", st.Certs.CAFile, "--protocols", "h2,h3", "--runs", "1", "--netcheck=false", "--out", filepath.Join(t.TempDir(), "c")}, c.args...)
		if code := Run(context.Background(), args, &out, &errOut); code != exitUsage || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, errOut.String(), c.want)
		}
	}
	header, rows, _ := strings.Cut(string(csv), "\n")
	if !strings.Contains(header, "live_excluded") || strings.Count(rows, "url:https://www.standin.test/") != 2 {
		t.Errorf("export: header %.300q…, %d rows of the live page; want live_excluded and 2 loads", header, strings.Count(rows, "url:https://www.standin.test/"))
	}
}

// TestLiveTextSaysWhenThePathChanged: the answer's live line states a
// path whose own round trip moved during the run, and a loss it could not
// measure.
func TestLiveTextSaysWhenThePathChanged(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	tb := results.Testbed{LiveOrigins: "www.example.test 203.0.113.10: h3 h2 http/1.1", BaseRTTMs: f(20), BaseRTTAfterMs: f(31)}
	got := liveText(tb, 100*time.Millisecond)
	for _, want := range []string{"RTT 100ms emulated + 20.0 ms measured to the origin (TCP handshakes; 31.0 ms after the loads; no ICMP echo answered: the path's own loss is not known)",
		"the path changed during the run (by more than 25 %)"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	tb.BaseRTTAfterMs, tb.BasePingMs, tb.BaseLossPct = f(21), f(19.5), f(5)
	if got := liveText(tb, 100*time.Millisecond); strings.Contains(got, "changed") || !strings.Contains(got, "ICMP echoes 19.5 ms, 5 % lost") {
		t.Errorf("%q: want no change stated and the echoes' loss", got)
	}
}

// TestALiveSitesShardsMerge: a live spec of two networks runs as two
// shards, whose run directories merge into one run that report and
// export read.
func TestALiveSitesShardsMerge(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "make deps")
	st := standin.Serve(t, 2, 2_000, nil, []string{standin.Host})
	dir := t.TempDir()
	specPath := filepath.Join(dir, "live.yaml")
	text := fmt.Sprintf(`repetitions: 1
netcheck: false
live: {resolve: ["%s=%s"], ca: %q}
factors:
  networks: [{name: near, rtt: 20ms}, {name: far, rtt: 60ms}]
  pages: ["url:https://%s/"]
  protocols: [h2, h3]
`, standin.Host, standin.Addr, st.Certs.CAFile, standin.Host)
	if err := os.WriteFile(specPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	for _, args := range [][]string{
		{"run", specPath, "--shard", "1/2", "--out", filepath.Join(dir, "a")},
		{"run", specPath, "--shard", "2/2", "--out", filepath.Join(dir, "b")},
		{"merge", filepath.Join(dir, "m"), filepath.Join(dir, "a"), filepath.Join(dir, "b")},
		{"report", filepath.Join(dir, "m")},
		{"export", filepath.Join(dir, "m")},
	} {
		if code := Run(context.Background(), args, io.Discard, &stderr); code != exitOK {
			t.Fatalf("%v exited %d: %s", args, code, stderr.String())
		}
	}
	csv, err := os.ReadFile(filepath.Join(dir, "m", "export", "trials.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(csv), "url:https://www.standin.test/"); n != 4 {
		t.Errorf("the merged run exports %d loads of the live page, want 4 (2 networks × h2, h3)", n)
	}
	store, err := results.Open(filepath.Join(dir, "m", results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if done, failed, err := store.Counts(); err != nil || done != 4 || failed != 0 {
		t.Errorf("the merged run holds %d loads, %d failed (%v); want 4 verified", done, failed, err)
	}
}
