package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/factor"
)

// WriteCPU writes one setting's CPU (a comparison's) as the report does.
func WriteCPU(w io.Writer, scs []analysis.SettingCPU, compare, baseline factor.Protocol) {
	writeCPU(w, scs, analysis.Options{Compare: compare, Baseline: baseline}, analysis.Varied{})
}

// optional formats v with prec decimals, "in quicbench" for nil.
func optional(v *float64, prec int) string {
	if v == nil {
		return "in quicbench"
	}
	return num(*v, prec)
}

// serverCPUText is the server's CPU cell: its stack and its CPU, or that
// a live site's servers are its own, not measured here.
func serverCPUText(p analysis.CPU) string {
	if p.Server == "" && p.ServerMs == nil {
		return "the site's own"
	}
	return p.Server + " " + optional(p.ServerMs, 1)
}

// writeCPU writes the CPU per load, party and setting, the compared
// protocol's CPU against the baseline's, and a warning per setting whose
// loads were CPU-bound.
func writeCPU(w io.Writer, scs []analysis.SettingCPU, o analysis.Options, v analysis.Varied) {
	if len(scs) == 0 {
		return
	}
	fmt.Fprintf(w, "\nCPU per verified load over its measured visit, medians in ms of CPU (a whole core for the window\n"+
		"uses as many ms as the window lasts): the browser's processes, the server's that served the protocol, and quicbench's\n"+
		"(the emulator, the harness, and the built-in loader when it takes part; the emulator's working\n"+
		"time beside it); waited: ms the client (beyond its cap; on CPUs of its own, behind others there), the server and quicbench waited for a CPU.\n%s\n", BoundRule)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%sprotocol\tloads\twindow\tclient\tserver\tquicbench\t(emulator)\tidle\ttotal\twaited\tCPU-bound\t%s/%s total, client, server\n",
		variedHeader(v), o.Compare, o.Baseline)
	for _, sc := range scs {
		for i, p := range sc.Protocols {
			ratios := ""
			if i == 0 && sc.TotalRatio > 0 {
				ratios = fmt.Sprintf("%s, %s, %s", num(sc.TotalRatio, 2), ratioText(sc.ClientRatio), ratioText(sc.ServerRatio))
			}
			fmt.Fprintf(tw, "%s%s\t%d\t%s\t%s\t%s\t%s\t(%s)\t%s %%\t%s\t%s\t%d %s\t%s\n", variedRow(v, sc.Setting),
				p.Protocol, p.Loads, num(p.WindowMs, 0), optional(p.ClientMs, 1), serverCPUText(p),
				num(p.Quicbench, 1), num(p.Emulator, 1), num(p.IdlePct, 0), num(p.TotalMs, 1), waitsText(p), p.Bound, parenthesized(p.BoundBy), ratios)
		}
	}
	tw.Flush()
	writeCoresOthers(w, scs)
	for _, sc := range scs {
		if sc.Bound() == 0 {
			continue
		}
		var parts []string
		for _, p := range sc.Protocols {
			parts = append(parts, fmt.Sprintf("%d of %d %s loads", p.Bound, p.Loads, p.Protocol))
		}
		fmt.Fprintf(w, "WARNING: %s: %s were CPU-bound: there the comparison measures this machine's CPU as much as the network.\n",
			strings.Join(append([]string{sc.Setting.Network(), sc.Setting.Page()}, v.Values(sc.Setting)...), ", "), strings.Join(parts, ", "))
	}
}

// writeCoresOthers says, for a run on cores of its own, how much of
// them other tasks used during its loads: a run beside it leaking onto
// them, or the system's work.
func writeCoresOthers(w io.Writer, scs []analysis.SettingCPU) {
	var most float64
	measured := false
	for _, sc := range scs {
		for _, p := range sc.Protocols {
			if p.CoresOthersMs != nil {
				measured, most = true, max(most, p.CoresOthersShare)
			}
		}
	}
	if measured {
		fmt.Fprintf(w, "The run measured on cores of its own: other tasks used them for at most %s %% of its loads' time in a setting and protocol (10 ms ticks; the system's interrupt work there counts too).\n", num(100*most, 1))
	}
}

// BoundRule says when a load is CPU-bound (cpuuse.BoundWait; a test in
// cmd/quicbench keeps them in step).
const BoundRule = "A load is CPU-bound when a party waited for a CPU for at least 10 % of it (the client beyond what its client_cpu cap imposed, or on CPUs of its own behind other tasks), " +
	"by its measured CPU pressure; in runs made before waits were measured, when a party used at least 0.8 of a core or the machine was under 10 % idle."

// waitsText is p's median waits "client/server/quicbench" in ms, "-"
// for one not measured; "-" for none.
func waitsText(p analysis.CPU) string {
	if p.ClientWaitMs == nil && p.ServerWaitMs == nil && p.QuicbenchWaitMs == nil {
		return "-"
	}
	part := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return num(*v, 0)
	}
	return part(p.ClientWaitMs) + "/" + part(p.ServerWaitMs) + "/" + part(p.QuicbenchWaitMs)
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
func cpuTable(a *analysis.Analysis, f func(float64) string) [][]string {
	opt := func(v *float64) string {
		if v == nil {
			return ""
		}
		return f(*v)
	}
	rows := [][]string{append(settingHeader(), "protocol", "loads", "median_window_ms", "median_client_cpu_ms", "server_process", "median_server_cpu_ms",
		"median_quicbench_cpu_ms", "median_emulator_busy_ms", "median_idle_pct", "median_total_cpu_ms",
		"median_client_cpu_wait_ms", "median_client_cpu_throttled_ms", "median_server_cpu_wait_ms", "median_quicbench_cpu_wait_ms", "cpu_bound_loads", "cpu_bound_by",
		"total_ratio", "client_ratio", "server_ratio", "median_cores_others_ms", "cores_others_share")}
	for _, sc := range a.CPU {
		for _, p := range sc.Protocols {
			rows = append(rows, append(settingCells(sc.Setting), string(p.Protocol), strconv.Itoa(p.Loads), f(p.WindowMs), opt(p.ClientMs), p.Server,
				opt(p.ServerMs), f(p.Quicbench), f(p.Emulator), f(p.IdlePct), f(p.TotalMs),
				opt(p.ClientWaitMs), opt(p.ClientThrottledMs), opt(p.ServerWaitMs), opt(p.QuicbenchWaitMs), strconv.Itoa(p.Bound), p.BoundBy,
				f(sc.TotalRatio), f(sc.ClientRatio), f(sc.ServerRatio), opt(p.CoresOthersMs), f(p.CoresOthersShare)))
		}
	}
	return rows
}
