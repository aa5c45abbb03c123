package experiment

import (
	"time"

	"github.com/quicbench/quicbench/internal/plan"
)

// pace says how long a run has left: the plan's estimate of the trials
// still to run, scaled by how long this run's recorded trials took
// against their own estimates. A plan's trials differ a hundredfold (a
// 2-object page on a clean link, a 38 MB one at 2 % loss), so the mean
// time of the trials so far says little of those to come.
type pace struct {
	estimates map[string]time.Duration // by trial ID
	// doneEstimate is the estimate of the trials this run recorded,
	// leftEstimate of those it has still to run.
	doneEstimate, leftEstimate time.Duration
}

// newPace is the pace of a run that has trials to run, estimated as
// estimates (in the same order).
func newPace(trials []plan.Trial, estimates []time.Duration) *pace {
	p := &pace{estimates: make(map[string]time.Duration, len(trials))}
	for i, t := range trials {
		p.estimates[t.ID] = estimates[i]
		p.leftEstimate += estimates[i]
	}
	return p
}

// recorded moves trial id from the trials to run to those run.
func (p *pace) recorded(id string) {
	e := p.estimates[id]
	p.doneEstimate += e
	p.leftEstimate -= e
	delete(p.estimates, id)
}

// skipped drops trial id from the trials to run: the stopping rule left
// it out.
func (p *pace) skipped(id string) {
	p.leftEstimate -= p.estimates[id]
	delete(p.estimates, id)
}

// left is the time the trials still to run will take, this run having
// taken elapsed for the trials it recorded: their estimate at the pace
// observed, or the estimate alone before any was recorded.
func (p *pace) left(elapsed time.Duration) time.Duration {
	if p.doneEstimate <= 0 {
		return p.leftEstimate
	}
	return time.Duration(float64(p.leftEstimate) * float64(elapsed) / float64(p.doneEstimate))
}
