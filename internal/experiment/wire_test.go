package experiment

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/breakdown"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/site"
)

// TestCalibrationAsksTheLargestOriginForAFewWindows: the calibration
// download takes the origin that serves the most bytes, its largest GET
// responses first, until they pass calibrationBytes, asking again from the
// largest where they fall short (h2, h3), or its largest alone (h1);
// POSTs and errors are not asked for.
func TestCalibrationAsksTheLargestOriginForAFewWindows(t *testing.T) {
	small := &site.Origin{Host: "small.test", Resources: map[string]*site.Resource{"/a": {Path: "/a", Body: make([]byte, 50_000)}}}
	big := &site.Origin{Host: "big.test", Resources: map[string]*site.Resource{}}
	for i := range 20 {
		path := fmt.Sprintf("/o/%02d", i)
		big.Resources[path] = &site.Resource{Path: path, Body: make([]byte, 10_000+i)}
	}
	big.Resources["/post"] = &site.Resource{Path: "/post", Method: "POST", Body: make([]byte, 900_000)}
	big.Resources["/err"] = &site.Resource{Path: "/err", Status: 500, Body: make([]byte, 900_000)}
	page := &site.Site{Origins: []*site.Origin{small, big}}
	urls := calibrationURLs(calibrationResources(page, false, calibrationBytes))
	// 20 responses of about 10 KB make 200 KB: all 20, largest first, then
	// again, and the 13 largest a third time, to pass 512 KB
	if len(urls) != 53 || urls[0] != "https://big.test/o/19" || !slices.IsSortedFunc(urls[:20], func(a, b string) int { return strings.Compare(b, a) }) ||
		!slices.Equal(urls[:20], urls[20:40]) || !slices.Equal(urls[40:], urls[:13]) {
		t.Errorf("h2/h3 calibration asks for %d URLs: %v; want big.test's 20 largest first, again, and the 13 largest (just past 512 KB)", len(urls), urls)
	}
	if got := calibrationSize(calibrationResources(page, false, calibrationBytes)); got < calibrationBytes || got > calibrationBytes+10_020 {
		t.Errorf("h2/h3 calibration size %d B, want just past %d", got, calibrationBytes)
	}
	if one := calibrationURLs(calibrationResources(page, true, calibrationBytes)); len(one) != 1 || one[0] != "https://big.test/o/19" {
		t.Errorf("h1 calibration %v, want the largest alone", one)
	}
	if calibrationResources(nil, false, calibrationBytes) != nil {
		t.Error("a live page (no site) has calibration URLs")
	}
}

// TestACalibrationServesTheSetupsThatDifferOnlyInTheirPage: setups on
// one network with one TCP, server and QUIC stack share a calibration
// whatever their pages; another stack or network has its own. The TCP
// protocol calibrated is h2 where the spec loads over it, else h1.
func TestACalibrationServesTheSetupsThatDifferOnlyInTheirPage(t *testing.T) {
	setup := func(network, page, stack string) *plan.Setup {
		return &plan.Setup{Levels: factor.Levels{factor.IDNetwork: network, factor.IDPage: page, factor.IDStack: stack,
			factor.IDServer: "go", factor.IDQUIC: "quinn+cubic"}}
	}
	a := calibrationKey(setup("dsl", "web2024:1", "tcp+"))
	if b := calibrationKey(setup("dsl", "web2024:2", "tcp+")); a != b {
		t.Errorf("pages web2024:1 and :2 calibrate apart: %q, %q", a, b)
	}
	if b := calibrationKey(setup("dsl", "web2024:1", "tcp")); a == b {
		t.Errorf("stacks tcp+ and tcp share calibration %q", a)
	}
	if b := calibrationKey(setup("lte", "web2024:1", "tcp+")); a == b {
		t.Errorf("networks dsl and lte share calibration %q", a)
	}
	for _, c := range []struct{ loads, want []factor.Protocol }{
		{[]factor.Protocol{factor.H1, factor.H2, factor.H3}, []factor.Protocol{factor.H2, factor.H3}},
		{[]factor.Protocol{factor.H1, factor.H3}, []factor.Protocol{factor.H1, factor.H3}},
		{[]factor.Protocol{factor.H2}, []factor.Protocol{factor.H2}},
	} {
		if got := calibrationProtocols(c.loads); !slices.Equal(got, c.want) {
			t.Errorf("loads over %v calibrate over %v, want %v", c.loads, got, c.want)
		}
	}
}

// TestASlowLinksCalibrationStaysShort: a calibration asks for 512 KB over
// an unlimited or fast downlink, 2 s of a slow one's rate (250 KB at
// 1 Mbit/s), and never less than 64 KB.
func TestASlowLinksCalibrationStaysShort(t *testing.T) {
	for _, c := range []struct {
		rate int64
		want int
	}{{0, 512 << 10}, {100_000_000, 512 << 10}, {1_000_000, 250_000}, {100_000, 64 << 10}} {
		if got := calibrationBudget(link.Config{RateBitsPerSecond: c.rate}); got != c.want {
			t.Errorf("a %d bit/s downlink: a calibration of %d B, want %d", c.rate, got, c.want)
		}
	}
}

// TestTheWireIsJudgedWhereItIsRead: the calibration tells flights apart,
// the wire reads pacing and the answer to a loss, and the analysis judges
// them, from one round trip on.
func TestTheWireIsJudgedWhereItIsRead(t *testing.T) {
	if analysis.MinJudgedRTT != breakdown.MinJudgedRTT {
		t.Errorf("wire read from %v, judged from %v: want one round trip", breakdown.MinJudgedRTT, analysis.MinJudgedRTT)
	}
	if gap := calibrationGap(breakdown.MinJudgedRTT - time.Millisecond); gap != 0 {
		t.Errorf("a calibration under %v tells flights apart by a gap of %v, where the wire is not read", breakdown.MinJudgedRTT, gap)
	}
	if gap := calibrationGap(breakdown.MinJudgedRTT); gap == 0 {
		t.Errorf("a calibration on a %v round trip tells no flights apart, where the wire is read", breakdown.MinJudgedRTT)
	}
}
