package cpuuse

import (
	"os"
	"os/exec"
	"testing"

	"github.com/quicbench/quicbench/internal/proc"
	"github.com/quicbench/quicbench/internal/testenv"
)

// BenchmarkReadPerLoad is the accounting's cost per load: two Reads (the
// measured visit's start and end) of a meter with a browser's and two
// servers' groups, each holding a live process, by cgroups and by /proc.
// scripts/bench-cpu.sh runs it.
func BenchmarkReadPerLoad(b *testing.B) {
	testenv.RequireRoot(b)
	for _, method := range []Method{MethodCgroup, MethodProc} {
		b.Run(string(method), func(b *testing.B) {
			m := benchMeter(b, method)
			for b.Loop() {
				for range 2 {
					if _, err := m.Read(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkSnapshot is one sample of a load's lanes: quicbench's process
// and the browser's and a server's groups, by cgroups and by /proc.
// scripts/bench-cpu.sh runs it.
func BenchmarkSnapshot(b *testing.B) {
	testenv.RequireRoot(b)
	for _, method := range []Method{MethodCgroup, MethodProc} {
		b.Run(string(method), func(b *testing.B) {
			m := benchMeter(b, method)
			for b.Loop() {
				if _, err := m.Snapshot("client-chromium", "server-nginx"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchMeter is a meter of method with three groups, each with a
// sleeping process.
func benchMeter(b *testing.B, method Method) *Meter {
	var m *Meter
	if method == MethodCgroup {
		var err error
		if m, err = Open(nil); err != nil || m.Method() != MethodCgroup {
			b.Skipf("no cgroups here: %v %s", err, m.Why())
		}
	} else {
		machine, err := os.Open("/proc/stat")
		if err != nil {
			b.Fatal(err)
		}
		m = &Meter{method: MethodProc, machine: machine}
	}
	b.Cleanup(m.Close) // after the processes' cleanups, which run first
	for _, name := range []string{"client-chromium", "server-nginx", "server-quinn"} {
		g, err := m.Group(name)
		if err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command("sleep", "600")
		g.Prepare(cmd)
		p, err := proc.Start(cmd)
		if err != nil {
			b.Fatal(err)
		}
		g.Started(p.Pid())
		b.Cleanup(func() { p.Kill() })
	}
	return m
}
