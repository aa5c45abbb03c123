// Package clienttest is what the tests of every browser package share: a
// testbed that serves a site through an emulated link, the request of its
// page, and the checks of a browser's life cycle that every browser must
// pass. Only tests import it.
package clienttest

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/proc"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/testbed"
)

// StartTestbed serves s behind oneWay each way and a downlink of downBps
// bit/s (0: unlimited); the test's cleanup stops it.
func StartTestbed(t *testing.T, s *site.Site, oneWay time.Duration, downBps int64) *testbed.Testbed {
	t.Helper()
	return startTestbed(t, s, emulator.Config{Up: link.Config{Delay: oneWay}, Down: link.Config{Delay: oneWay, RateBitsPerSecond: downBps}})
}

// startTestbed serves s behind the link l; the test's cleanup stops it.
func startTestbed(t testing.TB, s *site.Site, l emulator.Config) *testbed.Testbed {
	t.Helper()
	tb, err := testbed.Start(testbed.Config{
		Stem:   netns.RunName(os.Getpid(), fmt.Sprintf("ct%d", time.Now().UnixNano()%1e6)),
		Link:   l,
		Site:   s,
		RunDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb
}

// Request is a load of s's page from tb over p, every subresource
// expected.
func Request(tb *testbed.Testbed, s *site.Site, p factor.Protocol) client.Request {
	return client.Request{URL: s.DocumentURL(), Protocol: p, Hosts: s.Hosts(), Addrs: tb.Addrs,
		SPKIHash: tb.Certs.SPKIHash, CAFile: tb.Certs.CAFile, Expected: s.Subresources}
}

// WarmBrowserRestartsAfterCrash loads req in b, a warm browser whose
// profiles are under profiles, kills every process of the browser, and
// checks that the second load after that (the first may find it dead)
// starts a new browser and is verified.
func WarmBrowserRestartsAfterCrash(t *testing.T, b client.Browser, profiles string, req client.Request) {
	t.Helper()
	load := func() client.Result {
		res, err := b.Load(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := load(); !res.OK() {
		t.Fatalf("first load: %s", res.Failure)
	}
	pids := proc.Using(profiles)
	if len(pids) == 0 {
		t.Fatal("no running browser uses the profile directory")
	}
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	for deadline := time.Now().Add(5 * time.Second); len(proc.Using(profiles)) > 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	afterCrash := load() // may fail: its browser was dead
	retry := load()
	if !retry.OK() {
		t.Fatalf("after the browser was killed: %q, then %q; want the second load to start a new browser", afterCrash.Failure, retry.Failure)
	}
	t.Logf("the load right after the crash: %q", afterCrash.Failure)
}
