package papers

import (
	"math"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/results"
)

// withParts gives each load the parts link 0, loss loss, handshakes hs,
// round trips the rest of its PLT, servers 0 and client 0.
func withParts(trials []results.Trial, loss, hs float64) []results.Trial {
	for i := range trials {
		plt := *trials[i].PLT
		trials[i].Parts = results.Parts{PartLinkMs: results.F(0), PartLossMs: results.F(loss), PartHandshakeMs: results.F(hs),
			PartRoundTripsMs: results.F(plt - loss - hs), PartServerMs: results.F(0), PartClientMs: results.F(0)}
	}
	return trials
}

// TestAClaimIsTakenApartBesideThePapersReason: h3 saves one 100 ms round
// trip of handshake and 30 ms of loss recovery on two pages; the claim's
// breakdown gives both in ms and round trips, averaged over the pages,
// and names the part the paper's reason points at.
func TestAClaimIsTakenApartBesideThePapersReason(t *testing.T) {
	var trials []results.Trial
	for _, page := range []string{"p1", "p2"} {
		trials = append(trials, withParts(loads("a", page, "h2", 100, 1000, 6), 80, 200)...)
		trials = append(trials, withParts(loads("a", page, "h3", 100, 850, 6), 50, 100)...)
	}
	c := Claim{Location: Mean, Stat: Stat{Kind: RTTsSaved, Vary: h3VsH2}, Region: Within(0.5, 2),
		Explains: &Explanation{Says: "the handshake's round trip", Part: results.PartHandshake}}
	row := evaluateOne(t, c, trials)
	b := row.Breakdown
	if b == nil || b.Settings != 2 {
		t.Fatalf("breakdown %+v, want one over 2 settings", b)
	}
	if hs := b.Parts[results.PartHandshake]; !hs.Known || math.Abs(hs.Ms+100) > 1e-9 || math.Abs(hs.RTTs+1) > 1e-9 {
		t.Errorf("handshakes moved %+v, want −100 ms, −1 RTT", hs)
	}
	if loss := b.Parts[results.PartLoss]; math.Abs(loss.Ms+30) > 1e-9 {
		t.Errorf("loss recovery moved %+v, want −30 ms", loss)
	}
	sum := 0.0
	for _, e := range b.Parts {
		sum += e.Ms
	}
	if math.Abs(sum-b.Total.Ms) > 1e-9 || math.Abs(b.Total.Ms+150) > 1e-9 {
		t.Errorf("parts add up to %.3f ms, total %.3f ms, want −150", sum, b.Total.Ms)
	}
	why := row.WhyText()
	for _, want := range []string{"the paper's reason: the handshake's round trip", "h3 against h2, mean per setting over 2 settings", "handshakes -1.00 RTT (-100.0 ms)", "points at, handshakes, moved -1.00 RTT (-100.0 ms)."} {
		if !strings.Contains(why, want) {
			t.Errorf("%q lacks %q", why, want)
		}
	}
	c.Explains = nil
	if row := evaluateOne(t, c, trials); row.Breakdown != nil || row.WhyText() != "" {
		t.Errorf("a claim without a reason was taken apart: %+v", row.Breakdown)
	}
}

// TestLoadsWithoutPartsAreNotTakenApart: runs made before loads recorded
// their parts leave the breakdown out.
func TestLoadsWithoutPartsAreNotTakenApart(t *testing.T) {
	trials := append(loads("a", "p1", "h2", 100, 1000, 6), loads("a", "p1", "h3", 100, 850, 6)...)
	c := Claim{Location: Mean, Stat: Stat{Kind: Ratio, Vary: h3VsH2}, Region: Below(1), Explains: &Explanation{Says: "x", Part: results.PartLoss}}
	if row := evaluateOne(t, c, trials); row.Breakdown != nil {
		t.Errorf("breakdown %+v of loads without parts", row.Breakdown)
	}
}

// TestAReasonSaysWhatItsPartsCannotShow: a loss explanation adds the
// head-of-line time of the TCP side's loads (held_ms, 40 and 60 ms a
// load on two pages: 50 on average) and the caveat the claim gives.
func TestAReasonSaysWhatItsPartsCannotShow(t *testing.T) {
	var trials []results.Trial
	for i, page := range []string{"p1", "p2"} {
		h2 := withParts(loads("a", page, "h2", 100, 1000, 4), 80, 200)
		for k := range h2 {
			h2[k].HeldMs = results.F(float64(40 + 20*i))
		}
		trials = append(trials, h2...)
		trials = append(trials, withParts(loads("a", page, "h3", 100, 850, 4), 50, 100)...)
	}
	c := Claim{Location: Mean, Stat: Stat{Kind: Ratio, Vary: h3VsH2}, Region: Below(1),
		Explains: &Explanation{Says: "head-of-line blocking", Part: results.PartLoss, HeadOfLine: true, Caveat: "loss recovery is read from the link over TCP and from the server over QUIC"}}
	why := evaluateOne(t, c, trials).WhyText()
	for _, want := range []string{"Head-of-line blocking: h2's bytes waited behind a lost segment 50.0 ms a load (mean)", "What these parts cannot show: loss recovery is read from the link over TCP and from the server over QUIC."} {
		if !strings.Contains(why, want) {
			t.Errorf("%q lacks %q", why, want)
		}
	}
	trials[0].HeldMs = nil
	if why := evaluateOne(t, c, trials).WhyText(); !strings.Contains(why, "behind a lost segment not recorded by these loads") {
		t.Errorf("a load without held_ms: %q", why)
	}
}
