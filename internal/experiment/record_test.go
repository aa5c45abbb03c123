package experiment

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/chromium"
	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/site/gen"
	"github.com/quicbench/quicbench/internal/site/imports"
	"github.com/quicbench/quicbench/internal/testbed"
	"github.com/quicbench/quicbench/internal/testenv"
)

// recordServed serves s in a testbed and records its document in Chromium.
func recordServed(t *testing.T, s *site.Site) (*site.Archive, imports.Report) {
	t.Helper()
	tb, err := testbed.Start(testbed.Config{
		Stem: netns.RunName(os.Getpid(), fmt.Sprintf("rec%d", time.Now().UnixNano()%1e6)),
		Link: emulator.Config{}, Site: s, RunDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	c := &chromium.Chromium{Namespace: tb.Topo.Client, ProfileDir: t.TempDir(), Timeout: 30 * time.Second}
	a, rep, err := c.Record(context.Background(), chromium.RecordRequest{URL: s.DocumentURL(),
		Addrs: tb.Addrs, SPKIHash: tb.Certs.SPKIHash, Settle: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return a, rep
}

// content is an exchange's body with gzip undone.
func content(t *testing.T, ex *site.Exchange) []byte {
	if site.Get(ex.Header, "content-encoding") != "gzip" {
		return ex.Body
	}
	zr, err := gzip.NewReader(bytes.NewReader(ex.Body))
	if err != nil {
		t.Fatalf("%s: %v", ex.URL, err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRecordThenReplay records a generated page of 15 requests on 3
// origins served in a testbed, replays the recording, and records the
// replay: every response of the site is in the first recording with its
// content, and the second recording gives the first one's bytes back.
func TestRecordThenReplay(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "apt-get install chromium")
	s, err := gen.Web2024(factor.Page{Kind: factor.PageWeb2024, Number: 12, CorpusSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	first, rep := recordServed(t, s)
	t.Logf("first recording: %d responses, report %+v", len(first.Exchanges), rep)
	served := site.ArchiveOf(s, "served")
	byURL := func(a *site.Archive) map[string]*site.Exchange {
		m := map[string]*site.Exchange{}
		for _, ex := range a.Exchanges {
			m[ex.URL] = ex
		}
		return m
	}
	got := byURL(first)
	for _, want := range served.Exchanges {
		ex := got[want.URL]
		if ex == nil {
			t.Errorf("%s not recorded", want.URL)
			continue
		}
		if !bytes.Equal(content(t, ex), content(t, want)) || site.Get(ex.Header, "content-encoding") != site.Get(want.Header, "content-encoding") {
			t.Errorf("%s: recorded %d bytes coded %q, served %d coded %q", want.URL, len(ex.Body), site.Get(ex.Header, "content-encoding"), len(want.Body), site.Get(want.Header, "content-encoding"))
		}
	}
	replayed, err := first.Site()
	if err != nil {
		t.Fatal(err)
	}
	second, _ := recordServed(t, replayed)
	again := byURL(second)
	for _, ex := range first.Exchanges {
		if r := again[ex.URL]; r == nil || !bytes.Equal(r.Body, ex.Body) || !bytes.Equal(content(t, r), content(t, ex)) || r.Status != ex.Status {
			t.Errorf("%s: the replay did not give the recorded response back", ex.URL)
		}
	}
	dir := filepath.Join(t.TempDir(), "recorded")
	if err := site.WriteArchive(context.Background(), dir, first); err != nil {
		t.Fatal(err)
	}
	res, store, _ := runSpec(t, fmt.Sprintf("repetitions: 1\nretries: 0\nnetcheck: false\nfactors:\n  networks: [{rtt: 10ms}]\n  pages: [%q]\n  protocols: [h3]\n", "archive:"+dir))
	if tr := trialsOf(t, store)[0]; res.Done != 1 || tr.Status != results.StatusOK || tr.UnmatchedRequests != 0 {
		t.Errorf("replay of the recording: %s, %d unmatched", tr.Error, tr.UnmatchedRequests)
	}
}
