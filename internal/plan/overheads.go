package plan

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/spec"
)

// OverheadKey names a kind of load's overhead: its client, and for a
// browser the way its browsers start ("fresh" or "warm") and its CPU
// ("unlimited", or a cap: a fresh Chromium capped at one core took 1.21 s
// a load where an unlimited one took 0.76 s); "" for the built-in loader.
type OverheadKey struct {
	Client    factor.Client
	Browser   factor.Browser
	ClientCPU factor.ClientCPU
}

// String is the key as the plan prints it: browser, mode and CPU.
func (k OverheadKey) String() string {
	if k.Browser == "" {
		return string(k.Client)
	}
	cpu := "unlimited CPU"
	if c := k.ClientCPU.Cores(); c > 0 {
		cpu = fmt.Sprintf("%g cores", c)
	}
	return fmt.Sprintf("%s %s (%s)", k.Client, k.Browser, cpu)
}

// Measured is an overhead a machine's runs measured: the median over
// Loads loads, the newest of them ended At.
type Measured struct {
	PerLoad time.Duration
	Loads   int
	At      time.Time
}

// Overheads are the per-trial costs beyond its loads that the estimate
// charges: measured on the machine that runs, where its runs measured
// them (Measured), else the constants of the 2-core machine of
// BENCHMARKS.md.
type Overheads struct {
	Measured map[OverheadKey]Measured
}

// KeyOf is the overhead key of a cell's loads under spec s.
func KeyOf(s *spec.Spec, c Cell) OverheadKey {
	client := c.Levels.Client()
	if !client.Capabilities().Renders {
		return OverheadKey{Client: client}
	}
	cpu := c.Levels.ClientCPU()
	if cpu == "" {
		cpu = factor.ClientCPUUnlimited
	}
	return OverheadKey{Client: client, Browser: browserOrFresh(s.Browser()), ClientCPU: cpu}
}

// browserOrFresh is b, fresh where unset.
func browserOrFresh(b factor.Browser) factor.Browser {
	if b == "" {
		return factor.BrowserFresh
	}
	return b
}

// perTrial is the overhead a trial of key k costs: measured, or the
// constant for its client.
func (o Overheads) perTrial(k OverheadKey) time.Duration {
	if m, ok := o.Measured[k]; ok {
		return m.PerLoad
	}
	switch {
	case k.Client == factor.ClientFirefox:
		return firefoxOverhead
	case k.Client.Capabilities().Renders:
		return chromiumOverhead
	}
	return loaderOverhead
}

// Describe says where the overheads of s's plan come from, for the plan's
// estimate line: "" where every one is the constant.
func (o Overheads) Describe(s *spec.Spec, p Plan) string {
	seen := map[OverheadKey]bool{}
	var measured, constant []string
	for _, t := range p.Trials {
		k := KeyOf(s, t.Cell)
		if seen[k] {
			continue
		}
		seen[k] = true
		if m, ok := o.Measured[k]; ok {
			measured = append(measured, fmt.Sprintf("%s %.2f s (%d loads, %s)", k, m.PerLoad.Seconds(), m.Loads, m.At.UTC().Format("2006-01-02")))
		} else {
			constant = append(constant, fmt.Sprintf("%s %.2f s", k, o.perTrial(k).Seconds()))
		}
	}
	slices.Sort(measured)
	slices.Sort(constant)
	if len(measured) == 0 {
		return ""
	}
	text := "overheads a load measured on this machine: " + strings.Join(measured, ", ")
	if len(constant) > 0 {
		text += "; not measured here yet: " + strings.Join(constant, ", ")
	}
	return text
}
