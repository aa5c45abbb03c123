package experiment

import (
	"time"

	"github.com/quicbench/quicbench/internal/cpuuse"
	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/testbed"
)

// cpuWindow reads the parties' CPU when a load's measured visit starts
// (begin) and when it has ended (end), and between them samples its lanes
// (the parties' CPU and the link's bytes) every laneEvery.
type cpuWindow struct {
	meter    *cpuuse.Meter
	emulator *emulator.Emulator
	// client and server are the groups of the load's client and of the
	// server stack that serves its protocol; "" for one in quicbench's
	// process.
	client, server string
	// serverName is that server stack's name.
	serverName string
	// confined says the client runs on CPUs of its own (splitCPUs).
	confined bool

	start, end      cpuuse.Reading
	busyStart, busy time.Duration
	// began and ended say the readings were taken; a failed reading
	// leaves the load without CPU columns.
	began, ended bool

	// laneEvery is how often the lanes are read (0: not at all); lanes
	// reads them during the visit, and samples are what it read.
	laneEvery time.Duration
	lanes     *sampling
	samples   []results.Sample
}

// newCPUWindow prepares the window of a load of client c over protocol p
// on tb, its lanes read every laneEvery (0: none); nil without a meter.
func newCPUWindow(meter *cpuuse.Meter, tb *testbed.Testbed, c factor.Client, group *cpuuse.Group, p factor.Protocol, laneEvery time.Duration) *cpuWindow {
	if meter == nil {
		return nil
	}
	ownProcess := group != nil
	w := &cpuWindow{meter: meter, emulator: tb.Emulator, confined: group.Confined(), laneEvery: laneEvery}
	if ownProcess {
		w.client = clientGroup(c)
	}
	name, own := tb.ServerOf(p)
	w.serverName = name
	if own {
		w.server = testbed.ServerGroup(name)
	}
	return w
}

// clientGroup is the CPU accounting group of client c's processes.
func clientGroup(c factor.Client) string { return "client-" + string(c) }

// begin reads the start of the window.
func (w *cpuWindow) begin() {
	if w == nil {
		return
	}
	var err error
	w.start, err = w.meter.Read()
	w.busyStart = w.emulator.Busy()
	w.began, w.ended = err == nil, false
	w.close()
	if w.laneEvery > 0 {
		w.lanes = startSampling(w.readLanes, w.laneEvery)
	}
}

// finish reads the end of the window and the lanes' last sample, once.
func (w *cpuWindow) finish() {
	if w == nil || !w.began || w.ended {
		return
	}
	w.samples = w.lanes.stop()
	w.lanes = nil
	var err error
	w.end, err = w.meter.Read()
	w.busy = w.emulator.Busy() - w.busyStart
	w.ended = err == nil
}

// close stops the lanes' sampling if a load ended without finish (it
// failed): its samples are dropped.
func (w *cpuWindow) close() {
	if w != nil && w.lanes != nil {
		w.lanes.stop()
		w.lanes = nil
	}
}

// readLanes reads the client's and the server's groups, quicbench's
// process and the bytes the link delivered each way.
func (w *cpuWindow) readLanes() (laneReading, error) {
	snap, err := w.meter.Snapshot(w.client, w.server)
	if err != nil {
		return laneReading{}, err
	}
	up, down := w.emulator.WrittenBytes()
	r := laneReading{self: snap.Self.Total(), up: up, down: down}
	var t cpuuse.Times
	t, r.hasClient = snap.Groups[w.client]
	r.client = t.Total()
	t, r.hasServer = snap.Groups[w.server]
	r.server = t.Total()
	return r, nil
}

// laneSamples are the lanes the window read, once finished; nil when
// it read none.
func (w *cpuWindow) laneSamples() []results.Sample {
	if w == nil || !w.ended {
		return nil
	}
	return w.samples
}

// record is what the window measured, as the trial's columns; empty when
// it was not read whole.
func (w *cpuWindow) record() results.CPU {
	if w == nil || !w.ended {
		return results.CPU{}
	}
	u := cpuuse.Between(w.start, w.end)
	rec := results.CPU{CPUMethod: string(w.meter.Method()), ServerProcess: w.serverName,
		CPUWindowMs: results.F(durationMs(u.Window)), EmulatorBusyMs: results.F(durationMs(w.busy)),
		QuicbenchCPUUserMs: results.F(durationMs(u.Self.User)), QuicbenchCPUSystemMs: results.F(durationMs(u.Self.System))}
	parties := []cpuuse.Party{{Name: "quicbench", Used: u.Self}}
	if w.client != "" {
		t := u.Groups[w.client]
		rec.ClientCPUUserMs, rec.ClientCPUSystemMs = results.F(durationMs(t.User)), results.F(durationMs(t.System))
		parties = append(parties, cpuuse.Party{Name: "client", Used: t})
	}
	if w.server != "" {
		t := u.Groups[w.server]
		rec.ServerCPUUserMs, rec.ServerCPUSystemMs = results.F(durationMs(t.User)), results.F(durationMs(t.System))
		parties = append(parties, cpuuse.Party{Name: "server", Used: t})
	}
	if u.IdleShare >= 0 {
		rec.IdlePct = results.F(100 * u.IdleShare)
	}
	rec.CPUWaits = w.waits(u)
	bound, measured := cpuuse.BoundByWait(w.waiting(u), u.Waits.Machine, u.Window)
	if !measured {
		bound = cpuuse.BoundBy(parties, u.Window, u.IdleShare)
	}
	rec.CPUBound = bound
	return rec
}

// waiting are the parties' waits for a CPU beyond their caps, for the
// verdict: the client's pressure less its cap's throttling (or, on CPUs
// of its own, the time others used them), the server's pressure,
// quicbench's (its own cgroup's pressure, or its threads' run-queue
// time); -1 where unmeasured.
func (w *cpuWindow) waiting(u cpuuse.Usage) []cpuuse.Waiting {
	d := u.Waits
	out := []cpuuse.Waiting{{Name: "quicbench", Wait: d.Self}}
	if w.client != "" {
		wait, ok := d.Groups[w.client]
		switch {
		case w.confined:
			wait = othersOnClientCPUs(u, w.client)
		case !ok:
			wait = -1
		default:
			wait = max(0, wait-d.Throttled[w.client])
		}
		out = append(out, cpuuse.Waiting{Name: "client", Wait: wait})
	}
	if w.server != "" {
		wait, ok := d.Groups[w.server]
		if !ok {
			wait = -1
		}
		out = append(out, cpuuse.Waiting{Name: "server", Wait: wait})
	}
	return out
}

// waits are the window's waiting for a CPU as the trial's columns.
func (w *cpuWindow) waits(u cpuuse.Usage) results.CPUWaits {
	d := u.Waits
	var out results.CPUWaits
	ms := func(d time.Duration, ok bool) *float64 {
		if !ok || d < 0 {
			return nil
		}
		return results.F(durationMs(d))
	}
	if w.client != "" {
		wait, ok := d.Groups[w.client]
		out.ClientCPUWaitMs = ms(wait, ok)
		throttled, ok := d.Throttled[w.client]
		out.ClientCPUThrottledMs = ms(throttled, ok)
		if w.confined {
			out.ClientCPUsOthersMs = ms(othersOnClientCPUs(u, w.client), true)
		}
	}
	if w.server != "" {
		wait, ok := d.Groups[w.server]
		out.ServerCPUWaitMs = ms(wait, ok)
	}
	out.QuicbenchCPUWaitMs = ms(d.Self, true)
	out.MachineCPUWaitMs = ms(d.Machine, true)
	if w.meter.HasOwnCPUs() {
		out.CoresOthersMs = ms(w.othersOnOwnCores(u), true)
	}
	return out
}

// othersOnOwnCores is the CPU time tasks other than the load's parties
// (quicbench, the client's group, the server's) used on the run's own
// CPUs over the window (never below 0).
func (w *cpuWindow) othersOnOwnCores(u cpuuse.Usage) time.Duration {
	ours := u.Self.Total() + u.Groups[w.client].Total() + u.Groups[w.server].Total()
	return max(0, u.OwnBusy-ours)
}

// othersOnClientCPUs is the CPU time tasks other than the client group's
// used on the client's own CPUs over the window (never below 0).
func othersOnClientCPUs(u cpuuse.Usage, client string) time.Duration {
	return max(0, u.ReservedBusy-u.Groups[client].Total())
}

// durationMs is d in milliseconds.
func durationMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
