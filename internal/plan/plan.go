// Package plan expands a spec into its trials: the full factorial grid of
// the factors' levels × the repetitions, each trial with an ID that depends
// only on its factor levels and repetition (so it is stable across runs and
// plan orders), in a randomized, interleaved order. It also derives every
// random stream of a run from the spec's seed (seeds.go), so that a spec
// run by `quicbench run` and the same cell run by `quicbench compare` make
// the same loss decisions, page bytes and order.
//
// Order: the cells that share a testbed (equal levels of the setup factors
// of factor.Table: network, page, origins, TCP stack, server stack, QUIC
// stack) form a setup; the setups run in an order shuffled from the seed;
// within a setup, each repetition block runs every cell of the setup once
// (every level of the cell factors: protocol, visit, cache, visual) in an
// order shuffled from the seed. Drift in the machine thus hits the protocols of a
// comparison alike, and each testbed is built once.
package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/netconf"
	"github.com/quicbench/quicbench/internal/site/gen"
	"github.com/quicbench/quicbench/internal/spec"
)

// Setup is what a testbed is built from: the levels of the factors that
// need their own namespaces, emulator and servers (factor.ScopeSetup), the
// run's levels (factor.ScopeRun), and the seeds of its random streams.
type Setup struct {
	// Network and Page are the typed levels of those two factors.
	Network *netconf.Network
	Page    factor.Page
	// Levels hold the setup's and the run's levels; the cell factors'
	// are empty.
	Levels factor.Levels
	// UpSeed and DownSeed seed the link directions' loss and jitter;
	// PageSeed the page's bytes (LinkSeeds, PageSeed).
	UpSeed, DownSeed, PageSeed uint64
}

// Key identifies the setup: cells with equal keys share a testbed (see
// factor.Levels.Key).
func (s *Setup) Key() string { return s.Levels.Key(factor.ScopeSetup) }

// Cell is one combination of factor levels.
type Cell struct {
	*Setup
	// Levels hold every factor's level in the cell: its setup's, the
	// run's and its own.
	Levels factor.Levels
	// SoleClient says the run has one client: Key leaves it out, as when
	// the client was one level per run, so that the trial IDs of a run
	// with one client stay those it had then (and such runs resume).
	SoleClient bool
}

// Key is the cell's canonical text, from which its ID is made.
func (c Cell) Key() string {
	l := c.Levels
	if c.SoleClient {
		l.Set(factor.IDClient, "")
	}
	return l.Key(factor.ScopeCell)
}

// ID is the cell's stable identifier: "c" and 12 hex digits of the key's
// SHA-256.
func (c Cell) ID() string {
	sum := sha256.Sum256([]byte(c.Key()))
	return "c" + hex.EncodeToString(sum[:6])
}

// OnlyFails says why every load of the cell fails, or "": h3 forced from
// the first packet (no TCP to fall back to) over a network that drops
// every UDP packet. A retry of such a load cannot succeed.
func (c Cell) OnlyFails() string {
	if c.Levels.Protocol() != factor.H3 || c.Levels.Discovery().Discovers() || c.Setup == nil || c.Network == nil {
		return ""
	}
	if udp := c.Network.UDP; udp.Block && udp.After == 0 {
		return "h3 is forced over a network that blocks UDP"
	}
	return ""
}

// Trial is one page load of the plan (retries of a failed load are
// attempts of the same trial).
type Trial struct {
	// ID is "<cell ID>-r<repetition>", stable across runs.
	ID   string
	Cell Cell
	// Rep is the repetition, from 1.
	Rep int
	// Seq is the trial's position in the plan's order, from 1.
	Seq int
}

// Plan is every trial of a spec, in run order.
type Plan struct {
	Trials []Trial
	// Cells is the number of cells; Setups the number of testbeds.
	Cells, Setups int
}

// Build expands s into its plan.
func Build(s *spec.Spec) Plan {
	var setups [][]Cell
	cellFactors := factorsOf(factor.ScopeCell)
	for _, setup := range setupsOf(s) {
		var cells []Cell
		combinations(s, factor.ScopeCell, func(pick []int) {
			c := Cell{Setup: setup, Levels: setup.Levels, SoleClient: len(s.Clients()) == 1}
			for i, f := range cellFactors {
				c.Levels.Set(f.ID, s.LevelsOf(f.ID)[pick[i]])
			}
			cells = append(cells, c)
		})
		setups = append(setups, cells)
	}
	rng := orderRand(s.Seed)
	rng.Shuffle(len(setups), func(i, j int) { setups[i], setups[j] = setups[j], setups[i] })
	p := Plan{Setups: len(setups)}
	for _, cells := range setups {
		p.Cells += len(cells)
	}
	p.Trials = make([]Trial, 0, p.Cells*max(s.Repetitions, 0))
	for _, cells := range setups {
		ids := make([]string, len(cells)) // a cell's ID hashes its levels: once, not once a repetition
		for i := range cells {
			ids[i] = cells[i].ID()
		}
		for rep := 1; rep <= s.Repetitions; rep++ {
			for _, i := range rng.Perm(len(cells)) {
				p.Trials = append(p.Trials, Trial{ID: ids[i] + "-r" + strconv.Itoa(rep), Cell: cells[i], Rep: rep, Seq: len(p.Trials) + 1})
			}
		}
	}
	return p
}

// setupsOf lists the setups of s in grid order, with their seeds.
func setupsOf(s *spec.Spec) []*Setup {
	var run factor.Levels
	for _, f := range factorsOf(factor.ScopeRun) {
		run.Set(f.ID, s.LevelsOf(f.ID)[0])
	}
	var out []*Setup
	setupFactors := factorsOf(factor.ScopeSetup)
	combinations(s, factor.ScopeSetup, func(pick []int) {
		setup := &Setup{Levels: run}
		for i, f := range setupFactors {
			setup.Levels.Set(f.ID, s.LevelsOf(f.ID)[pick[i]])
			switch f.ID {
			case factor.IDNetwork:
				setup.Network = s.Networks[pick[i]]
			case factor.IDPage:
				setup.Page = s.Pages[pick[i]]
			}
		}
		setup.UpSeed, setup.DownSeed = LinkSeeds(s.Seed, setup.Network)
		setup.PageSeed = PageSeed(s.Seed, setup.Page)
		out = append(out, setup)
	})
	return out
}

// factorsOf lists the factors of scope, in table order.
func factorsOf(scope factor.Scope) []factor.Factor {
	var out []factor.Factor
	for _, f := range factor.Table() {
		if f.Scope == scope {
			out = append(out, f)
		}
	}
	return out
}

// combinations calls emit with every combination of the levels of the
// factors of scope (factorsOf), as the index of each factor's level in
// table order, the last factor's varying fastest: the grid order.
func combinations(s *spec.Spec, scope factor.Scope, emit func(pick []int)) {
	fs := factorsOf(scope)
	sizes := make([]int, len(fs))
	for i, f := range fs {
		if sizes[i] = len(s.LevelsOf(f.ID)); sizes[i] == 0 {
			return
		}
	}
	pick := make([]int, len(fs))
	for {
		emit(pick)
		i := len(pick) - 1
		for ; i >= 0; i-- {
			if pick[i]++; pick[i] < sizes[i] {
				break
			}
			pick[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

// Per-trial costs of the estimate, measured on the 2-core machine of
// BENCHMARKS.md.
const (
	chromiumOverhead = 550 * time.Millisecond // a browser's start and stop, read-out
	// firefoxOverhead is Firefox's: its fresh browser's start and stop
	// over WebDriver BiDi took 1.08–1.36 s a load (2026-11-24/25), 1.5–1.9
	// s in scripts/bench-estimate.sh's runs (2026-11-29).
	firefoxOverhead = 1300 * time.Millisecond
	loaderOverhead  = 50 * time.Millisecond  // a client that renders nothing
	setupCost       = 500 * time.Millisecond // namespaces, emulator, servers
	netcheckCost    = 12 * time.Second
	// repeatPause is the time between a repeat visit's loads: the
	// browser settling after about:blank (about 0.35 s here, 2026-12-01)
	// and the servers' closes (the browser's QUIC sockets closed, then two
	// round trips, at least 0.1 s). Firefox's h3 sockets close 6 to 8
	// round trips after; its loads are as much shorter (BENCHMARKS.md).
	repeatPause = 450 * time.Millisecond
	// visualCost is a visual trial's extra: client.SettleAfterLoad (2 s)
	// plus ending the trace and computing the metrics.
	visualCost = 2300 * time.Millisecond
)

// Estimate is a rough duration of the plan for s: per trial, a load time
// from a simple model (LoadTime, and for a generated page its own shape and
// the client's work on it) for each of its visit's loads plus the client's
// overhead, or, for a load the model expects to outlast the spec's
// timeout, every attempt's timeout; per testbed its setup, and per network
// its netcheck.
func (p Plan) Estimate(s *spec.Spec) time.Duration {
	return p.EstimateOn(s, Overheads{})
}

// EstimateOn is Estimate with the overheads o (those a machine's runs
// measured). Shards are balanced by Estimate, whatever the machine, so
// that every machine computes the same shards.
func (p Plan) EstimateOn(s *spec.Spec, o Overheads) time.Duration {
	total := time.Duration(p.Setups) * setupCost
	if s.Netcheck {
		total += time.Duration(len(s.Networks)) * netcheckCost
	}
	m := newLoadModel()
	m.overheads = o
	for _, t := range p.Trials {
		total += m.trialEstimate(s, t)
	}
	return total
}

// TrialEstimates are EstimateOn's parts for trials of s's plan, in their
// order: each trial's loads, pauses and overheads under o (no testbed
// setups, no netchecks).
func TrialEstimates(s *spec.Spec, trials []Trial, o Overheads) []time.Duration {
	m := newLoadModel()
	m.overheads = o
	out := make([]time.Duration, len(trials))
	for i, t := range trials {
		out[i] = m.trialEstimate(s, t)
	}
	return out
}

// OverTimeout counts the plan's trials whose loads the model (LoadTime)
// expects to outlast s's timeout, which will fail, and the longest such
// load.
func (p Plan) OverTimeout(s *spec.Spec) (trials int, longest time.Duration) {
	m := newLoadModel()
	for _, t := range p.Trials {
		if load := m.load(t.Cell); load > s.Timeout {
			trials++
			longest = max(longest, load)
		}
	}
	return trials, longest
}

// generatedFlows is how many connections the model lets a generated
// page's bytes share at high loss. Calibrated on web2024:9 over Wolsing et
// al.'s MSS link (6 % loss, 760 ms), whose loads took 17–35 s here
// (BENCHMARKS.md): 10 with the corpus's median bytes (2.65 MB) the model
// gave every generated page then, 7 with the page's own 1.78 MB
// (gen.Web2024Shape) that it gives it now.
const generatedFlows = 7

// h1Flows is how many connections HTTP/1.1 opens to an origin.
const h1Flows = 6

// Costs of a generated page beyond its bytes, fitted on web2024 pages 1
// and 3–10 in both browsers, h2 and h3, at 40 ms without loss and 80 ms
// with 1 % (2026-11-29, BENCHMARKS.md, "the plan's estimate"; page 2
// left out to test the fit on): generatedLossFlows are the connections
// its bytes share where loss bounds them at up to generatedHighLoss (most
// bytes come from the first party and its static host: 2 fits at 1 %,
// where generatedFlows overestimated the rate threefold; above 1.5 % the
// MSS calibration, generatedFlows, stands: a piecewise fit of two
// measured regimes, not a law);
// generatedChainRTTs are the round trips its dependency chain adds (style
// sheets reveal fonts and images, scripts inject scripts and images); and
// a rendering client's work per request (parsing, scripts, decoding,
// layout), fitted on the loads without loss.
const (
	generatedLossFlows = 2
	generatedHighLoss  = 0.015
	generatedChainRTTs = 2
	perRequestWork     = 5 * time.Millisecond
)

// loadModel is the duration model of a plan's loads; it draws each
// generated page's shape once.
type loadModel struct {
	shapes    map[factor.Page]gen.Shape
	overheads Overheads
}

func newLoadModel() *loadModel { return &loadModel{shapes: map[factor.Page]gen.Shape{}} }

// load is LoadTime for one load of a cell, its bytes shared by a
// connection per origin (six for HTTP/1.1); for a generated page, its own
// bytes, its chain's round trips and the client's work on its requests.
func (m *loadModel) load(c Cell) time.Duration {
	flows := max(1, c.Levels.Origins())
	shape, generated := m.shape(c.Page)
	loss := c.Network.Down.MeanLoss()
	switch {
	case generated && loss > 0 && loss < generatedHighLoss:
		flows = generatedLossFlows
	case c.Page.OwnOrigins():
		flows = generatedFlows
	}
	protocol := c.Levels.Protocol()
	if protocol == factor.H1 {
		flows *= h1Flows
	}
	link := ModelLink{RTT: c.Network.RTT, Rate: c.Network.Down.MeanRate(), Loss: loss, Flows: flows, TCP: protocol != factor.H3}
	if !generated {
		return LoadTime(c.Page, link)
	}
	t := loadTimeOf(float64(shape.Bytes), link) + generatedChainRTTs*c.Network.RTT
	if c.Levels.Client().Capabilities().Renders {
		t += time.Duration(shape.Requests) * perRequestWork
	}
	return t
}

// shape is generated page p's shape, drawn once; false for another page.
func (m *loadModel) shape(p factor.Page) (gen.Shape, bool) {
	if p.Kind != factor.PageWeb2024 {
		return gen.Shape{}, false
	}
	if s, ok := m.shapes[p]; ok {
		return s, true
	}
	s, err := gen.Web2024Shape(p)
	if err != nil {
		return gen.Shape{}, false
	}
	m.shapes[p] = s
	return s, true
}

// trialEstimate is one trial's share of Estimate: its loads, the pause of
// a repeat visit, the client's overhead, and the visual capture's cost; a
// load the model expects to outlast the timeout costs every attempt's
// timeout, and one that can only fail one attempt (Cell.OnlyFails).
func (m *loadModel) trialEstimate(s *spec.Spec, t Trial) time.Duration {
	c := t.Cell
	overhead := m.overheads.perTrial(KeyOf(s, c))
	if c.OnlyFails() != "" {
		return onlyFailingAttempt(s, c.Levels.Client()) + overhead
	}
	load := m.load(c)
	if s.Timeout > 0 && load > s.Timeout {
		return time.Duration(1+s.Retries) * (s.Timeout + overhead)
	}
	loads := c.Levels.Visit().Loads()
	total := time.Duration(loads)*load + time.Duration(loads-1)*repeatPause + overhead
	if c.Levels.Visual().On() {
		total += visualCost
	}
	return total
}

// onlyFailingAttempt is how long the attempt of a load that can only fail
// takes, at most the load's timeout. Over blocked UDP (2026-12-01, 20 ms):
// Chromium and its shell gave up (ERR_QUIC_PROTOCOL_ERROR) within
// 4.4–4.8 s a trial with the browser's start, the built-in loader at
// quic-go's handshake idle timeout (5 s), Firefox not before the load's
// timeout.
func onlyFailingAttempt(s *spec.Spec, client factor.Client) time.Duration {
	switch client {
	case factor.ClientChromium, factor.ClientChromiumShell:
		return min(s.Timeout, 4*time.Second)
	case factor.ClientLoader:
		return min(s.Timeout, 5*time.Second)
	}
	return s.Timeout
}

// ModelLink is what LoadTime knows of a load's way: the round trip, the
// downlink's rate in bit/s (0: unlimited) and loss (0 to 1), how many
// connections share the page's bytes, and whether they are TCP's (whose
// retransmission timeouts wait at least minRTO) or QUIC's.
type ModelLink struct {
	RTT   time.Duration
	Rate  float64
	Loss  float64
	Flows int
	TCP   bool
}

// minRTO is the least retransmission timeout of Linux TCP: at high loss,
// TCP's time goes waiting on it. QUIC declares a packet lost a fraction
// of a round trip after a later one is acknowledged (RFC 9002), which
// the model counts as no wait.
const minRTO = 200 * time.Millisecond

// LoadTime models a page load: 3 round trips to the first byte of the
// document, then the objects in slow-start rounds from a 10-packet window,
// bounded below by the bytes at the link's rate and, where packets are
// lost, by the bytes at the rate loss lets its flows keep
// (lossLimitedRate).
func LoadTime(page factor.Page, l ModelLink) time.Duration {
	return loadTimeOf(float64(page.ObjectsBytes()), l)
}

// loadTimeOf is LoadTime for a page whose objects weigh bytes.
func loadTimeOf(bytes float64, l ModelLink) time.Duration {
	rounds := 1 + math.Ceil(math.Log2(1+bytes/(10*1448)))
	t := time.Duration(3+rounds) * l.RTT
	rate := l.Rate
	if l.Loss > 0 {
		lossRate := float64(max(l.Flows, 1)) * lossLimitedRate(l.RTT, l.Loss, l.TCP)
		if rate == 0 || lossRate < rate {
			rate = lossRate
		}
	}
	if rate > 0 && !math.IsInf(rate, 1) {
		t = max(t, 3*l.RTT+time.Duration(bytes*8/rate*float64(time.Second)))
	}
	return t
}

// lossLimitedRate is the rate in bit/s one congestion-controlled flow of
// 1,448-byte segments keeps at a round trip of rtt and a loss of loss
// (0 to 1): Padhye et al.'s model (1998), Mathis et al.'s MSS/RTT ×
// 1.22/√loss at low loss plus, for TCP, the time retransmission timeouts
// (rtt plus minRTO) take. A loss ends in a timeout with probability
// min(1, (3/W)²) for a window of W = 1.22/√loss segments, where Padhye's
// Reno has min(1, 3/W): selective acknowledgements and tail-loss probes
// recover most losses of a window of more than a few segments without
// one. Calibrated on Masri et al.'s 128 × 300 KB at 5 ms and 1 % loss
// (10.5 s over h3, 13.5 s over h2 here) and Cook et al.'s 40 × 20 KB at
// 20 % loss without delay (46 s over h2, 1.0 s over h3), BENCHMARKS.md.
func lossLimitedRate(rtt time.Duration, loss float64, tcp bool) float64 {
	window := mathisC / math.Sqrt(loss)
	perPacket := rtt.Seconds() / window
	if tcp {
		timeout := min(1, (3/window)*(3/window))
		perPacket += (rtt + minRTO).Seconds() * timeout * loss * (1 + 32*loss*loss)
	}
	if perPacket == 0 {
		return math.Inf(1)
	}
	return 1448 * 8 / perPacket
}

// mathisC is the constant of Mathis et al.'s bound, √(3/2): a flow keeps
// a window of mathisC/√loss segments a round trip.
var mathisC = math.Sqrt(1.5)

// orderRand is the generator of a plan's order for a spec seed.
func orderRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(DeriveSeed(seed, "order", ""), 0x91a7))
}

// PairSeeds are the link seeds a load of repetition rep of a cell of setup
// starts from when the spec pairs trials: derived from the setup's link
// seeds, its page and origins, and rep, and not from the stack or server
// (nor the cell's protocol, visit, cache or visual), so that the loads of
// one repetition that differ only in those meet the same packet fates.
func PairSeeds(setup *Setup, rep int) (up, down uint64) {
	what := fmt.Sprintf("page=%s;origins=%d;rep=%d", setup.Page, setup.Levels.Origins(), rep)
	return DeriveSeed(setup.UpSeed, "pair-up", what), DeriveSeed(setup.DownSeed, "pair-down", what)
}
