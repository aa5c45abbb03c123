// Package clienttest checks, in the tests of each browser package, what
// every browser client must do with a real browser: here, that a load
// runs in the browser Prepare started ahead of it when that browser fits
// the load, in a new one when it does not, and that Close leaves nothing
// of a prepared browser behind.
package clienttest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/proc"
)

// Browser is a browser client that can prepare its loads.
type Browser interface {
	client.Browser
	client.Preparer
}

// CheckPrepare checks b, whose profiles live in profiles (warm: it keeps a
// browser per protocol), with requests made by request: an h3 load after
// an h3 Prepare runs in the prepared browser, started before the load was
// asked for; an h3 load after an h2 Prepare is verified over h3 (a fresh
// browser's prepared h2 browser gone by then); Close right after a Prepare
// leaves no profile and no process behind.
func CheckPrepare(t *testing.T, b Browser, profiles string, warm bool, request func(factor.Protocol) client.Request) {
	t.Helper()
	prepared := prepareAndWait(t, b, profiles, request(factor.H3))
	res, during := load(t, b, profiles, request(factor.H3))
	if !slices.Equal(during, []string{prepared}) {
		t.Errorf("profiles during the load: %v, want only the prepared browser's %s", during, prepared)
	}
	// The load did not wait for its browser's start: that was done before.
	if overhead := res.WallMs - res.PLTMs; overhead >= res.BrowserStartMs {
		t.Errorf("the load's wall time beyond its PLT, %.0f ms, is not below its browser's start, %.0f ms: the browser was not started ahead",
			overhead, res.BrowserStartMs)
	}
	wrong := prepareAndWait(t, b, profiles, request(factor.H2))
	_, during = load(t, b, profiles, request(factor.H3))
	if !warm && slices.Contains(during, wrong) {
		t.Errorf("the browser prepared for h2 (%s) was still there during an h3 load", wrong)
	}
	b.Prepare(request(factor.H3))
	b.Close()
	if left := profileDirs(t, profiles); len(left) > 0 {
		t.Errorf("profiles left after Close: %v", left)
	}
	if pids := proc.Using(profiles); len(pids) > 0 {
		t.Errorf("processes left after Close: %v", pids)
	}
}

// prepareAndWait prepares b for req and waits until a browser process runs
// on a profile that was not there before; it returns that profile.
func prepareAndWait(t *testing.T, b Browser, profiles string, req client.Request) string {
	t.Helper()
	before := profileDirs(t, profiles)
	b.Prepare(req)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, d := range profileDirs(t, profiles) {
			if !slices.Contains(before, d) && len(proc.Using(d)) > 0 {
				time.Sleep(2 * time.Second) // time to finish starting
				return d
			}
		}
	}
	t.Fatalf("no browser started on a new profile within 30 s of Prepare(%s)", req.Protocol)
	return ""
}

// load makes the load req in b, fails the test unless it was verified over
// req's protocol, and returns it with the profiles that existed when its
// page had loaded.
func load(t *testing.T, b Browser, profiles string, req client.Request) (client.Result, []string) {
	t.Helper()
	var during []string
	req.Loaded = func() { during = profileDirs(t, profiles) }
	res, err := b.Load(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() {
		t.Fatalf("load over %s failed: %s", req.Protocol, res.Failure)
	}
	if res.DocumentProtocol != req.Protocol.NextHop() {
		t.Errorf("document over %q, want %s", res.DocumentProtocol, req.Protocol.NextHop())
	}
	return res, during
}

// profileDirs lists the browser profiles in dir.
func profileDirs(t *testing.T, dir string) []string {
	t.Helper()
	found, err := filepath.Glob(filepath.Join(dir, "profile-*"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, d := range found {
		if info, err := os.Stat(d); err == nil && info.IsDir() {
			dirs = append(dirs, d)
		}
	}
	return dirs
}
