package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
)

// replayTrial is a verified load of a recorded page that started requests
// up to its load event, and as many again after it (beacons).
func replayTrial(p factor.Protocol, requests, bytes, unmatched int64) results.Trial {
	return results.Trial{Levels: results.Levels{Network: "n", Page: "archive:sites/shop", Protocol: p, Stack: "tcp", Server: "go", QUIC: "quic-go",
		Visit: "first", Client: "chromium", Browser: "fresh", Origins: 1},
		PageValues:   results.PageValues{PageKind: factor.PageArchive},
		Outcome:      results.Outcome{Status: results.StatusOK, ServerRequests: 2 * requests, UnmatchedRequests: unmatched},
		ReplayValues: results.ReplayValues{ServedBytes: bytes + 1, SteadyUnmatched: unmatched, LoadRequests: requests, LoadBytes: bytes}}
}

func TestWorkMarksProtocolsThatDidDifferentWork(t *testing.T) {
	trials := []results.Trial{
		replayTrial(factor.H2, 200, 1_000_000, 4), replayTrial(factor.H2, 202, 1_000_000, 4), replayTrial(factor.H2, 260, 1_000_000, 9),
		replayTrial(factor.H3, 201, 1_010_000, 5), replayTrial(factor.H3, 203, 1_010_000, 5),
		// a failed load and a generated page's are left out
		{Levels: results.Levels{Page: "archive:sites/shop", Protocol: factor.H3}, PageValues: results.PageValues{PageKind: factor.PageArchive},
			Outcome: results.Outcome{Status: results.StatusFailed, ServerRequests: 900}},
		{Levels: results.Levels{Page: "synthetic:1x1KB", Protocol: factor.H3}, Outcome: results.Outcome{Status: results.StatusOK, ServerRequests: 9}},
	}
	ws := analysis.Works(trials)
	if len(ws) != 1 || len(ws[0].Protocols) != 2 {
		t.Fatalf("works %+v", ws)
	}
	h2, h3 := ws[0].Protocols[0], ws[0].Protocols[1]
	if h2.Loads != 3 || h2.Requests != 202 || h3.Requests != 202 || h3.Bytes != 1_010_000 || h2.BrowserOwn != 4 || ws[0].Differs ||
		h2.Served != 404 || h3.ServedBytes != 1_010_001 {
		t.Errorf("within 2 %%: %+v", ws[0])
	}
	// What the servers answered after the load does not make different work.
	trials[0].ServerRequests, trials[1].ServerRequests = 900, 1000
	if ws = analysis.Works(trials); ws[0].Differs {
		t.Errorf("requests after the load made different work: %+v", ws[0])
	}
	trials[1].LoadRequests, trials[3].LoadRequests, trials[4].LoadRequests = 230, 220, 224
	if ws = analysis.Works(trials); !ws[0].Differs || ws[0].RequestSpread < 0.03 {
		t.Errorf("230 against 222: %+v", ws[0])
	}
	var out bytes.Buffer
	writeWork(&out, ws, analysis.Varied{})
	if !strings.Contains(out.String(), "DIFFERENT WORK (requests ±") || strings.Count(out.String(), "archive:sites/shop") != 2 {
		t.Errorf("text:\n%s", out.String())
	}
}
