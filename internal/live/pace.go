package live

import (
	"fmt"
	"slices"
	"time"
)

// DefaultMinGap is how long a live run waits between two loads of one
// origin by default: one page per second per origin.
const DefaultMinGap = time.Second

// Pacer spaces a live run's loads: none starts less than MinGap after the
// last one of any of its origins started, and none past MaxLoads. A pure
// model: callers give it the time.
type Pacer struct {
	// MinGap is the least time between two loads' starts that share an
	// origin; 0: DefaultMinGap.
	MinGap time.Duration
	// MaxLoads caps the run's loads (--max-loads); 0: no cap.
	MaxLoads int
	last     map[string]time.Time
	loads    int
}

// Wait says how long from now a load of origins must wait to start. It
// fails once MaxLoads loads have started.
func (p *Pacer) Wait(now time.Time, origins []string) (time.Duration, error) {
	if p.MaxLoads > 0 && p.loads >= p.MaxLoads {
		return 0, fmt.Errorf("the run reached --max-loads %d: raise it to load the site more often", p.MaxLoads)
	}
	gap := p.MinGap
	if gap <= 0 {
		gap = DefaultMinGap
	}
	var wait time.Duration
	for _, o := range origins {
		if last, ok := p.last[o]; ok {
			wait = max(wait, last.Add(gap).Sub(now))
		}
	}
	return wait, nil
}

// Started notes that a load of origins started at now.
func (p *Pacer) Started(now time.Time, origins []string) {
	if p.last == nil {
		p.last = map[string]time.Time{}
	}
	for _, o := range slices.Compact(slices.Sorted(slices.Values(origins))) {
		p.last[o] = now
	}
	p.loads++
}

// DefaultAgentSuffix ends the browser's User-Agent on a live run, so that
// the site's operators can tell the benchmark's loads from their users'.
const DefaultAgentSuffix = "quicbench (+https://github.com/quicbench/quicbench; HTTP/3 benchmark)"

// MaxAgentSuffixBytes bounds --user-agent-suffix.
const MaxAgentSuffixBytes = 200

// CheckAgentSuffix refuses a User-Agent suffix that is empty, too long or
// not printable ASCII.
func CheckAgentSuffix(suffix string) error {
	if suffix == "" || len(suffix) > MaxAgentSuffixBytes {
		return fmt.Errorf("--user-agent-suffix must be 1 to %d bytes: it tells the site's operators who loads their pages", MaxAgentSuffixBytes)
	}
	for _, r := range suffix {
		if r < 0x20 || r > 0x7e {
			return fmt.Errorf("--user-agent-suffix holds %q: use printable ASCII only (it goes into a header field)", r)
		}
	}
	return nil
}
