package plan

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/netconf"
	"github.com/quicbench/quicbench/internal/site/gen"
	"github.com/quicbench/quicbench/internal/spec"
)

const twoNetworks = `repetitions: 4
seed: 3
factors:
  networks: [{rtt: 10ms}, {rtt: 100ms, down: 10mbit}]
  pages: [synthetic:2x1KB, synthetic:8x10KB]
  protocols: [h1, h2, h3]
  visits: [first, repeat]
`

func mustSpec(t *testing.T, text string) *spec.Spec {
	t.Helper()
	s, err := spec.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestGridBlocksAndIDs(t *testing.T) {
	s := mustSpec(t, twoNetworks)
	p := Build(s)
	// 2 networks × 2 pages = 4 setups; × 3 protocols × 2 visits = 24 cells; × 4 reps.
	if p.Setups != 4 || p.Cells != 24 || len(p.Trials) != 96 {
		t.Fatalf("setups %d, cells %d, trials %d; want 4, 24, 96", p.Setups, p.Cells, len(p.Trials))
	}
	ids := map[string]bool{}
	for i, tr := range p.Trials {
		if tr.Seq != i+1 || ids[tr.ID] {
			t.Fatalf("trial %d: seq %d, id %s (duplicate %v)", i, tr.Seq, tr.ID, ids[tr.ID])
		}
		ids[tr.ID] = true
	}
	// Each setup's trials are contiguous, in blocks of 6 that hold each
	// of its cells once, repetition by repetition.
	for start := 0; start < len(p.Trials); start += 24 {
		setup := p.Trials[start].Cell.Setup.Key()
		for b := 0; b < 4; b++ {
			block := p.Trials[start+6*b : start+6*(b+1)]
			cells := map[string]bool{}
			for _, tr := range block {
				if tr.Cell.Setup.Key() != setup || tr.Rep != b+1 || cells[tr.Cell.Key()] {
					t.Fatalf("block %d of setup %s: %+v", b, setup, tr)
				}
				cells[tr.Cell.Key()] = true
			}
		}
	}
	// Not in grid order everywhere: the shuffle moved something.
	moved := false
	for i := 1; i < 6; i++ {
		if p.Trials[i].Cell.Levels.Protocol() != p.Trials[0].Cell.Levels.Protocol() {
			moved = true
		}
	}
	if !moved {
		t.Log("the first block happens to keep one protocol first") // legal, just unlikely
	}
}

func TestIDsAreStable(t *testing.T) {
	a := Build(mustSpec(t, twoNetworks))
	b := Build(mustSpec(t, twoNetworks+"\n# a comment changes nothing\n"))
	other := Build(mustSpec(t, "seed: 99\n"+twoNetworks[len("repetitions: 4\nseed: 3\n"):]+"repetitions: 4\n"))
	order := func(p Plan) []string {
		var ids []string
		for _, t := range p.Trials {
			ids = append(ids, t.ID)
		}
		return ids
	}
	ia, ib, io := order(a), order(b), order(other)
	same := true
	for i := range ia {
		if ia[i] != ib[i] {
			same = false
		}
	}
	if !same {
		t.Error("the same spec gave another order")
	}
	set := map[string]bool{}
	for _, id := range ia {
		set[id] = true
	}
	differs := false
	for i, id := range io {
		if !set[id] {
			t.Fatalf("seed 99 made trial ID %s, not in seed 3's plan", id)
		}
		if id != ia[i] {
			differs = true
		}
	}
	if !differs {
		t.Error("another seed gave the same order")
	}
	// The ID is the cell's: h3 first visit on the 10 ms network, page 1,
	// repetition 2.
	page, _ := factor.ParsePage("synthetic:2x1KB")
	c := Cell{Setup: &Setup{Network: &netconf.Network{Name: "rtt10ms"}, Page: page}}
	for id, level := range map[factor.ID]string{factor.IDNetwork: "rtt10ms", factor.IDPage: page.String(), factor.IDOrigins: "1",
		factor.IDStack: "tcp", factor.IDServer: "go", factor.IDProtocol: "h3", factor.IDVisit: "first", factor.IDCache: "off"} {
		c.Levels.Set(id, level)
	}
	if !set[c.ID()+"-r2"] {
		t.Errorf("no trial %s-r2 for %s", c.ID(), c.Key())
	}
	// Trials without frames keep the IDs they had before the visual
	// factor; visual trials are other cells.
	c.Levels.Set(factor.IDVisual, string(factor.VisualOff))
	if !set[c.ID()+"-r2"] {
		t.Errorf("visual off changed the ID of %s", c.Key())
	}
	c.Levels.Set(factor.IDVisual, string(factor.VisualOn))
	if set[c.ID()+"-r2"] || !strings.HasSuffix(c.Key(), ";visual=on") {
		t.Errorf("a visual cell has key %s, ID %s", c.Key(), c.ID())
	}
	// So do cells whose h3 is quic-go's; another QUIC stack is another setup.
	c.Levels.Set(factor.IDVisual, string(factor.VisualOff))
	c.Levels.Set(factor.IDQUIC, string(factor.QUICGoNewReno))
	if !set[c.ID()+"-r2"] {
		t.Errorf("quic-go changed the ID of %s", c.Key())
	}
	c.Levels.Set(factor.IDQUIC, string(factor.QUICQuinnBBR))
	if set[c.ID()+"-r2"] || !strings.HasSuffix(c.Key(), "server=go;quic=quinn+bbr;protocol=h3;visit=first;cache=false") {
		t.Errorf("a quinn cell has key %s, ID %s", c.Key(), c.ID())
	}
}

// TestSeedsAreDerivedOnce: seeds depend on the run seed and on what they
// randomize, never on a level's position or name.
func TestSeedsAreDerivedOnce(t *testing.T) {
	a := mustSpec(t, "seed: 5\nrepetitions: 1\nfactors:\n  networks: [{name: x, rtt: 10ms, loss: 1}, {rtt: 20ms}]\n  pages: [synthetic:2x1KB, synthetic:1x1KB]\n")
	b := mustSpec(t, "seed: 5\nrepetitions: 1\nfactors:\n  networks: [{rtt: 20ms}, {name: y, rtt: 10ms, loss: 1}]\n  pages: [synthetic:1x1KB, synthetic:2x1KB]\n")
	upA, downA := LinkSeeds(a.Seed, a.Networks[0])
	upB, downB := LinkSeeds(b.Seed, b.Networks[1])
	if upA != upB || downA != downB || upA == downA {
		t.Errorf("the same network values gave seeds %d/%d and %d/%d", upA, downA, upB, downB)
	}
	if up, _ := LinkSeeds(a.Seed, a.Networks[1]); up == upA {
		t.Error("two networks share a seed")
	}
	if up, _ := LinkSeeds(6, a.Networks[0]); up == upA {
		t.Error("another run seed gave the same link seed")
	}
	if PageSeed(5, a.Pages[0]) != PageSeed(5, b.Pages[1]) || PageSeed(5, a.Pages[0]) == PageSeed(5, a.Pages[1]) {
		t.Error("page seeds depend on the page's position")
	}
	for _, tr := range Build(a).Trials {
		up, down := LinkSeeds(5, tr.Cell.Network)
		if tr.Cell.UpSeed != up || tr.Cell.DownSeed != down || tr.Cell.PageSeed != PageSeed(5, tr.Cell.Page) || up>>63 != 0 {
			t.Errorf("trial %s carries seeds %d %d %d", tr.ID, tr.Cell.UpSeed, tr.Cell.DownSeed, tr.Cell.PageSeed)
		}
	}
}

func TestLoadTimeModel(t *testing.T) {
	// 8 × 10 KB = 80 KB: 1 + ceil(log2(1 + 80000/14480)) = 4 rounds + 3 = 7 RTT.
	if got := LoadTime(factor.Page{Kind: factor.PageSynthetic, Objects: 8, ObjectBytes: 10_000}, ModelLink{RTT: 100 * time.Millisecond}); got != 700*time.Millisecond {
		t.Errorf("unlimited: %v, want 700ms", got)
	}
	// 1 MB at 1 Mbit/s: 8 s of bytes + 3 RTT dominate the round trips.
	if got := LoadTime(factor.Page{Kind: factor.PageSynthetic, Objects: 1, ObjectBytes: 1_000_000}, ModelLink{RTT: 10 * time.Millisecond, Rate: 1e6}); got != 8030*time.Millisecond {
		t.Errorf("rate-bound: %v, want 8.03s", got)
	}
	// Masri et al.'s 128 × 300 KB at 5 ms and 1 % loss: one flow keeps
	// 1,448 B × 8 / 5 ms × 1.22 / 0.1 = 28.4 Mbit/s, 10.8 s for 38.4 MB
	// (measured here over h3: 10.5 s), TCP a little less for its timeouts
	// (13.5 s over h2), BENCHMARKS.md.
	heavy := factor.Page{Kind: factor.PageSynthetic, Objects: 128, ObjectBytes: 300_000}
	lossy := ModelLink{RTT: 5 * time.Millisecond, Loss: 0.01, Flows: 1}
	if got := LoadTime(heavy, lossy); got < 10*time.Second || got > 11500*time.Millisecond {
		t.Errorf("QUIC, loss-bound: %v, want about the 10.5 s measured", got)
	}
	lossy.TCP = true
	if got := LoadTime(heavy, lossy); got < 12*time.Second || got > 15*time.Second {
		t.Errorf("TCP, loss-bound: %v, want about the 13.5 s measured", got)
	}
	lossy.Flows = 4
	if four := LoadTime(heavy, lossy); four > 4*time.Second {
		t.Errorf("four flows: %v; want the bytes shared", four)
	}
	// Cook et al.'s 40 × 20 KB without delay at 20 % loss: TCP's
	// timeouts set the pace (a window of 2.7 segments; 46 s measured),
	// QUIC's loss detection waits on none (1.0 s).
	cook := factor.Page{Kind: factor.PageSynthetic, Objects: 40, ObjectBytes: 20_000}
	if got := LoadTime(cook, ModelLink{Loss: 0.2, Flows: 1, TCP: true}); got < 30*time.Second || got > 60*time.Second {
		t.Errorf("TCP, timeout-bound: %v, want about the 46 s measured", got)
	}
	if got := LoadTime(cook, ModelLink{Loss: 0.2, Flows: 1}); got > 2*time.Second {
		t.Errorf("QUIC at 20 %% loss without delay: %v, want about the 1 s measured", got)
	}
	s := mustSpec(t, twoNetworks)
	if est := Build(s).Estimate(s); est < 96*chromiumOverhead || est > 5*time.Minute {
		t.Errorf("estimate %v for 96 small Chromium trials", est)
	}
}

// TestALoadOutlastingTheTimeoutCostsEveryAttempt: Masri et al.'s 64 ×
// 300 KB at 200 ms and 1 % loss takes minutes (the model: 19.2 MB at the
// 0.71 Mbit/s one flow keeps, about 220 s), past the default 60 s: the
// plan says so, and its estimate charges each such trial its three
// attempts' timeouts; with a longer timeout the load's own time.
func TestALoadOutlastingTheTimeoutCostsEveryAttempt(t *testing.T) {
	const lossy = "repetitions: 2\nfactors:\n  networks: [{rtt: 200ms, loss: 1}]\n  pages: [synthetic:64x300KB, synthetic:2x1KB]\n  protocols: [h2]\n"
	s := mustSpec(t, lossy)
	p := Build(s)
	over, longest := p.OverTimeout(s)
	if over != 2 || longest < 200*time.Second || longest > 240*time.Second {
		t.Fatalf("%d trials over the timeout, the longest load %v; want 2, about 220 s", over, longest)
	}
	if est := p.Estimate(s); est < 6*time.Minute || est > 7*time.Minute {
		t.Errorf("estimate %v, want about two trials of three 60 s attempts", est)
	}
	long := mustSpec(t, "timeout: 10m\n"+lossy)
	if over, _ := Build(long).OverTimeout(long); over != 0 {
		t.Errorf("%d trials over a 10 min timeout", over)
	}
	if est := Build(long).Estimate(long); est < 7*time.Minute || est > 8*time.Minute {
		t.Errorf("estimate %v with a 10 min timeout, want two loads of about 220 s", est)
	}
}

// TestTrialEstimatesAreTheEstimatesParts: the trials' estimates add up to
// the plan's estimate less its testbeds' setups and netchecks, and a
// heavy page's trial is estimated heavier than a light one's.
func TestTrialEstimatesAreTheEstimatesParts(t *testing.T) {
	s := mustSpec(t, "repetitions: 2\nfactors:\n  networks: [{rtt: 100ms, loss: 1}, {rtt: 20ms}]\n  pages: [synthetic:64x300KB, synthetic:2x1KB]\n  protocols: [h2, h3]\n")
	p := Build(s)
	parts := TrialEstimates(s, p.Trials, Overheads{})
	sum, heavy, light := time.Duration(0), time.Duration(0), time.Duration(0)
	for i, tr := range p.Trials {
		sum += parts[i]
		if tr.Cell.Levels.Page() == "synthetic:64x300KB" {
			heavy = max(heavy, parts[i])
		} else {
			light = max(light, parts[i])
		}
	}
	if want := p.Estimate(s) - time.Duration(p.Setups)*setupCost - time.Duration(len(s.Networks))*netcheckCost; sum != want {
		t.Errorf("the trials' estimates add up to %v, want the plan's less setups and netchecks, %v", sum, want)
	}
	if heavy < 10*light {
		t.Errorf("the 19 MB page's trial is estimated at %v, the 2 KB page's at %v: want ten times or more", heavy, light)
	}
}

// TestPairSeeds: the loads of one repetition share their link seeds across
// protocols, stacks and servers, and not across repetitions or pages.
func TestPairSeeds(t *testing.T) {
	s, err := spec.Parse([]byte("repetitions: 2\nfactors:\n  networks: [{rtt: 20ms, loss: 1}]\n  pages: [synthetic:1x1KB, synthetic:2x1KB]\n  stacks: [tcp, tcp+]\n  protocols: [h2, h3]\n"))
	if err != nil {
		t.Fatal(err)
	}
	seeds := map[string]map[[2]uint64]bool{} // page;rep → seeds seen
	for _, tr := range Build(s).Trials {
		up, down := PairSeeds(tr.Cell.Setup, tr.Rep)
		key := fmt.Sprintf("%s;%d", tr.Cell.Page, tr.Rep)
		if seeds[key] == nil {
			seeds[key] = map[[2]uint64]bool{}
		}
		seeds[key][[2]uint64{up, down}] = true
	}
	all := map[[2]uint64]bool{}
	for key, set := range seeds {
		if len(set) != 1 {
			t.Errorf("%s: %d different seeds across protocols and stacks, want 1", key, len(set))
		}
		for s := range set {
			all[s] = true
		}
	}
	if len(all) != 4 {
		t.Errorf("%d distinct seeds over 2 pages × 2 repetitions, want 4", len(all))
	}
}

// TestClientsAreCells: clients are a cell factor: one testbed serves both
// browsers, each cell keyed by its client (Chromium, the default, left
// out); a run of one client keeps the keys it had when the client was one
// level per run.
func TestClientsAreCells(t *testing.T) {
	const base = "repetitions: 2\nfactors:\n  networks: [{rtt: 20ms}]\n  pages: [synthetic:1x1KB]\n  protocols: [h2, h3]\n"
	p := Build(mustSpec(t, base+"  clients: [chromium, firefox]\n"))
	if p.Setups != 1 || p.Cells != 4 || len(p.Trials) != 8 {
		t.Fatalf("%d setups, %d cells, %d trials; want 1, 4, 8", p.Setups, p.Cells, len(p.Trials))
	}
	keys := map[string]factor.Client{}
	for _, tr := range p.Trials {
		keys[tr.Cell.Key()] = tr.Cell.Levels.Client()
	}
	if len(keys) != 4 {
		t.Errorf("cell keys %v: want 4 distinct", keys)
	}
	for k, c := range keys {
		if strings.Contains(k, "client=firefox") != (c == factor.ClientFirefox) || strings.Contains(k, "client=chromium") {
			t.Errorf("key %s of client %s", k, c)
		}
	}
	one := Build(mustSpec(t, base+"  clients: [firefox]\n"))
	old := Build(mustSpec(t, base+"client: firefox\n"))
	for i, tr := range one.Trials {
		if strings.Contains(tr.Cell.Key(), "client") || tr.ID != old.Trials[i].ID {
			t.Errorf("one client: trial %s (key %s), before clients were a factor %s", tr.ID, tr.Cell.Key(), old.Trials[i].ID)
		}
	}
}

// TestAClientCPUCapChangesOnlyItsCellsIDs: client_cpu levels are cells;
// the unlimited ones keep the IDs of a spec without the factor, a capped
// one's key names its cores.
func TestAClientCPUCapChangesOnlyItsCellsIDs(t *testing.T) {
	const base = "repetitions: 2\nfactors:\n  networks: [{rtt: 20ms}]\n  pages: [synthetic:1x1KB]\n  protocols: [h2, h3]\n"
	before := map[string]bool{}
	for _, tr := range Build(mustSpec(t, base)).Trials {
		before[tr.ID] = true
	}
	p := Build(mustSpec(t, base+"  client_cpu: [unlimited, 0.5]\n"))
	if p.Cells != 4 || len(p.Trials) != 8 {
		t.Fatalf("%d cells, %d trials; want 4, 8", p.Cells, len(p.Trials))
	}
	for _, tr := range p.Trials {
		capped := tr.Cell.Levels.ClientCPU() == "0.5"
		if capped == before[tr.ID] || capped != strings.Contains(tr.Cell.Key(), "client_cpu=0.5") {
			t.Errorf("trial %s (key %s, client CPU %s): in the spec without client_cpu %v", tr.ID, tr.Cell.Key(), tr.Cell.Levels.ClientCPU(), before[tr.ID])
		}
	}
}

func TestOnlyKeepsTheChosenLoadsOfTheChosenCellsInPlanOrder(t *testing.T) {
	s := mustSpec(t, `
name: only
repetitions: 3
factors:
  networks: [{name: a, rtt: 10ms}, {name: b, rtt: 20ms}]
  pages: [synthetic:2x1KB]
  protocols: [h2, h3]
`)
	p := Build(s)
	chosen := map[string]int{}
	for _, tr := range p.Trials {
		if tr.Cell.Levels.Network() == "b" {
			chosen[tr.Cell.ID()] = 3
		}
		if tr.Cell.Levels.Network() == "a" && tr.Cell.Levels.Protocol() == "h3" {
			chosen[tr.Cell.ID()] = 1
		}
	}
	only := p.Only(chosen)
	if len(only.Trials) != 7 || only.Cells != 3 || only.Setups != 2 {
		t.Fatalf("network b thrice and a's h3 once: %d trials in %d cells, %d setups; want 7, 3, 2", len(only.Trials), only.Cells, only.Setups)
	}
	for i, tr := range only.Trials {
		if tr.Rep > chosen[tr.Cell.ID()] || (i > 0 && tr.Seq <= only.Trials[i-1].Seq) {
			t.Errorf("trial %s (repetition %d of a cell chosen %d times) at %d: want the chosen loads in plan order", tr.ID, tr.Rep, chosen[tr.Cell.ID()], tr.Seq)
		}
	}
	if whole := p.Only(nil); len(whole.Trials) != len(p.Trials) {
		t.Errorf("no choice kept %d of %d trials", len(whole.Trials), len(p.Trials))
	}
}

// TestGeneratedPagesModelTheirShape: a generated page's load is modelled
// from its own bytes and requests (gen.Web2024Shape): a rendering client
// pays perRequestWork for each request, the built-in loader does not; a
// larger page takes longer; at 1 % loss its bytes share
// generatedLossFlows connections, at 6 % generatedFlows.
func TestGeneratedPagesModelTheirShape(t *testing.T) {
	load := func(page, net, client string) time.Duration {
		p := Build(mustSpec(t, "repetitions: 1\nfactors:\n  networks: ["+net+"]\n  pages: ["+page+"]\n  protocols: [h2]\n  clients: ["+client+"]\n"))
		return newLoadModel().load(p.Trials[0].Cell)
	}
	shape := func(page string) gen.Shape {
		p, err := factor.ParsePage(page)
		if err != nil {
			t.Fatal(err)
		}
		s, err := gen.Web2024Shape(p)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	dsl := "{rtt: 40ms, down: 20mbit}"
	if d := load("web2024:2", dsl, "chromium") - load("web2024:2", dsl, "loader"); d != time.Duration(shape("web2024:2").Requests)*perRequestWork {
		t.Errorf("Chromium's load of web2024:2 exceeds the loader's by %v, want its %d requests' work", d, shape("web2024:2").Requests)
	}
	small, large := "web2024:9", "web2024:1" // 1.8 MB and 5.5 MB
	if shape(small).Bytes >= shape(large).Bytes || load(small, dsl, "loader") >= load(large, dsl, "loader") {
		t.Errorf("%s (%d B) loads in %v, %s (%d B) in %v", small, shape(small).Bytes, load(small, dsl, "loader"), large, shape(large).Bytes, load(large, dsl, "loader"))
	}
	bytes := float64(shape(small).Bytes)
	lossy := ModelLink{RTT: 80 * time.Millisecond, Rate: 10e6, Loss: 0.01, Flows: generatedLossFlows, TCP: true}
	if got, want := load(small, "{rtt: 80ms, down: 10mbit, loss: 1}", "loader"), loadTimeOf(bytes, lossy)+generatedChainRTTs*lossy.RTT; got != want {
		t.Errorf("at 1 %% loss: %v, want %v (%d connections)", got, want, generatedLossFlows)
	}
	mss := ModelLink{RTT: 760 * time.Millisecond, Rate: 1.89e6, Loss: 0.06, Flows: generatedFlows, TCP: true}
	if got, want := load(small, "{rtt: 760ms, down: 1.89mbit, loss: 6}", "loader"), loadTimeOf(bytes, mss)+generatedChainRTTs*mss.RTT; got != want {
		t.Errorf("at 6 %% loss: %v, want %v (%d connections)", got, want, generatedFlows)
	}
}

// TestOnlyForcedH3OverBlockedUDPOnlyFails: of h1, h2 and h3, forced and
// discovered through Alt-Svc, over networks that pass UDP, block it, block
// it after 20 packets and police it, only forced h3 over the blocked one
// can only fail.
func TestOnlyForcedH3OverBlockedUDPOnlyFails(t *testing.T) {
	p := Build(mustSpec(t, `repetitions: 1
factors:
  networks: [{name: open, rtt: 20ms}, {name: noudp, rtt: 20ms, udp: block}, {name: late, rtt: 20ms, udp: block-after-20}, {name: policed, rtt: 20ms, udp: 1mbit}]
  pages: [synthetic:1x1KB]
  protocols: [h1, h2, h3]
  discovery: [forced, alt-svc]
`))
	if len(p.Trials) != 24 {
		t.Fatalf("%d trials, want 4 networks × 3 protocols × 2 discovery rules", len(p.Trials))
	}
	for _, tr := range p.Trials {
		l := tr.Cell.Levels
		want := l.Network() == "noudp" && l.Protocol() == factor.H3 && l.Discovery() == factor.DiscoveryForced
		if why := tr.Cell.OnlyFails(); (why != "") != want {
			t.Errorf("%s %s %s: only fails %q, want %v", l.Network(), l.Protocol(), l.Discovery(), why, want)
		}
	}
}

// TestATrialThatCanOnlyFailIsEstimatedAsOneAttempt: forced h3 over blocked
// UDP costs Firefox one load timeout (it waits it out) and Chromium a few
// seconds (it gives up), whatever the retries.
func TestATrialThatCanOnlyFailIsEstimatedAsOneAttempt(t *testing.T) {
	s := mustSpec(t, `repetitions: 1
retries: 2
timeout: 20s
factors:
  networks: [{name: noudp, rtt: 20ms, udp: block}]
  pages: [synthetic:1x1KB]
  protocols: [h3]
  clients: [chromium, firefox]
`)
	p := Build(s)
	for i, est := range TrialEstimates(s, p.Trials, Overheads{}) {
		client := p.Trials[i].Cell.Levels.Client()
		low, high := 20*time.Second, 25*time.Second
		if client == factor.ClientChromium {
			low, high = 3*time.Second, 6*time.Second
		}
		if est < low || est > high {
			t.Errorf("%s: estimate %v, want %v to %v", client, est, low, high)
		}
	}
}
