package experiment

import (
	"time"

	"github.com/quicbench/quicbench/internal/cpuuse"
	"github.com/quicbench/quicbench/internal/results"
)

// laneInterval is how often a load's lanes are read with meter m: every
// 100 ms where cgroups count the parties, every 250 ms where /proc's
// process trees do; 0, no lanes, when off. A reading costs about 10 µs of
// CPU by cgroups and 1.2 ms by /proc (scripts/bench-cpu.sh), but waking
// quicbench's process for it costs this VM about 160 µs more: at 50 ms,
// quicbench used 8 ms more CPU in a load of a second
// (scripts/bench-lanes.sh).
func laneInterval(m *cpuuse.Meter, off bool) time.Duration {
	switch {
	case off || m == nil:
		return 0
	case m.Method() == cpuuse.MethodCgroup:
		return 100 * time.Millisecond
	}
	return 250 * time.Millisecond
}

// laneReading is what the lanes read at one moment, each count since a
// fixed start: CPU time of the client's and the server's processes (when
// in groups of their own: has*) and of quicbench's, bytes each direction
// of the link delivered.
type laneReading struct {
	client, server, self time.Duration
	hasClient, hasServer bool
	up, down             int64
}

// since is r counted from base, at at since the sampling started, as a
// sample.
func (r laneReading) since(base laneReading, at time.Duration) results.Sample {
	s := results.Sample{AtMs: durationMs(at), QuicbenchCPUMs: durationMs(r.self - base.self),
		UpBytes: r.up - base.up, DownBytes: r.down - base.down}
	if r.hasClient && base.hasClient {
		s.ClientCPUMs = results.F(durationMs(r.client - base.client))
	}
	if r.hasServer && base.hasServer {
		s.ServerCPUMs = results.F(durationMs(r.server - base.server))
	}
	return s
}

// sampling reads a load's lanes every interval from its start until
// stopped, on a goroutine of its own.
type sampling struct {
	read  func() (laneReading, error)
	start time.Time
	base  laneReading
	// samples are the readings so far, the goroutine's until done is
	// closed.
	samples []results.Sample
	stopped chan struct{}
	done    chan struct{}
}

// startSampling takes the base reading now and starts reading every
// interval; nil if the base could not be read.
func startSampling(read func() (laneReading, error), every time.Duration) *sampling {
	base, err := read()
	if err != nil {
		return nil
	}
	s := &sampling{read: read, start: time.Now(), base: base, stopped: make(chan struct{}), done: make(chan struct{})}
	go s.run(every)
	return s
}

// run takes a sample every interval until stopped.
func (s *sampling) run(every time.Duration) {
	defer close(s.done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-s.stopped:
			return
		case <-tick.C:
			s.take()
		}
	}
}

// take reads a sample; a failed reading is left out.
func (s *sampling) take() {
	r, err := s.read()
	if err != nil {
		return
	}
	s.samples = append(s.samples, r.since(s.base, time.Since(s.start)))
}

// stop ends the sampling with a last sample and returns every sample in
// time order; nil for a nil sampling. It may be called once.
func (s *sampling) stop() []results.Sample {
	if s == nil {
		return nil
	}
	close(s.stopped)
	<-s.done
	s.take()
	return s.samples
}
