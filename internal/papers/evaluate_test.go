package papers

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/stats"
)

// load is a fake trial: its levels, RTT and PLT/TTFB value.
func load(id, network, page, protocol string, rttMs, ms float64) results.Trial {
	var t results.Trial
	t.ID, t.Status = id, results.StatusOK
	t.Network, t.Page, t.Protocol, t.Origins, t.Visit = network, page, factor.Protocol(protocol), 1, factor.Visit("first")
	t.RTTMs = rttMs
	t.PLT, t.TTFB = results.F(ms), results.F(ms)
	return t
}

// loads are n loads of one cell around ms (±2 %, deterministic).
func loads(network, page, protocol string, rttMs, ms float64, n int) []results.Trial {
	var out []results.Trial
	for i := range n {
		wobble := 1 + 0.02*float64(i%3-1)
		out = append(out, load(fmt.Sprintf("%s-%s-%s-%d", network, page, protocol, i), network, page, protocol, rttMs, ms*wobble))
	}
	return out
}

var h3VsH2 = Contrast{Factor: factor.IDProtocol, From: "h2", To: "h3"}

func evaluateOne(t *testing.T, c Claim, trials []results.Trial) Row {
	t.Helper()
	if c.Metric == "" {
		c.Metric = "plt"
	}
	rows := Evaluate(Paper{ID: "test", Claims: []Claim{c}}, []Source{{Trials: trials}}, Options{Reps: 500, Seed: 1})
	return rows[0]
}

func TestRatioPoolsSettingsByGeometricMean(t *testing.T) {
	var trials []results.Trial
	trials = append(trials, loads("a", "p1", "h2", 50, 1000, 6)...)
	trials = append(trials, loads("a", "p1", "h3", 50, 400, 6)...)
	trials = append(trials, loads("a", "p2", "h2", 50, 1000, 6)...)
	trials = append(trials, loads("a", "p2", "h3", 50, 900, 6)...)
	c := Claim{Location: Mean, Stat: Stat{Kind: Ratio, Vary: h3VsH2}, Region: Below(1)}
	row := evaluateOne(t, c, trials)
	want := math.Sqrt(0.4 * 0.9) // 0.6
	if math.Abs(row.Value-want) > 1e-9 {
		t.Errorf("ratio %.4f, want the geometric mean %.4f", row.Value, want)
	}
	if row.Verdict != Agrees || !(row.Lo < want && want < row.Hi) || row.Hi >= 1 {
		t.Errorf("verdict %s, interval [%.3f, %.3f]: want agrees with the interval around %.3f and below 1", row.Verdict, row.Lo, row.Hi, want)
	}
	if row.Settings != 2 || row.Loads != 24 || len(row.Trials) != 24 {
		t.Errorf("used %d settings, %d loads, %d trial IDs; want 2, 24, 24", row.Settings, row.Loads, len(row.Trials))
	}
	if got := row.Levels[factor.IDPage]; len(got) != 2 {
		t.Errorf("pages covered %v, want p1 and p2", got)
	}
	c.Region = Above(1)
	if row := evaluateOne(t, c, trials); row.Verdict != Disagrees {
		t.Errorf("a claim that h3 is slower: %s, want disagrees", row.Verdict)
	}
	c.Region = Within(0.6, 0.7)
	if row := evaluateOne(t, c, trials); row.Verdict != Inconclusive {
		t.Errorf("a region with a bound inside the interval [%.3f, %.3f]: %s, want inconclusive", row.Lo, row.Hi, row.Verdict)
	}
}

func TestTheVerdictReadsThePapersLevel(t *testing.T) {
	// Noisy cells whose 95 % interval lies just below 1 while the 99 %
	// one need not: the 99 % interval must be at least as wide.
	var trials []results.Trial
	for i, v := range []float64{900, 1100, 950, 1050, 1000, 980, 1020} {
		trials = append(trials, load(fmt.Sprint("q", i), "a", "p", "h3", 50, v*0.9))
		trials = append(trials, load(fmt.Sprint("t", i), "a", "p", "h2", 50, v*(1+0.01*float64(i))))
	}
	c := Claim{Location: Mean, Stat: Stat{Kind: Ratio, Vary: h3VsH2}, Region: Below(1), Alpha: 0.01}
	row := evaluateOne(t, c, trials)
	if row.LevelLo > row.Lo || row.LevelHi < row.Hi {
		t.Errorf("99 %% interval [%.3f, %.3f] narrower than the 95 %% one [%.3f, %.3f]", row.LevelLo, row.LevelHi, row.Lo, row.Hi)
	}
	if want := decide(c.Region, row.LevelLo, row.LevelHi); row.Verdict != want {
		t.Errorf("verdict %s, want %s: the one of the 99 %% interval", row.Verdict, want)
	}
}

func TestShareCountsSettingsWithAnExactInterval(t *testing.T) {
	var trials []results.Trial
	for i, h3 := range []float64{800, 1200, 1300, 1100} { // h3 wins on one page of four
		page := fmt.Sprint("p", i)
		trials = append(trials, loads("a", page, "h2", 50, 1000, 3)...)
		trials = append(trials, loads("a", page, "h3", 50, h3, 3)...)
	}
	row := evaluateOne(t, Claim{Location: Mean, Stat: Stat{Kind: Share, Vary: h3VsH2}, Region: Below(0.5)}, trials)
	if row.Value != 0.25 {
		t.Errorf("share %v, want 0.25", row.Value)
	}
	// Clopper–Pearson for 1 of 4 at 95 %: [0.0063, 0.8059].
	if math.Abs(row.Lo-0.0063) > 0.001 || math.Abs(row.Hi-0.8059) > 0.001 {
		t.Errorf("interval [%.4f, %.4f], want Clopper–Pearson's [0.0063, 0.8059]", row.Lo, row.Hi)
	}
	if row.Verdict != Inconclusive {
		t.Errorf("verdict %s: 4 pages cannot show a share below half", row.Verdict)
	}
}

// TestAShareCountsARecurringPageAsOneCluster: 8 pages in 3 networks,
// h3 winning on a page in every network or in none, are 24 settings but 8
// cases (Clopper–Pearson for 2 of 8); pages whose networks split their
// outcomes count more than the pages.
func TestAShareCountsARecurringPageAsOneCluster(t *testing.T) {
	together := func(page, network int) bool { return page < 2 }
	row := evaluateOne(t, Claim{Location: Mean, Stat: Stat{Kind: Share, Vary: h3VsH2}, Region: Below(0.5)}, pagesInNetworks(8, 3, together))
	if row.Value != 0.25 || row.Settings != 24 || row.Pages != 8 || row.Cases != 8 {
		t.Fatalf("share %v of %d settings, %d pages, %.1f cases; want 0.25 of 24 in 8 pages counting 8", row.Value, row.Settings, row.Pages, row.Cases)
	}
	lo, hi := stats.ClopperPearson(2, 8, 0.95)
	if math.Abs(row.Lo-lo) > 1e-9 || math.Abs(row.Hi-hi) > 1e-9 {
		t.Errorf("interval [%.4f, %.4f], want Clopper–Pearson's for 2 of 8, [%.4f, %.4f]", row.Lo, row.Hi, lo, hi)
	}
	apart := func(page, network int) bool { return (page+network)%4 == 0 }
	split := evaluateOne(t, Claim{Location: Mean, Stat: Stat{Kind: Share, Vary: h3VsH2}, Region: Below(0.5)}, pagesInNetworks(8, 3, apart))
	if split.Cases <= 8 || split.Cases > 24 || split.Hi >= row.Hi {
		t.Errorf("outcomes split within pages: %.1f cases, interval up to %.3f; want more than 8 cases and a narrower interval than %.3f", split.Cases, split.Hi, row.Hi)
	}
}

// TestAShareInEachNetworkTellsTheHighest: 8 pages in 3 networks, h3
// winning on 1, 2 and 3 of them, read in each network: the highest share
// is 3 of 8, its interval Clopper–Pearson's at 95 % over the 3 networks
// at once (Bonferroni), and the upper bound the highest of the three.
func TestAShareInEachNetworkTellsTheHighest(t *testing.T) {
	wins := func(page, network int) bool { return page <= network }
	c := Claim{Location: Mean, Stat: Stat{Kind: Share, Vary: h3VsH2, InEachNetwork: true}, Region: Below(0.9)}
	row := evaluateOne(t, c, pagesInNetworks(8, 3, wins))
	if row.Value != 3.0/8 || row.Networks != 3 || row.Pages != 8 || row.Cases != 8 {
		t.Fatalf("share %v in %d networks of %d pages counting %.1f; want 0.375 in 3 of 8 counting 8", row.Value, row.Networks, row.Pages, row.Cases)
	}
	lo, hi := stats.ClopperPearson(3, 8, 1-0.05/3)
	if math.Abs(row.LevelHi-hi) > 1e-9 || math.Abs(row.LevelLo-lo) > 1e-9 {
		t.Errorf("interval [%.4f, %.4f], want the highest network's, adjusted over 3: [%.4f, %.4f]", row.LevelLo, row.LevelHi, lo, hi)
	}
	if got := row.Used(); !strings.Contains(got, "of 8 pages in 3 networks") {
		t.Errorf("used %q, want the pages and networks", got)
	}
	pooled := c
	pooled.Stat.InEachNetwork = false
	if all := evaluateOne(t, pooled, pagesInNetworks(8, 3, wins)); all.Value != 0.25 {
		t.Errorf("pooled share %v, want 6 of 24", all.Value)
	}
	lowest := func(page, network int) bool { return page == 0 } // every network's share 1 of 8
	if got := evaluateOne(t, Claim{Location: Mean, Stat: c.Stat, Region: Below(0.5)}, pagesInNetworks(40, 3, lowest)); got.Verdict != Agrees {
		t.Errorf("1 of 40 pages in every network under 50 %%: %s [%.3f, %.3f]", got.Verdict, got.LevelLo, got.LevelHi)
	}
	oneHigh := func(page, network int) bool { return network == 2 && page < 35 || page == 0 }
	if got := evaluateOne(t, Claim{Location: Mean, Stat: c.Stat, Region: Below(0.5)}, pagesInNetworks(40, 3, oneHigh)); got.Verdict != Disagrees {
		t.Errorf("35 of 40 pages in one network: %s [%.3f, %.3f], want disagrees", got.Verdict, got.LevelLo, got.LevelHi)
	}
}

// TestAWideningReadsTheLeadAtTwoMetrics: TCP+BBR 300 ms ahead of TCP+ at
// the first visual change and 1,200 ms at the page load time on one page,
// 100 and 400 on another: the leads widen by 900 and 300 ms, 600 ms on
// the mean; the row counts each load once.
func TestAWideningReadsTheLeadAtTwoMetrics(t *testing.T) {
	var trials []results.Trial
	for _, p := range []struct {
		page                     string
		fvc, fvcBBR, plt, pltBBR float64
	}{{"p1", 1000, 700, 5000, 3800}, {"p2", 500, 400, 2000, 1600}} {
		for i := range 3 {
			for _, stack := range []string{"tcp+", "tcp+bbr"} {
				fvc, plt := p.fvc, p.plt
				if stack == "tcp+bbr" {
					fvc, plt = p.fvcBBR, p.pltBBR
				}
				tr := load(fmt.Sprintf("%s-%s-%d", p.page, stack, i), "mss", p.page, "h2", 760, plt)
				tr.Stack, tr.FVC = factor.Stack(stack), results.F(fvc*(1+0.01*float64(i-1)))
				trials = append(trials, tr)
			}
		}
	}
	c := Claim{Metric: "fvc", Location: Mean, Region: Above(0), Stat: Stat{Kind: Widening, Vary: Contrast{Factor: factor.IDStack, From: "tcp+", To: "tcp+bbr"}, Then: "plt"}}
	row := evaluateOne(t, c, trials)
	if math.Abs(row.Value-600) > 1e-9 || row.Loads != 12 || row.Settings != 2 {
		t.Fatalf("widening %v over %d loads in %d settings; want 600 ms over 12 in 2", row.Value, row.Loads, row.Settings)
	}
	if row.Verdict != Agrees || row.LevelLo <= 0 || FormatValue(Widening, row.Value) != "600 ms" {
		t.Errorf("verdict %s, %s [%.0f, %.0f]: the lead widens by 600 ms", row.Verdict, FormatValue(Widening, row.Value), row.LevelLo, row.LevelHi)
	}
	if got := row.Statistic(); !strings.Contains(got, "tcp+bbr's lead over tcp+ in ms at PLT") {
		t.Errorf("statistic %q", got)
	}
}

// pagesInNetworks is 3 loads of h2 and h3 for pages × networks, h3 the
// faster where wins says so.
func pagesInNetworks(pages, networks int, wins func(page, network int) bool) []results.Trial {
	var trials []results.Trial
	for p := range pages {
		for n := range networks {
			h3 := 1100.0
			if wins(p, n) {
				h3 = 900
			}
			network, page := fmt.Sprint("n", n), fmt.Sprint("p", p)
			trials = append(trials, loads(network, page, "h2", 50, 1000, 3)...)
			trials = append(trials, loads(network, page, "h3", 50, h3, 3)...)
		}
	}
	return trials
}

func TestRTTsSavedDividesByTheNetworksRTT(t *testing.T) {
	var trials []results.Trial
	trials = append(trials, loads("far", "p", "h2", 200, 600, 5)...) // 3 RTT
	trials = append(trials, loads("far", "p", "h3", 200, 400, 5)...) // 2 RTT
	trials = append(trials, loads("near", "p", "h2", 20, 60, 5)...)
	trials = append(trials, loads("near", "p", "h3", 20, 40, 5)...)
	c := Claim{Metric: "ttfb", Location: Median, Stat: Stat{Kind: RTTsSaved, Vary: h3VsH2}, Region: Within(0.5, 1.5)}
	row := evaluateOne(t, c, trials)
	if math.Abs(row.Value-1) > 1e-9 || row.Verdict != Agrees {
		t.Errorf("saved %.3f RTT (%s), want 1 RTT, agrees", row.Value, row.Verdict)
	}
	if got := row.Levels[factor.IDNetwork]; len(got) != 2 {
		t.Errorf("networks covered %v, want far and near", got)
	}
}

func TestInteractionComparesTheEffectOfOneFactorAtTwoLevelsOfAnother(t *testing.T) {
	// Cook et al.'s reading: delay multiplies h2's PLT by 5 and h3's by 1.2.
	var trials []results.Trial
	trials = append(trials, loads("delay0", "p", "h2", 0, 800, 4)...)
	trials = append(trials, loads("delay200", "p", "h2", 200, 4000, 4)...)
	trials = append(trials, loads("delay0", "p", "h3", 0, 1900, 4)...)
	trials = append(trials, loads("delay200", "p", "h3", 200, 2280, 4)...)
	c := Claim{Location: Median, Region: Below(1), Stat: Stat{Kind: Interaction,
		Vary: Contrast{Factor: factor.IDNetwork, From: "delay0", To: "delay200"}, By: h3VsH2}}
	row := evaluateOne(t, c, trials)
	if math.Abs(row.Value-1.2/5) > 1e-9 || row.Verdict != Agrees {
		t.Errorf("interaction %.4f (%s), want 0.24, agrees", row.Value, row.Verdict)
	}
	if row.Settings != 1 || row.Loads != 16 {
		t.Errorf("used %d settings and %d loads, want 1 and 16", row.Settings, row.Loads)
	}
}

func TestLoadsOutsideTheCellsOrFailedAreLeftOut(t *testing.T) {
	var trials []results.Trial
	trials = append(trials, loads("a", "p", "h2", 50, 1000, 3)...)
	trials = append(trials, loads("a", "p", "h3", 50, 500, 3)...)
	trials = append(trials, loads("b", "p", "h2", 50, 1000, 3)...)
	trials = append(trials, loads("b", "p", "h3", 50, 2000, 3)...)
	failed := load("x", "a", "p", "h3", 50, 99999)
	failed.Status = results.StatusFailed
	trials = append(trials, failed)
	c := Claim{Location: Mean, Cells: Cells{factor.IDNetwork: {"a"}}, Stat: Stat{Kind: Ratio, Vary: h3VsH2}, Region: Below(1)}
	row := evaluateOne(t, c, trials)
	if math.Abs(row.Value-0.5) > 1e-9 || row.Loads != 6 {
		t.Errorf("ratio %.3f from %d loads, want 0.5 from network a's 6", row.Value, row.Loads)
	}
	c.Cells = Cells{factor.IDNetwork: {"c"}}
	if row := evaluateOne(t, c, trials); row.Verdict != NotMeasured || !math.IsNaN(row.Value) {
		t.Errorf("no loads in the cells: %s %v, want not measured, NaN", row.Verdict, row.Value)
	}
	one := append(loads("a", "p", "h2", 50, 1000, 3), load("solo", "a", "p", "h3", 50, 500))
	c.Cells = nil
	if row := evaluateOne(t, c, one); row.Verdict != NotMeasured {
		t.Errorf("one h3 load: %s, want not measured (a level needs %d loads)", row.Verdict, MinLoads)
	}
	if row := evaluateOne(t, Claim{NotReproduced: "gQUIC's FEC"}, trials); row.Verdict != NotReproduced {
		t.Errorf("a claim we cannot test: %s", row.Verdict)
	}
}

func TestRegionsReadInTheStatisticsUnits(t *testing.T) {
	for _, tc := range []struct {
		r    Region
		k    Kind
		want string
	}{
		{Below(1), Ratio, "< 1"},
		{Above(0.5), Share, "> 50 %"},
		{Above(0.55), Share, "> 55 %"},     // 100 × 0.55 is 55.00000000000001
		{Below(0.2415), Share, "< 24.2 %"}, // to a tenth
		{Within(0.54, 0.74), Ratio, "0.54–0.74"},
		{Within(1.5, 2.5), RTTsSaved, "1.5–2.5 RTT"},
	} {
		if got := tc.r.Text(tc.k); got != tc.want {
			t.Errorf("%+v %s: %q, want %q", tc.r, tc.k, got, tc.want)
		}
	}
}

func TestCellsTakeAKindOfLevel(t *testing.T) {
	var trials []results.Trial
	trials = append(trials, loads("a", "web2024:3", "h2", 50, 1000, 3)...)
	trials = append(trials, loads("a", "web2024:3", "h3", 50, 500, 3)...)
	trials = append(trials, loads("a", "synthetic:16x10KB", "h2", 50, 1000, 3)...)
	trials = append(trials, loads("a", "synthetic:16x10KB", "h3", 50, 2000, 3)...)
	c := Claim{Location: Mean, Cells: Cells{factor.IDPage: {"web2024:*"}}, Stat: Stat{Kind: Ratio, Vary: h3VsH2}, Region: Below(1)}
	if row := evaluateOne(t, c, trials); math.Abs(row.Value-0.5) > 1e-9 || row.Settings != 1 {
		t.Errorf("web2024:* took %d settings, ratio %.3f: want the generated page's alone, 0.5", row.Settings, row.Value)
	}
	c.Cells = Cells{factor.IDPage: {"web2024"}}
	if row := evaluateOne(t, c, trials); row.Verdict != NotMeasured {
		t.Errorf("a kind without :* named no page, yet gave %s", row.Verdict)
	}
}

// TestADecidedClaimKeepsTheVerdictOfItsRound: a claim decided on the
// reproduction's own loads keeps that verdict when a decide round adds
// loads to its cells for another claim (sequential stopping); a claim not
// yet decided reads the round's loads, and says so.
func TestADecidedClaimKeepsTheVerdictOfItsRound(t *testing.T) {
	own := append(loads("a", "p1", "h2", 50, 1000, 3), loads("a", "p1", "h3", 50, 600, 3)...)
	own = append(own, loads("a", "p2", "h2", 50, 1000, 3)...)
	own = append(own, load("x", "a", "p2", "h3", 50, 600))
	added := append(loads("a", "p1", "h3", 50, 1500, 6), loads("a", "p2", "h3", 50, 600, 3)...)
	for i := range added {
		added[i].ID += "-decide"
	}
	p := Paper{ID: "test", Claims: []Claim{
		{ID: "C1", Metric: "plt", Location: Mean, Stat: Stat{Kind: Ratio, Vary: h3VsH2}, Region: Below(1), Cells: Cells{factor.IDPage: {"p1"}}},
		{ID: "C2", Metric: "plt", Location: Mean, Stat: Stat{Kind: Ratio, Vary: h3VsH2}, Region: Below(1), Cells: Cells{factor.IDPage: {"p2"}}},
	}}
	o := Options{Reps: 500, Seed: 1}
	pooled := Evaluate(p, []Source{{Run: "r", Trials: own}, {Run: "r-decide-1", Trials: added}}, o)
	if pooled[0].Verdict == Agrees {
		t.Fatalf("C1 on every load at once: %s %.2f; the test needs the added loads to move it", pooled[0].Verdict, pooled[0].Value)
	}
	rows := Evaluate(p, []Source{{Run: "r", Trials: own}, {Run: "r-decide-1", Trials: added, Round: 1}}, o)
	if c1 := rows[0]; c1.Verdict != Agrees || c1.Loads != 6 || c1.Round != 0 || c1.Used() != "6 loads in 1 setting" {
		t.Errorf("C1, decided before the round: %s on %q (round %d); want agrees on its own 6 loads", c1.Verdict, c1.Used(), c1.Round)
	}
	if c2 := rows[1]; c2.Verdict != Agrees || c2.Loads != 7 || c2.Round != 1 || c2.Used() != "7 loads in 1 setting through decide round 1" {
		t.Errorf("C2, not measured before the round: %s on %q (round %d); want agrees on 7 loads through round 1", c2.Verdict, c2.Used(), c2.Round)
	}
}

// TestEveryClaimNamesBothSidesCongestionControl: in four papers h3 ran
// quic-go's NewReno against the kernel's CUBIC where the papers' QUIC ran
// CUBIC, and no claim said so; every claim's differs now names both
// sides' congestion control and pacing, as measured on the wire.
func TestEveryClaimNamesBothSidesCongestionControl(t *testing.T) {
	for _, p := range All() {
		for _, c := range p.Claims {
			if !strings.Contains(c.Differs, "congestion control: QUIC here ") || !strings.Contains(c.Differs, "TCP here ") || !strings.Contains(c.Differs, "paced") {
				t.Errorf("%s %s: differs %q names no congestion control and pacing of both sides", p.ID, c.ID, c.Differs)
			}
		}
	}
}

// TestEveryCookClaimOnItsLossyNetworkSaysTheLossGoesBothWays: the 20 %
// of Cook et al.'s lossy network is applied in each direction, which
// every claim that reads it discloses.
func TestEveryCookClaimOnItsLossyNetworkSaysTheLossGoesBothWays(t *testing.T) {
	reads := func(c Claim) bool {
		return slices.Contains(c.Cells[factor.IDNetwork], "delay0-loss20") ||
			c.Stat.Vary.To == "delay0-loss20" || c.Stat.By.To == "delay0-loss20"
	}
	n := 0
	for _, c := range cook2017().Claims {
		if reads(c) {
			n++
			if !strings.Contains(c.Differs, "loss applies in each direction") {
				t.Errorf("Cook %s reads the lossy network without saying the loss goes both ways: %q", c.ID, c.Differs)
			}
		}
	}
	if n < 3 {
		t.Errorf("%d of Cook's claims read its lossy network, want C2, C3 and C4 at least", n)
	}
}
