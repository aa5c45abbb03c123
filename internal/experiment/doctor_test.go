package experiment

import (
	"context"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/testenv"
)

// TestDoctorSaysWhatTheMachineOffers: as root, doctor names every fact
// with a value and a meaning; TUN opens here, cgroups count, and with the
// lock free it measures the emulator's latency on a network it builds and
// removes.
func TestDoctorSaysWhatTheMachineOffers(t *testing.T) {
	testenv.RequireRoot(t)
	findings := Doctor(context.Background(), nil)
	byName := map[string]Finding{}
	for _, f := range findings {
		if f.Value == "" || f.Meaning == "" {
			t.Errorf("finding %+v lacks a value or a meaning", f)
		}
		byName[f.Name] = f
	}
	for _, name := range []string{"cores", "frequency governor", "CPU accounting", "client CPU caps", "TUN", "chromium", "firefox", "emulator latency", "measurement lock"} {
		if _, ok := byName[name]; !ok {
			t.Errorf("no finding %q in %+v", name, findings)
		}
	}
	if f := byName["TUN"]; f.Problem {
		t.Errorf("TUN: %+v", f)
	}
	if f := byName["CPU accounting"]; f.Value != "cgroup2" {
		t.Errorf("CPU accounting as root: %+v", f)
	}
	if f := byName["cores"]; !strings.Contains(f.Meaning, "needs 2 cores to stay network-bound") {
		t.Errorf("cores: %+v does not say what the default comparison needs", f)
	}
	if f := byName["client CPU caps"]; f.Problem || !strings.Contains(f.Value, "cgroup cpu controller") {
		t.Errorf("client CPU caps as root here: %+v", f)
	}
	lock, latency := byName["measurement lock"], byName["emulator latency"]
	if lock.Value == "free" && !strings.Contains(latency.Value, "ms per round trip at 0 ms delay") {
		t.Errorf("the lock was free, yet the latency: %+v", latency)
	}
	if lock.Value != "free" && !strings.HasPrefix(lock.Value, "held by") {
		t.Errorf("lock: %+v", lock)
	}
	t.Logf("%+v", findings)
}
