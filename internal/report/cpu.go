package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/stats"
)

// CPU is one protocol's CPU per verified load in a setting: medians over
// its loads of the ms of CPU each party used over the measured visit
// (results.CPU); Client and Server are nil for a party in quicbench's
// process, whose CPU is in Quicbench's. Total is the median of each load's
// client, server and quicbench CPU together. Bound counts the loads that
// were CPU-bound, and BoundBy by whom ("client 3, machine 1").
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
	Bound     int             `json:"cpu_bound_loads"`
	BoundBy   string          `json:"cpu_bound_by"`
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

// WriteCPU writes one setting's CPU (a comparison's) as the report does.
func WriteCPU(w io.Writer, scs []SettingCPU, compare, baseline factor.Protocol) {
	writeCPU(w, scs, Options{Compare: compare, Baseline: baseline}, varied{})
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
	var by []string
	for _, who := range slices.Sorted(maps.Keys(bound)) {
		c.Bound += bound[who]
		by = append(by, fmt.Sprintf("%s %d", who, bound[who]))
	}
	c.BoundBy = strings.Join(by, ", ")
	return c
}

// orZero is *v, or 0 for nil.
func orZero(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}

// optional formats v with prec decimals, "in quicbench" for nil.
func optional(v *float64, prec int) string {
	if v == nil {
		return "in quicbench"
	}
	return num(*v, prec)
}

// writeCPU writes the CPU per load, party and setting, the compared
// protocol's CPU against the baseline's, and a warning per setting whose
// loads were CPU-bound.
func writeCPU(w io.Writer, scs []SettingCPU, o Options, v varied) {
	if len(scs) == 0 {
		return
	}
	fmt.Fprintf(w, "\nCPU per verified load over its measured visit, medians in ms of CPU (a whole core for the window\n"+
		"uses as many ms as the window lasts): the browser's processes, the server's that served the protocol, and quicbench's\n"+
		"(the emulator, the harness, and the built-in loader when it takes part; the emulator's working\n"+
		"time beside it); CPU-bound: a party used at least 0.8 of a core over the load, or the machine was under 10 %% idle:\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%sprotocol\tloads\twindow\tclient\tserver\tquicbench\t(emulator)\tidle\ttotal\tCPU-bound\t%s/%s total, client, server\n",
		v.header(), o.Compare, o.Baseline)
	for _, sc := range scs {
		for i, p := range sc.Protocols {
			ratios := ""
			if i == 0 && sc.TotalRatio > 0 {
				ratios = fmt.Sprintf("%s, %s, %s", num(sc.TotalRatio, 2), ratioText(sc.ClientRatio), ratioText(sc.ServerRatio))
			}
			fmt.Fprintf(tw, "%s%s\t%d\t%s\t%s\t%s %s\t%s\t(%s)\t%s %%\t%s\t%d %s\t%s\n", v.row(sc.Setting),
				p.Protocol, p.Loads, num(p.WindowMs, 0), optional(p.ClientMs, 1), p.Server, optional(p.ServerMs, 1),
				num(p.Quicbench, 1), num(p.Emulator, 1), num(p.IdlePct, 0), num(p.TotalMs, 1), p.Bound, parenthesized(p.BoundBy), ratios)
		}
	}
	tw.Flush()
	for _, sc := range scs {
		if sc.Bound() == 0 {
			continue
		}
		var parts []string
		for _, p := range sc.Protocols {
			parts = append(parts, fmt.Sprintf("%d of %d %s loads", p.Bound, p.Loads, p.Protocol))
		}
		fmt.Fprintf(w, "WARNING: %s: %s were CPU-bound: there the comparison measures this machine's CPU as much as the network.\n",
			strings.Join(append([]string{sc.Setting.Network(), sc.Setting.Page()}, v.values(sc.Setting)...), ", "), strings.Join(parts, ", "))
	}
}

// ratioText formats a ratio, "-" when it is not measured.
func ratioText(r float64) string {
	if r == 0 {
		return "-"
	}
	return num(r, 2)
}

// parenthesized is "(s)", or "" for an empty s.
func parenthesized(s string) string {
	if s == "" {
		return ""
	}
	return "(" + s + ")"
}

// cpuTable is the CPU per setting and protocol as a CSV table; f formats
// numbers.
func cpuTable(a *Analysis, f func(float64) string) [][]string {
	opt := func(v *float64) string {
		if v == nil {
			return ""
		}
		return f(*v)
	}
	rows := [][]string{append(settingHeader(), "protocol", "loads", "median_window_ms", "median_client_cpu_ms", "server_process", "median_server_cpu_ms",
		"median_quicbench_cpu_ms", "median_emulator_busy_ms", "median_idle_pct", "median_total_cpu_ms", "cpu_bound_loads", "cpu_bound_by",
		"total_ratio", "client_ratio", "server_ratio")}
	for _, sc := range a.CPU {
		for _, p := range sc.Protocols {
			rows = append(rows, append(settingCells(sc.Setting), string(p.Protocol), strconv.Itoa(p.Loads), f(p.WindowMs), opt(p.ClientMs), p.Server,
				opt(p.ServerMs), f(p.Quicbench), f(p.Emulator), f(p.IdlePct), f(p.TotalMs), strconv.Itoa(p.Bound), p.BoundBy,
				f(sc.TotalRatio), f(sc.ClientRatio), f(sc.ServerRatio)))
		}
	}
	return rows
}
