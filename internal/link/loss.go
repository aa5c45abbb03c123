package link

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// GilbertElliott is a two-state bursty loss model with netem's parameters
// ("loss gemodel p r 1-h 1-k"): the chain moves good → bad with probability
// P and bad → good with probability R per packet; a packet is lost with
// probability LossBad (1−h) in the bad state and LossGood (1−k) in the good
// state. Probabilities are fractions from 0 to 1.
type GilbertElliott struct {
	P        float64 `json:"p"`         // good → bad transition probability
	R        float64 `json:"r"`         // bad → good transition probability
	LossBad  float64 `json:"loss_bad"`  // 1−h: loss probability in the bad state
	LossGood float64 `json:"loss_good"` // 1−k: loss probability in the good state
}

// Validate reports a parameter outside [0, 1], or a chain that never leaves
// a state it started in while the other is reachable.
func (g GilbertElliott) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"p", g.P}, {"r", g.R}, {"1-h", g.LossBad}, {"1-k", g.LossGood}} {
		if math.IsNaN(f.v) || f.v < 0 || f.v > 1 {
			return fmt.Errorf("Gilbert-Elliott %s = %v is outside [0, 1]", f.name, f.v)
		}
	}
	if g.P > 0 && g.R == 0 {
		return fmt.Errorf("Gilbert-Elliott r = 0 with p > 0: the bad state would never end")
	}
	return nil
}

// StationaryLoss is the long-run loss rate: πG·(1−k) + πB·(1−h) with
// πB = p/(p+r).
func (g GilbertElliott) StationaryLoss() float64 {
	if g.P+g.R == 0 {
		return g.LossGood
	}
	bad := g.P / (g.P + g.R)
	return (1-bad)*g.LossGood + bad*g.LossBad
}

// lossProcess decides, packet by packet, whether a packet is lost.
type lossProcess interface {
	lose(rng *rand.Rand) bool
}

type bernoulli float64

func (p bernoulli) lose(rng *rand.Rand) bool { return p > 0 && rng.Float64() < float64(p) }

// gilbertElliott follows netem's loss_gilb_ell: the loss decision uses the
// state the packet found, then the state moves for the next packet.
type gilbertElliott struct {
	GilbertElliott
	bad bool
}

func (g *gilbertElliott) lose(rng *rand.Rand) bool {
	if g.bad {
		if rng.Float64() < g.R {
			g.bad = false
		}
		return rng.Float64() < g.LossBad
	}
	if rng.Float64() < g.P {
		g.bad = true
	}
	return rng.Float64() < g.LossGood
}

// AsymptoticVariance is the variance per packet of the long-run loss rate's
// estimator: Var(X) + 2·Σ Cov(X_t, X_t+k) for the loss indicator X, where
// Cov = (LossBad − LossGood)²·π(1−π)·λ^k with π = p/(p+r), λ = 1 − p − r.
// The loss rate measured over n packets has variance about this over n.
func (g GilbertElliott) AsymptoticVariance() float64 {
	m := g.StationaryLoss()
	if g.P+g.R == 0 {
		return m * (1 - m)
	}
	pi := g.P / (g.P + g.R)
	lambda := 1 - g.P - g.R
	d := g.LossBad - g.LossGood
	return m*(1-m) + 2*d*d*pi*(1-pi)*lambda/(1-lambda)
}
