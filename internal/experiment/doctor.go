package experiment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/quicbench/quicbench/internal/cpuuse"
	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/netcheck"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/testbed"
	"github.com/quicbench/quicbench/internal/trust"
)

// Finding is one fact of the machine and what it means for the results.
type Finding struct {
	// Name is what was looked at, such as "cores"; Value what it is.
	Name, Value string
	// Meaning says what it means for a study's results, with how to fix
	// it where Problem says it limits them, or how to install it where
	// Missing says that a feature beyond the default comparison is not
	// installed (no run that leaves it out is affected).
	Meaning          string
	Problem, Missing bool
}

// Doctor looks at what this machine offers a study: its cores, their
// frequency governor, CPU accounting, TUN, the clients' versions (a
// browser at binaries[c], none: its default), the emulator's own latency
// (netcheck's calibration of a network with no delay; needs root) and
// whether another run holds the measurement lock (the latency is
// measured only while doctor holds it).
func Doctor(ctx context.Context, binaries map[factor.Client]string) []Finding {
	out := []Finding{coresFinding(), governorFinding(), accountingFinding(), capsFinding(), tunFinding()}
	out = append(out, clientFindings(binaries)...)
	out = append(out, serverFindings(testbed.Kinds())...)
	out = append(out, slurmFinding(), overheadsFinding(time.Now()))
	lock, unlock := lockFinding()
	timer := Finding{Name: "emulator latency", Value: "not measured", Meaning: "another run is measuring: measuring now would disturb it"}
	if unlock != nil {
		timer = timerFinding(ctx)
		unlock()
	}
	return append(out, timer, lock)
}

// coresFinding counts the CPUs and says how many the default comparison
// needs to stay network-bound: measured here (BENCHMARKS.md, "CPU
// waiting", "Where the browser's CPU goes"), an unlimited Chromium's
// threads on two cores waited for a CPU 11–17 % of each demo load (medians
// per protocol; 15–53 % before its omnibox popups were switched off),
// while a one-core client on a CPU of its own, the emulator and servers on
// the other, waited at most 5 %.
func coresFinding() Finding {
	n := runtime.NumCPU()
	f := Finding{Name: "cores", Value: fmt.Sprintf("%d (%s)", n, cpuModel())}
	switch {
	case n >= 2:
		f.Meaning = fmt.Sprintf("the default comparison (make demo: a one-core client) needs 2 cores to stay network-bound, 1 for the browser alone and 1 for the emulator and servers; here it has %d. An unlimited browser (--client-cpu unlimited) needs more than 2: on 2 its threads waited for a CPU 11–17 %% of each demo load", n)
	default:
		f.Problem = true
		f.Meaning = "the default comparison (make demo: a one-core client) needs 2 cores to stay network-bound, 1 for the browser alone and 1 for the emulator and servers: on 1 the browser shares its core with the emulator, and the report's cpu_bound will say so"
	}
	return f
}

// capsFinding says whether the browser's CPU can be capped and given CPUs
// of its own here (client_cpu).
func capsFinding() Finding {
	f := Finding{Name: "client CPU caps"}
	m, err := cpuuse.Open(nil)
	if err != nil {
		return Finding{Name: f.Name, Value: "none", Problem: true, Meaning: err.Error()}
	}
	defer m.Close()
	if err := m.CanLimit(); err != nil {
		return Finding{Name: f.Name, Value: "none", Problem: true, Meaning: "client_cpu cannot be given here: " + err.Error()}
	}
	f.Value = "cgroup cpu controller"
	if reserved, err := m.ReserveCPUs(1); err != nil {
		f.Meaning = "client_cpu caps the browser, but it shares the emulator's CPUs (" + err.Error() + ")"
	} else {
		f.Value += ", cpuset"
		f.Meaning = "client_cpu caps the browser, and a one-core client runs on CPU " + reserved + " alone, the emulator and servers on the others"
	}
	return f
}

// governorFinding reads the CPUs' frequency governors.
func governorFinding() Finding {
	g := governors()
	f := Finding{Name: "frequency governor", Value: g}
	switch {
	case g == "":
		f.Value = "not exposed"
		f.Meaning = "no cpufreq here (a virtual machine's host sets the clock): loads are as steady as the host keeps it"
	case g != "performance":
		f.Problem = true
		f.Meaning = "the clock follows the load, so a load's speed depends on what ran before it: set performance (cpupower frequency-set -g performance)"
	default:
		f.Meaning = "the CPUs run at their full clock"
	}
	return f
}

// governors lists the distinct scaling governors of the CPUs, "" when none
// is exposed.
func governors() string {
	paths, _ := filepath.Glob("/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor")
	var seen []string
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if g := strings.TrimSpace(string(data)); err == nil && g != "" && !slices.Contains(seen, g) {
			seen = append(seen, g)
		}
	}
	return strings.Join(seen, ", ")
}

// accountingFinding says how loads' CPU would be counted.
func accountingFinding() Finding {
	f := Finding{Name: "CPU accounting"}
	m, err := cpuuse.Open(nil)
	if err != nil {
		return Finding{Name: f.Name, Value: "none", Problem: true, Meaning: err.Error()}
	}
	defer m.Close()
	f.Value = string(m.Method())
	if m.Method() == cpuuse.MethodCgroup {
		f.Meaning = "each browser and server process group is counted by a cgroup v2 group, exited processes too, in µs"
		return f
	}
	f.Problem = true
	f.Meaning = "no cgroup here (" + m.Why() + "): process trees are read from /proc in 10 ms ticks, and processes that exited unwaited are missed; run as root, or in a delegated cgroup v2"
	return f
}

// tunFinding opens the TUN device.
func tunFinding() Finding {
	f := Finding{Name: "TUN", Value: "/dev/net/tun opens", Meaning: "the emulated links can be built"}
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return Finding{Name: f.Name, Value: err.Error(), Problem: true,
			Meaning: "no emulated link without TUN: load the module (modprobe tun) or give a container /dev/net/tun"}
	}
	unix.Close(fd)
	return f
}

// unavailable names why a program cannot run: "not trusted" (it is there,
// but another user could change it: missing is false) or "missing".
func unavailable(err error) (value string, missing bool) {
	if trust.IsUntrusted(err) {
		return "not trusted", false
	}
	return "missing", true
}

// clientFindings gives each client's version, or what it lacks.
func clientFindings(binaries map[factor.Client]string) []Finding {
	var out []Finding
	for _, k := range Clients() {
		if k.Executable == nil {
			continue // part of quicbench
		}
		f := Finding{Name: string(k.Client)}
		if err := k.CheckInstalled(binaries[k.Client]); err != nil {
			isDefault := string(k.Client) == factor.Of(factor.IDClient).Default
			value, missing := unavailable(err)
			out = append(out, Finding{Name: f.Name, Value: value, Problem: isDefault || !missing, Missing: missing && !isDefault, Meaning: err.Error()})
			continue
		}
		f.Value = k.Version(binaries[k.Client])
		f.Meaning = "recorded with every run as " + string(k.Client) + "_version; loads of different versions are not comparable"
		out = append(out, f)
	}
	return out
}

// serverFindings says which of the server stacks kinds beyond
// quicbench's own can run here, and how to install each that cannot.
func serverFindings(kinds []server.Kind) []Finding {
	var out []Finding
	for _, k := range kinds {
		if k.Check == nil {
			continue // part of quicbench
		}
		f := Finding{Name: "server " + k.Name, Value: "ready"}
		switch {
		case k.TCP != "":
			f.Meaning = fmt.Sprintf("serves h1 and h2 where a spec gives server: %s (--server %[1]s)", k.TCP)
		default:
			f.Meaning = fmt.Sprintf("serves h3 where a spec gives a quic stack of %s (--quic-server %[1]s)", k.QUIC)
		}
		if err := k.Check(); err != nil {
			f.Value, f.Missing, f.Meaning = "missing", true, err.Error()
			if trust.IsUntrusted(err) {
				f.Value, f.Missing, f.Problem = "not trusted", false, true
			}
		}
		out = append(out, f)
	}
	return out
}

// slurmFinding says whether studies can be submitted to Slurm from here
// (quicbench slurm --submit).
func slurmFinding() Finding {
	f := Finding{Name: "slurm", Value: "ready", Meaning: "quicbench slurm --submit hands a study's shards to Slurm's sbatch as a job array"}
	if _, err := trust.LookPath("sbatch"); trust.IsUntrusted(err) {
		f.Value, f.Problem, f.Meaning = "not trusted", true, err.Error()
	} else if err != nil {
		f.Value, f.Missing = "missing", true
		f.Meaning = "quicbench slurm writes job scripts, but --submit needs Slurm's sbatch (" + err.Error() + "): install its client with 'make slurm' and configure it for the cluster"
	}
	return f
}

// timerFinding measures the emulator's own round trip on a network with
// no delay, as netcheck's calibration does before every run.
func timerFinding(ctx context.Context) Finding {
	f := Finding{Name: "emulator latency"}
	if ctx.Err() != nil {
		return Finding{Name: f.Name, Value: "not measured", Meaning: "interrupted"}
	}
	if os.Geteuid() != 0 {
		return Finding{Name: f.Name, Value: "not measured", Meaning: "measuring it builds namespaces: run quicbench doctor as root"}
	}
	n, err := testbed.StartNetwork(netns.NewRunName("d"), emulator.Config{}, 1)
	if err != nil {
		return Finding{Name: f.Name, Value: "not measured", Problem: true, Meaning: "no network could be built: " + err.Error()}
	}
	defer n.Close()
	pl, err := netcheck.Calibrate(ctx, n, netcheck.Config{})
	if err != nil || pl.Skipped != "" {
		return Finding{Name: f.Name, Value: "not measured", Problem: true, Meaning: errors.Join(err, errors.New(pl.Skipped)).Error()}
	}
	f.Value = fmt.Sprintf("%.3f ms per round trip at 0 ms delay (median of %d probes)", float64(pl.Measured.Microseconds())/1000, pl.Probes)
	f.Meaning = "every run measures it and takes it off the configured delays; an RTT below it cannot be emulated"
	if pl.Measured.Milliseconds() >= 1 {
		f.Problem = true
		f.Meaning = "over a millisecond: the machine wakes slowly (a busy or throttled host); RTTs of a few ms are off by that much"
	}
	return f
}

// lockFinding says whether another run holds the measurement lock; when
// none does, it takes it and returns its release.
func lockFinding() (Finding, func()) {
	f := Finding{Name: "measurement lock", Value: "free", Meaning: "no other run measures on this machine now"}
	unlock, err := lockMachine(context.Background(), slog.New(slog.DiscardHandler), MachineLockDir, time.Nanosecond, false)
	var held *LockHeldError
	switch {
	case errors.As(err, &held):
		return Finding{Name: f.Name, Value: "held by " + held.Holder, Problem: true,
			Meaning: "a run that starts now waits for it (one measurement at a time), or gives up after --wait-lock"}, nil
	case err != nil:
		return Finding{Name: f.Name, Value: "unusable", Problem: true, Meaning: err.Error()}, nil
	}
	return f, unlock
}

// overheadsFinding lists the overheads a load this user's runs measured
// here, which the plan's estimate charges (MachineOverheads).
func overheadsFinding(now time.Time) Finding {
	f := Finding{Name: "overheads a load", Value: "not measured yet",
		Meaning: "the plan's estimate charges another machine's constants until a run (or quicbench plan SPEC --measure-overheads) measures this one's"}
	measured := MachineOverheads(now).Measured
	if len(measured) == 0 {
		return f
	}
	var parts []string
	for k, m := range measured {
		parts = append(parts, fmt.Sprintf("%s %.2f s", k, m.PerLoad.Seconds()))
	}
	slices.Sort(parts)
	f.Value = strings.Join(parts, ", ")
	f.Meaning = "measured by this user's runs here in the last 30 days: the plan's estimate charges them"
	return f
}
