package reproduce

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/papers"
)

// TestTheShareReadsItsRecordedSample: a sequential reproduction's
// samples, written beside its runs, are what every later evaluation of
// its runs reads the share claims on, the claims table of its report too;
// without the file every setting is read.
func TestTheShareReadsItsRecordedSample(t *testing.T) {
	rs, err := Resolve("masri", "paper", t.TempDir(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	r := rs[0]
	fixedRun(t, r, 0.15, 7, masriRatio)
	all, err := r.Rows(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDesign(r, DefaultPilot, 1)
	if err != nil {
		t.Fatal(err)
	}
	st := d.Start()
	if err := WriteSample(r.Dir, d.Sample(st)); err != nil {
		t.Fatal(err)
	}
	sampled, err := r.Rows(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if a, s := rowByID(all, "C8").Settings, rowByID(sampled, "C8").Settings; a != 36 || s != st.Sampled["C8"] || s >= a {
		t.Errorf("C8 read %d settings without the file and %d with it; want 36, then its sample of %d", a, s, st.Sampled["C8"])
	}
	if a, s := rowByID(all, "C10"), rowByID(sampled, "C10"); a.Loads != s.Loads {
		t.Errorf("C10, no share, read %d loads with the file and %d without", s.Loads, a.Loads)
	}
}

// TestABadSampleFileIsRefusedWithoutEcho: a file that no sequential
// reproduction wrote, or a link in its place, is refused in one line
// that says what to do, and none of its content is echoed.
func TestABadSampleFileIsRefusedWithoutEcho(t *testing.T) {
	for name, content := range map[string]string{
		"not JSON":   "\x1b[31mSECRET",
		"a claim":    `{"samples":{"SECRET\u001b":["a"]}}`,
		"no samples": `{"sample":{}}`,
		"empty key":  `{"samples":{"C8":[""]}}`,
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, SampleFile), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadSample(dir)
		if err == nil || strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "move the file away") {
			t.Errorf("%s: %v", name, err)
		}
	}
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "elsewhere.json")
	if err := os.WriteFile(target, []byte(`{"samples":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, SampleFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSample(dir); err == nil {
		t.Error("a link in the sample file's place was followed")
	}
	if s, err := ReadSample(t.TempDir()); s != nil || err != nil {
		t.Errorf("no file: %v, %v; want nothing", s, err)
	}
}

func FuzzParseSample(f *testing.F) {
	f.Add([]byte(`{"samples":{"C8":["network=rtt5ms-loss2;page=synthetic:2x1KB"]}}`))
	f.Add([]byte(`{"samples":{}}`))
	f.Add([]byte(`{"samples":{"C1":[""]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := parseSample(data)
		if err != nil {
			return
		}
		for id, keys := range s {
			if !claimID.MatchString(id) {
				t.Errorf("believed claim %q", id)
			}
			for k := range keys {
				if k == "" || len(k) > 4096 {
					t.Errorf("believed a setting of %d bytes", len(k))
				}
			}
		}
	})
}

// TestAgreementComparesVerdictsThenIntervals: the same verdict agrees;
// different verdicts agree within intervals only where each value lies
// in the other's interval.
func TestAgreementComparesVerdictsThenIntervals(t *testing.T) {
	f := papers.Row{Verdict: papers.Agrees, Value: 1.3, Lo: 1.1, Hi: 1.5}
	for _, c := range []struct {
		s    papers.Row
		want Agreement
	}{
		{papers.Row{Verdict: papers.Agrees, Value: 2, Lo: 1.9, Hi: 2.1}, SameVerdict},
		{papers.Row{Verdict: papers.Inconclusive, Value: 1.2, Lo: 0.9, Hi: 1.6}, WithinIntervals},
		{papers.Row{Verdict: papers.Inconclusive, Value: 1.0, Lo: 0.9, Hi: 1.6}, Differs},
		{papers.Row{Verdict: papers.Disagrees, Value: 1.2, Lo: 1.1, Hi: 1.25}, Differs},
	} {
		if got := Agree(f, c.s); got != c.want {
			t.Errorf("fixed %+v, sequential %+v: %s, want %s", f, c.s, got, c.want)
		}
	}
	none := papers.Row{Verdict: papers.NotMeasured}
	if got := Agree(none, none); got != NotComparable {
		t.Errorf("neither measured: %s", got)
	}
}
