package cpuuse

import (
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/proc"
)

func TestParseCPUStat(t *testing.T) {
	got, err := parseCPUStat([]byte("usage_usec 1500\nuser_usec 1000\nsystem_usec 500\nnice_usec 0\n"))
	if err != nil || got.User != time.Millisecond || got.System != 500*time.Microsecond {
		t.Errorf("got %+v, %v", got, err)
	}
	if _, err := parseCPUStat([]byte("usage_usec 1500\n")); err == nil {
		t.Error("a cpu.stat without user_usec read without error")
	}
}

func TestParseProcStat(t *testing.T) {
	// user nice system idle iowait irq softirq steal guest guest_nice
	got, err := parseProcStat([]byte("cpu  100 5 50 800 20 3 2 20 7 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n"))
	tick := time.Second / proc.TicksPerSecond
	if err != nil || got.Idle != 820*tick || got.Total != 1000*tick {
		t.Errorf("got %+v, %v; want idle 820 ticks of 1000", got, err)
	}
	for _, bad := range []string{"", "intr 1 2 3", "cpu 1 2 x 4 5 6 7 8"} {
		if _, err := parseProcStat([]byte(bad)); err == nil {
			t.Errorf("%q read without error", bad)
		}
	}
}

func TestParseMountLine(t *testing.T) {
	mount, root, ok := parseMountLine("35 25 0:30 / /sys/fs/cgroup/unified rw,nosuid shared:9 - cgroup2 cgroup2 rw", "")
	if !ok || mount != "/sys/fs/cgroup/unified" || root != "/" {
		t.Errorf("got %q %q %v", mount, root, ok)
	}
	if mount, _, ok := parseMountLine("36 25 0:31 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu,cpuacct", "cpu"); !ok || mount != "/sys/fs/cgroup/cpu" {
		t.Errorf("the v1 cpu mount: %q %v", mount, ok)
	}
	if _, _, ok := parseMountLine("36 25 0:31 / /sys/fs/cgroup/cpuacct rw - cgroup cgroup rw,cpuacct", "cpu"); ok {
		t.Error("cpuacct taken for cpu")
	}
	if _, _, ok := parseMountLine("36 25 0:31 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu", ""); ok {
		t.Error("a cgroup v1 mount taken for cgroup2")
	}
}

// TestTreeTicks: a root's descendants count, with the children they
// waited for; other processes do not, nor does a cycle loop forever.
func TestTreeTicks(t *testing.T) {
	list := []proc.Info{
		{PID: 1, PPID: 0, CPUTicks: 1000},
		{PID: 10, PPID: 1, CPUTicks: 5, ChildTicks: 1},  // root
		{PID: 11, PPID: 10, CPUTicks: 7},                // child
		{PID: 12, PPID: 11, CPUTicks: 3, ChildTicks: 2}, // grandchild
		{PID: 20, PPID: 1, CPUTicks: 100},               // another tree
		{PID: 30, PPID: 31, CPUTicks: 9},                // a cycle
		{PID: 31, PPID: 30, CPUTicks: 9},
	}
	if got := treeTicks(list, []int{10}); got != 18 {
		t.Errorf("tree of 10: %d ticks, want 18", got)
	}
	if got := treeTicks(list, nil); got != 0 {
		t.Errorf("no roots: %d", got)
	}
}

func TestBetweenAndBoundBy(t *testing.T) {
	at := time.Unix(1000, 0)
	a := Reading{At: at, Groups: map[string]Times{"client": {User: time.Second}}, Self: Times{User: time.Second},
		Machine: MachineTimes{Idle: 10 * time.Second, Total: 20 * time.Second}}
	b := Reading{At: at.Add(200 * time.Millisecond), Groups: map[string]Times{"client": {User: 1100 * time.Millisecond, System: 70 * time.Millisecond}, "server": {User: 20 * time.Millisecond}},
		Self: Times{User: 1050 * time.Millisecond}, Machine: MachineTimes{Idle: 10*time.Second + 100*time.Millisecond, Total: 20*time.Second + 400*time.Millisecond}}
	u := Between(a, b)
	if u.Window != 200*time.Millisecond || u.Groups["client"] != (Times{User: 100 * time.Millisecond, System: 70 * time.Millisecond}) ||
		u.Groups["server"] != (Times{User: 20 * time.Millisecond}) || u.Self.Total() != 50*time.Millisecond || u.IdleShare != 0.25 {
		t.Fatalf("usage %+v", u)
	}
	parties := []Party{{"client", u.Groups["client"]}, {"server", u.Groups["server"]}, {"quicbench", u.Self}}
	if got := BoundBy(parties, u.Window, u.IdleShare); got != "client" { // 0.85 of a core
		t.Errorf("bound by %q, want client", got)
	}
	parties[0].Used = Times{User: 150 * time.Millisecond}
	if got := BoundBy(parties, u.Window, u.IdleShare); got != "" {
		t.Errorf("bound by %q at 0.75 of a core and 25 %% idle, want none", got)
	}
	if got := BoundBy(parties, u.Window, 0.05); got != "machine" {
		t.Errorf("bound by %q at 5 %% idle, want machine", got)
	}
	if got := BoundBy(parties, u.Window, -1); got != "" {
		t.Errorf("bound by %q with no idle share known", got)
	}
	still := Between(a, Reading{At: at.Add(time.Millisecond), Machine: a.Machine})
	if still.IdleShare != -1 {
		t.Errorf("idle share %v of a window the counters did not see, want -1", still.IdleShare)
	}
}

func TestParsePressure(t *testing.T) {
	got, err := parsePressure([]byte("some avg10=0.00 avg60=0.65 avg300=8.64 total=3273134121\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"))
	if err != nil || got != 3273134121*time.Microsecond {
		t.Errorf("got %v, %v", got, err)
	}
	for _, bad := range []string{"", "full avg10=0 total=5", "some avg10=0.00 total=x", "some total=-3"} {
		if _, err := parsePressure([]byte(bad)); err == nil {
			t.Errorf("%q read without error", bad)
		}
	}
}

func TestParseSchedstat(t *testing.T) {
	got, err := parseSchedstat([]byte("198098255 25391550 819\n"))
	if err != nil || got != 25391550 {
		t.Errorf("got %v, %v", got, err)
	}
	for _, bad := range []string{"", "5", "1 x 2"} {
		if _, err := parseSchedstat([]byte(bad)); err == nil {
			t.Errorf("%q read without error", bad)
		}
	}
}

func TestWaitsSubKeepsOnlyWhatBothRead(t *testing.T) {
	a := Waits{Groups: map[string]time.Duration{"c": 10, "s": 5}, Throttled: map[string]time.Duration{}, Self: 7, Machine: -1}
	b := Waits{Groups: map[string]time.Duration{"c": 25, "new": 3}, Throttled: map[string]time.Duration{"c": 4}, Self: 9, Machine: 100}
	d := b.Sub(a)
	if d.Groups["c"] != 15 || len(d.Groups) != 1 || d.Throttled["c"] != 4 || d.Self != 2 || d.Machine != -1 {
		t.Errorf("got %+v", d)
	}
}

func TestBoundByWait(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		parties []Waiting
		machine time.Duration
		want    string
		ok      bool
	}{
		{[]Waiting{{"client", 50 * ms}, {"server", 10 * ms}}, 900 * ms, "", true},        // the machine's wait is the capped client's
		{[]Waiting{{"client", 200 * ms}, {"quicbench", 300 * ms}}, 0, "quicbench", true}, // the longest wait names it
		{[]Waiting{{"client", 100 * ms}}, -1, "client", true},                            // exactly the share
		{[]Waiting{{"client", -1}}, 400 * ms, "machine", true},                           // only the machine measured
		{[]Waiting{{"client", -1}}, 99 * ms, "", true},
		{[]Waiting{{"client", -1}}, -1, "", false},
	} {
		got, ok := BoundByWait(c.parties, c.machine, time.Second)
		if got != c.want || ok != c.ok {
			t.Errorf("BoundByWait(%v, %v) = %q, %v; want %q, %v", c.parties, c.machine, got, ok, c.want, c.ok)
		}
	}
	if _, ok := BoundByWait(nil, time.Second, 0); ok {
		t.Error("an empty window judged")
	}
}
