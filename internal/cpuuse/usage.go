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
}

// Between is the usage from reading a to reading b.
func Between(a, b Reading) Usage {
	u := Usage{Window: b.At.Sub(a.At), Groups: map[string]Times{}, Self: b.Self.Sub(a.Self), IdleShare: -1, Waits: b.Waits.Sub(a.Waits)}
	for name, t := range b.Groups {
		u.Groups[name] = t.Sub(a.Groups[name])
	}
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

// Thresholds of a CPU-bound load.
const (
	// BoundCores is the share of one core a party must use over a load
	// for the load to be CPU-bound by it: the party then waited for the
	// CPU rather than for the network for most of the load.
	BoundCores = 0.8
	// BoundIdle is the machine's idle share below which a load is
	// CPU-bound by the machine: every core was busy, whoever used them.
	BoundIdle = 0.1
)

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
