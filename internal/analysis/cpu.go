package analysis

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/stats"
)

// CPU is one protocol's CPU per verified load in a setting: medians over
// its loads of the ms of CPU each party used over the measured visit
// (results.CPU); Client and Server are nil for a party in quicbench's
// process, whose CPU is in Quicbench's. Total is the median of each load's
// client, server and quicbench CPU together. The waits are medians of the
// ms each party waited for a CPU (results.CPUWaits; the client's beyond
// its cap's throttling), nil where not measured. Bound counts the loads
// that were CPU-bound, and BoundBy by whom ("client 3, machine 1").
type CPU struct {
	Protocol  factor.Protocol `json:"protocol"`
	Loads     int             `json:"loads"`
	WindowMs  float64         `json:"window_ms"`
	ClientMs  *float64        `json:"client_ms"`
	Server    string          `json:"server"`
	ServerMs  *float64        `json:"server_ms"`
	Quicbench float64         `json:"quicbench_ms"`
	Emulator  float64         `json:"emulator_busy_ms"`
	IdlePct   float64         `json:"idle_pct"`
	TotalMs   float64         `json:"total_ms"`
	// ClientWaitMs, ServerWaitMs and QuicbenchWaitMs are the parties'
	// median waits; ClientThrottledMs the client cap's.
	ClientWaitMs      *float64 `json:"client_wait_ms"`
	ClientThrottledMs *float64 `json:"client_throttled_ms"`
	ServerWaitMs      *float64 `json:"server_wait_ms"`
	QuicbenchWaitMs   *float64 `json:"quicbench_wait_ms"`
	// CoresOthersMs is the median CPU time other tasks used on the run's
	// own cores (a run on cores of its own; nil otherwise), and
	// CoresOthersShare their sum over the loads' windows' sum.
	CoresOthersMs    *float64 `json:"cores_others_ms"`
	CoresOthersShare float64  `json:"cores_others_share"`
	Bound            int      `json:"cpu_bound_loads"`
	BoundBy          string   `json:"cpu_bound_by"`
}

// SettingCPU is the protocols' CPU in one setting, and the compared
// protocol's CPU against the baseline's: the ratios of their medians, in
// total and per party (0 where a party is not measured apart).
type SettingCPU struct {
	Setting     Setting `json:"setting"`
	Protocols   []CPU   `json:"protocols"`
	TotalRatio  float64 `json:"total_ratio"`
	ClientRatio float64 `json:"client_ratio"`
	ServerRatio float64 `json:"server_ratio"`
}

// Bound counts the setting's CPU-bound loads.
func (s SettingCPU) Bound() int {
	n := 0
	for _, p := range s.Protocols {
		n += p.Bound
	}
	return n
}

// CPUs are the settings' CPU per protocol of the verified trials that
// measured it, with compare's ratios to baseline.
func CPUs(trials []results.Trial, compare, baseline factor.Protocol) []SettingCPU {
	return cpus(trials, compare, baseline)
}

// cpus are the settings' CPU per protocol, from the verified trials that
// measured it; compare and baseline name the ratios' protocols.
func cpus(trials []results.Trial, compare, baseline factor.Protocol) []SettingCPU {
	var out []SettingCPU
	for _, g := range bySetting(trials, func(t results.Trial) bool { return t.CPUWindowMs != nil }) {
		sc := SettingCPU{Setting: g.setting}
		var c, b *CPU
		for _, pt := range g.protocols {
			sc.Protocols = append(sc.Protocols, cpuOf(pt.protocol, pt.trials))
		}
		for i := range sc.Protocols {
			switch sc.Protocols[i].Protocol {
			case compare:
				c = &sc.Protocols[i]
			case baseline:
				b = &sc.Protocols[i]
			}
		}
		if c != nil && b != nil {
			sc.TotalRatio = ratio(&c.TotalMs, &b.TotalMs)
			sc.ClientRatio, sc.ServerRatio = ratio(c.ClientMs, b.ClientMs), ratio(c.ServerMs, b.ServerMs)
		}
		out = append(out, sc)
	}
	return out
}

// ratio is *a / *b, 0 when either is missing or b is 0.
func ratio(a, b *float64) float64 {
	if a == nil || b == nil || *b == 0 {
		return 0
	}
	return *a / *b
}

// cpuOf is protocol p's CPU over its trials ts.
func cpuOf(p factor.Protocol, ts []results.Trial) CPU {
	median := func(v func(results.Trial) *float64) *float64 {
		var vs []float64
		for _, t := range ts {
			if x := v(t); x != nil {
				vs = append(vs, *x)
			}
		}
		if len(vs) == 0 {
			return nil
		}
		m := stats.Summarize(vs).Median
		return &m
	}
	sum := func(a, b *float64) *float64 {
		if a == nil || b == nil {
			return nil
		}
		s := *a + *b
		return &s
	}
	client := func(t results.Trial) *float64 { return sum(t.ClientCPUUserMs, t.ClientCPUSystemMs) }
	server := func(t results.Trial) *float64 { return sum(t.ServerCPUUserMs, t.ServerCPUSystemMs) }
	self := func(t results.Trial) *float64 { return sum(t.QuicbenchCPUUserMs, t.QuicbenchCPUSystemMs) }
	total := func(t results.Trial) *float64 {
		s := *self(t)
		for _, x := range []*float64{client(t), server(t)} {
			if x != nil {
				s += *x
			}
		}
		return &s
	}
	bound := map[string]int{}
	for _, t := range ts {
		if t.CPUBound != "" {
			bound[t.CPUBound]++
		}
	}
	c := CPU{Protocol: p, Loads: len(ts), WindowMs: *median(func(t results.Trial) *float64 { return t.CPUWindowMs }),
		ClientMs: median(client), Server: ts[0].ServerProcess, ServerMs: median(server), Quicbench: *median(self),
		Emulator: orZero(median(func(t results.Trial) *float64 { return t.EmulatorBusyMs })),
		IdlePct:  orZero(median(func(t results.Trial) *float64 { return t.IdlePct })), TotalMs: *median(total)}
	c.ClientWaitMs, c.ClientThrottledMs = median(clientBeyondCap), median(func(t results.Trial) *float64 { return t.ClientCPUThrottledMs })
	c.ServerWaitMs, c.QuicbenchWaitMs = median(func(t results.Trial) *float64 { return t.ServerCPUWaitMs }), median(func(t results.Trial) *float64 { return t.QuicbenchCPUWaitMs })
	c.CoresOthersMs, c.CoresOthersShare = median(func(t results.Trial) *float64 { return t.CoresOthersMs }), coresOthersShare(ts)
	var by []string
	for _, who := range slices.Sorted(maps.Keys(bound)) {
		c.Bound += bound[who]
		by = append(by, fmt.Sprintf("%s %d", who, bound[who]))
	}
	c.BoundBy = strings.Join(by, ", ")
	return c
}

// coresOthersShare is the CPU time others used on the run's own cores
// over ts, as a share of the loads' windows (0 where not measured).
func coresOthersShare(ts []results.Trial) float64 {
	var others, window float64
	for _, t := range ts {
		if t.CoresOthersMs != nil && t.CPUWindowMs != nil {
			others, window = others+*t.CoresOthersMs, window+*t.CPUWindowMs
		}
	}
	if window == 0 {
		return 0
	}
	return others / window
}

// clientBeyondCap is the time t's client waited for a CPU beyond what its
// cap imposed (never below 0), or, on CPUs of its own, the time others
// used them; nil where its wait was not measured.
func clientBeyondCap(t results.Trial) *float64 {
	if t.ClientCPUsOthersMs != nil {
		return t.ClientCPUsOthersMs
	}
	if t.ClientCPUWaitMs == nil {
		return nil
	}
	w := *t.ClientCPUWaitMs
	if t.ClientCPUThrottledMs != nil {
		w = max(0, w-*t.ClientCPUThrottledMs)
	}
	return &w
}

// orZero is *v, or 0 for nil.
func orZero(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}
