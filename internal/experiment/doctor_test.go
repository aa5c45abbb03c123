package experiment

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/testenv"
	"github.com/quicbench/quicbench/internal/trust"
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
	for _, name := range []string{"cores", "frequency governor", "CPU accounting", "client CPU caps", "TUN", "chromium", "firefox",
		"server nginx", "server quinn", "server quiche", "server caddy", "slurm", "overheads a load", "emulator latency", "measurement lock"} {
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
	if os.Getenv("CI") == "true" {
		// make test installs every feature (a test outside CI may lack one).
		for _, f := range findings {
			if f.Missing || f.Problem && f.Name == "chromium" {
				t.Errorf("after make test's install, %s is %s: %s", f.Name, f.Value, f.Meaning)
			}
		}
	}
	t.Logf("%+v", findings)
}

// TestAMissingServerSaysHowToInstallIt: a server stack whose parts are
// not here is a missing feature with its install command, not a limit of
// the results; one that is here says what asks for it.
func TestAMissingServerSaysHowToInstallIt(t *testing.T) {
	kinds := []server.Kind{
		{Name: "builtin", TCP: factor.ServerGo},
		{Name: "quiche", QUIC: factor.QUICQuiche, Check: func() error { return errors.New("quicbench-quiche not found: build it with 'make servers'") }},
		{Name: "nginx", TCP: factor.ServerNginx, Check: func() error { return nil }},
	}
	got := serverFindings(kinds)
	if len(got) != 2 {
		t.Fatalf("%d findings, want the two stacks that are not quicbench's own: %+v", len(got), got)
	}
	if q := got[0]; q.Name != "server quiche" || q.Value != "missing" || !q.Missing || q.Problem || !strings.Contains(q.Meaning, "make servers") {
		t.Errorf("missing quiche: %+v", q)
	}
	if n := got[1]; n.Value != "ready" || n.Missing || !strings.Contains(n.Meaning, "--server nginx") {
		t.Errorf("nginx here: %+v", n)
	}
}

// TestAnUntrustedProgramIsNotCalledMissing: a chromium that is there but
// another user owns was reported "missing"; doctor says it is not trusted,
// and why, and so for a server stack.
func TestAnUntrustedProgramIsNotCalledMissing(t *testing.T) {
	testenv.RequireRoot(t)
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	theirs := filepath.Join(dir, "chromium")
	if err := os.WriteFile(theirs, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(theirs, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range clientFindings(map[factor.Client]string{factor.ClientChromium: theirs}) {
		if c.Name != "chromium" {
			continue
		}
		found = true
		if c.Value != "not trusted" || !c.Problem || c.Missing || !strings.Contains(c.Meaning, "uid 4242") {
			t.Errorf("an untrusted chromium: %+v", c)
		}
	}
	if !found {
		t.Error("no chromium finding")
	}
	_, err := trust.Executable(theirs)
	got := serverFindings([]server.Kind{{Name: "quiche", QUIC: factor.QUICQuiche, Check: func() error { return err }}})
	if got[0].Value != "not trusted" || got[0].Missing || !got[0].Problem {
		t.Errorf("an untrusted server: %+v", got[0])
	}
}
