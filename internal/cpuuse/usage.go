package cpuuse

import "time"

// Usage is what each party used between two readings.
type Usage struct {
	// Window is the wall time between the readings.
	Window time.Duration
	// Groups are the groups' times, by name; a group made between the
	// readings counts from zero.
	Groups map[string]Times
	// Self is quicbench's own process's.
	Self Times
	// IdleShare is the machine's idle share of its CPU time over the
	// window, from 0 to 1; -1 when the machine's counters did not move
	// (a window shorter than their 10 ms tick).
	IdleShare float64
	// Waits are the waiting for a CPU between the readings.
	Waits Waits
	// ReservedBusy is the busy time of the CPUs ReserveCPUs kept, all
	// their tasks' (10 ms ticks); 0 without them.
	ReservedBusy time.Duration
	// OwnBusy is the busy time of the run's own CPUs (MeasureOwnCPUs),
	// all their tasks' (10 ms ticks); 0 without them.
	OwnBusy time.Duration
}

// Between is the usage from reading a to reading b.
func Between(a, b Reading) Usage {
	u := Usage{Window: b.At.Sub(a.At), Groups: map[string]Times{}, Self: b.Self.Sub(a.Self), IdleShare: -1, Waits: b.Waits.Sub(a.Waits)}
	for name, t := range b.Groups {
		u.Groups[name] = t.Sub(a.Groups[name])
	}
	u.ReservedBusy = (b.Reserved.Total - b.Reserved.Idle) - (a.Reserved.Total - a.Reserved.Idle)
	u.OwnBusy = (b.Own.Total - b.Own.Idle) - (a.Own.Total - a.Own.Idle)
	if total := b.Machine.Total - a.Machine.Total; total > 0 {
		u.IdleShare = float64(b.Machine.Idle-a.Machine.Idle) / float64(total)
	}
	return u
}

// Cores is t as a share of one CPU over window: 1 is a whole core.
func Cores(t Times, window time.Duration) float64 {
	if window <= 0 {
		return 0
	}
	return float64(t.Total()) / float64(window)
}

// Thresholds of a CPU-bound load by the usage rule, where no wait is
// measured: a busy multi-process browser can use them without waiting.
const (
	// BoundCores is the share of one core a party must use over a load
	// for the load to be CPU-bound by it: the party then waited for the
	// CPU rather than for the network for most of the load.
	BoundCores = 0.8
	// BoundIdle is the machine's idle share below which a load is
	// CPU-bound by the machine: every core was busy, whoever used them.
	BoundIdle = 0.1
)

// BoundWait is the share of a load a party must have waited for a CPU,
// beyond what a cap of its own imposed, for the load to be CPU-bound by
// it. Chosen from the demo comparison on a one-core client, quiet and
// beside CPU hogs (BENCHMARKS.md, "CPU waiting"): quiet, 1 of 30 loads
// waited that long (the longest 0.115 of its load, quicbench's threads),
// beside a hog on both cores 29 of 30.
const BoundWait = 0.10

// Waiting is a party of a load and how long it waited for a CPU over the
// load, beyond what its own cap imposed; negative when not measured.
type Waiting struct {
	Name string
	Wait time.Duration
}

// BoundByWait names what made a load CPU-bound by the measured wait: the
// party that waited longest if it waited at least BoundWait of window,
// else "machine" when no party's wait was measured and the machine's
// (negative: unmeasured) was at least BoundWait of it; "" when neither.
// ok is false when nothing was measured (then BoundBy's usage rule is all
// there is).
func BoundByWait(parties []Waiting, machine, window time.Duration) (bound string, ok bool) {
	if window <= 0 {
		return "", false
	}
	busiest, most, measured := "", time.Duration(float64(window)*BoundWait), false
	for _, p := range parties {
		if p.Wait < 0 {
			continue
		}
		measured = true
		if p.Wait >= most {
			busiest, most = p.Name, p.Wait
		}
	}
	switch {
	case measured:
		return busiest, true
	case machine >= 0:
		if float64(machine) >= float64(window)*BoundWait {
			return "machine", true
		}
		return "", true
	}
	return "", false
}

// Party is a party of a load and its usage, for BoundBy.
type Party struct {
	Name string
	Used Times
}

// BoundBy names what made a load CPU-bound: the busiest of parties if it
// used at least BoundCores of a core over window, else "machine" when the
// machine's idle share was below BoundIdle; "" when neither.
func BoundBy(parties []Party, window time.Duration, idleShare float64) string {
	busiest, most := "", BoundCores
	for _, p := range parties {
		if c := Cores(p.Used, window); c >= most {
			busiest, most = p.Name, c
		}
	}
	if busiest != "" {
		return busiest
	}
	if idleShare >= 0 && idleShare < BoundIdle {
		return "machine"
	}
	return ""
}
