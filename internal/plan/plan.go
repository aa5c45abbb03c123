// Package plan expands a spec into its trials: the full factorial grid of
// the factors' levels × the repetitions, each trial with an ID that depends
// only on its factor levels and repetition (so it is stable across runs and
// plan orders), in a randomized, interleaved order.
//
// Order: the cells that share a testbed (network, page, origins, TCP stack,
// server stack) form a setup; the setups run in an order shuffled from the
// seed; within a setup, each repetition block runs every cell of the setup
// once (every protocol, visit and cache level) in an order shuffled from
// the seed. Drift in the machine thus hits the protocols of a comparison
// alike, and each testbed is built once.
package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/spec"
)

// Cell is one combination of factor levels.
type Cell struct {
	Network  string          `json:"network"`
	Page     string          `json:"page"`
	Origins  int             `json:"origins"`
	Stack    string          `json:"stack"`
	Server   string          `json:"server"`
	Protocol client.Protocol `json:"protocol"`
	Visit    client.Visit    `json:"visit"`
	Cache    bool            `json:"cache"`

	// Indexes into the spec's level lists.
	NetworkIndex, PageIndex, StackIndex int `json:"-"`
}

// Key is the cell's canonical text, from which its ID is made.
func (c Cell) Key() string {
	return fmt.Sprintf("network=%s;page=%s;origins=%d;stack=%s;server=%s;protocol=%s;visit=%s;cache=%t",
		c.Network, c.Page, c.Origins, c.Stack, c.Server, c.Protocol, c.Visit, c.Cache)
}

// SetupKey identifies the testbed the cell needs.
func (c Cell) SetupKey() string {
	return fmt.Sprintf("network=%s;page=%s;origins=%d;stack=%s;server=%s", c.Network, c.Page, c.Origins, c.Stack, c.Server)
}

// ID is the cell's stable identifier: "c" and 12 hex digits of the key's
// SHA-256.
func (c Cell) ID() string {
	sum := sha256.Sum256([]byte(c.Key()))
	return "c" + hex.EncodeToString(sum[:6])
}

// Trial is one page load of the plan (retries of a failed load are
// attempts of the same trial).
type Trial struct {
	// ID is "<cell ID>-r<repetition>", stable across runs.
	ID   string `json:"id"`
	Cell Cell   `json:"cell"`
	// Rep is the repetition, from 1.
	Rep int `json:"rep"`
	// Seq is the trial's position in the plan's order, from 1.
	Seq int `json:"seq"`
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
	for ni, n := range s.Networks {
		for pi, page := range s.Pages {
			for _, origins := range s.Origins {
				for si, stack := range s.Stacks {
					for _, server := range s.Servers {
						var cells []Cell
						for _, proto := range s.Protocols {
							for _, visit := range s.Visits {
								for _, cache := range s.Cache {
									cells = append(cells, Cell{Network: n.Name, Page: page.String(), Origins: origins, Stack: stack.Name,
										Server: server, Protocol: proto, Visit: visit, Cache: cache, NetworkIndex: ni, PageIndex: pi, StackIndex: si})
								}
							}
						}
						setups = append(setups, cells)
					}
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(s.Seed, 0x91a7))
	rng.Shuffle(len(setups), func(i, j int) { setups[i], setups[j] = setups[j], setups[i] })
	p := Plan{Setups: len(setups)}
	for _, cells := range setups {
		p.Cells += len(cells)
		for rep := 1; rep <= s.Repetitions; rep++ {
			order := rng.Perm(len(cells))
			for _, i := range order {
				c := cells[i]
				p.Trials = append(p.Trials, Trial{ID: fmt.Sprintf("%s-r%d", c.ID(), rep), Cell: c, Rep: rep, Seq: len(p.Trials) + 1})
			}
		}
	}
	return p
}

// Per-trial costs of the estimate, measured on the 2-core machine of
// BENCHMARKS.md.
const (
	chromiumOverhead = 550 * time.Millisecond // browser start and stop, read-out
	loaderOverhead   = 50 * time.Millisecond
	setupCost        = 500 * time.Millisecond // namespaces, emulator, servers
	netcheckCost     = 12 * time.Second
	repeatPause      = 100 * time.Millisecond // between a repeat visit's loads
)

// Estimate is a rough duration of the plan for s: per trial, a load time
// from a simple model (handshake and request round trips, slow start from
// 10 packets, the page's bytes at the downlink rate) plus the client's
// overhead; per testbed its setup, and per network its netcheck.
func (p Plan) Estimate(s *spec.Spec) time.Duration {
	overhead := chromiumOverhead
	if s.Client == spec.ClientLoader {
		overhead = loaderOverhead
	}
	total := time.Duration(p.Setups) * setupCost
	if s.Netcheck {
		total += time.Duration(len(s.Networks)) * netcheckCost
	}
	for _, t := range p.Trials {
		n := s.Networks[t.Cell.NetworkIndex].Resolved
		load := LoadTime(s.Pages[t.Cell.PageIndex], n.RTT, n.Link.Down.MeanRate())
		if t.Cell.Visit == client.RepeatVisit {
			load = 2*load + repeatPause
		}
		total += load + overhead
	}
	return total
}

// LoadTime models a page load: 3 round trips to the first byte of the
// document, then the objects in slow-start rounds from a 10-packet window,
// bounded below by the bytes at rate (bit/s; 0: unlimited).
func LoadTime(page site.SyntheticSpec, rtt time.Duration, rate float64) time.Duration {
	bytes := float64(page.Objects) * float64(page.ObjectBytes)
	rounds := 1 + math.Ceil(math.Log2(1+bytes/(10*1448)))
	t := time.Duration(3+rounds) * rtt
	if rate > 0 {
		t = max(t, 3*rtt+time.Duration(bytes*8/rate*float64(time.Second)))
	}
	return t
}
