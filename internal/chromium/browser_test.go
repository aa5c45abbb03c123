package chromium

import (
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/factor"
)

// TestWarmKeyTellsFlagsApart: two requests share a warm browser only if
// every value its flags are made of is the same.
func TestWarmKeyTellsFlagsApart(t *testing.T) {
	base := client.Request{Protocol: factor.H3, Addrs: map[string]netip.Addr{"a.test": netip.MustParseAddr("198.19.0.10")}, SPKIHash: "abc=", Hosts: []string{"a.test"}}
	same := base
	same.Hosts = []string{"a.test"} // equal values, another slice
	same.Addrs = map[string]netip.Addr{"a.test": netip.MustParseAddr("198.19.0.10")}
	if warmKey(same) != warmKey(base) {
		t.Fatal("equal requests gave two keys")
	}
	for name, change := range map[string]func(*client.Request){
		"protocol": func(r *client.Request) { r.Protocol = factor.H2 },
		"addrs":    func(r *client.Request) { r.Addrs = map[string]netip.Addr{"a.test": netip.MustParseAddr("198.19.0.11")} },
		"spki":     func(r *client.Request) { r.SPKIHash = "xyz=" },
		"hosts":    func(r *client.Request) { r.Hosts = []string{"a.test", "b.test"} },
	} {
		other := base
		change(&other)
		if warmKey(other) == warmKey(base) {
			t.Errorf("a request with another %s shares the warm browser's key", name)
		}
	}
}

// TestResolverRulesMapEveryHostInOrder: each host to its address, in the
// order of the names, and every other name to nothing.
func TestResolverRulesMapEveryHostInOrder(t *testing.T) {
	got := ResolverRules(map[string]netip.Addr{"b.test": netip.MustParseAddr("198.19.0.11"), "a.test": netip.MustParseAddr("198.19.0.10")})
	if want := "MAP a.test 198.19.0.10,MAP b.test 198.19.0.11,MAP * ~NOTFOUND"; got != want {
		t.Errorf("rules %q, want %q", got, want)
	}
}

// TestRemoveStaleTemp removes the temporary directories of processes that
// are gone and keeps those of live ones.
func TestRemoveStaleTemp(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale, err := os.MkdirTemp("", tempPrefix(dead.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	live, err := os.MkdirTemp("", tempPrefix(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(live)
	link := filepath.Join(os.TempDir(), tempPrefix(dead.Process.Pid)+"link")
	target := t.TempDir()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(link)
	removed := RemoveStaleTemp()
	if _, err := os.Lstat(link); err != nil || slices.Contains(removed, link) {
		t.Errorf("a link named like a dead process's directory was removed (cleanup would call it a directory): %v", err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) || !slices.Contains(removed, stale) {
		t.Errorf("the dead process's %s: %v, removed %v", stale, err, removed)
	}
	if _, err := os.Stat(live); err != nil || !slices.Contains(TempDirs(), live) {
		t.Errorf("this process's %s: %v, TempDirs %v", live, err, TempDirs())
	}
}

// TestHasArgReadsRewrittenCommandLines: a browser's own argument list and
// a child's, rewritten into one argument, both have the flag; a longer
// value that starts with it is another flag.
func TestHasArgReadsRewrittenCommandLines(t *testing.T) {
	want := "--user-data-dir=/p/profile-1"
	for _, c := range []struct {
		cmdline []string
		has     bool
	}{
		{[]string{"/usr/lib/chromium/chromium", "--headless", want, "about:blank"}, true},
		{[]string{"/usr/lib/chromium/chromium --type=renderer " + want + " --no-sandbox"}, true},
		{[]string{"/usr/lib/chromium/chromium --type=utility " + want}, true},
		{[]string{"/usr/lib/chromium/chromium --type=renderer " + want + "0 --no-sandbox"}, false},
		{[]string{"/usr/lib/chromium/chromium", want + "0"}, false},
		{[]string{"/usr/lib/chromium/chromium --x=" + want}, false},
		{nil, false},
	} {
		if got := hasArg(c.cmdline, want); got != c.has {
			t.Errorf("hasArg(%q) = %v, want %v", c.cmdline, got, c.has)
		}
	}
}

// TestFlagsAreOneListForBothStarts: the flags chromedp is given and the
// command line's arguments come from one list, each flag once.
func TestFlagsAreOneListForBothStarts(t *testing.T) {
	req := client.Request{Protocol: factor.H1, Addrs: map[string]netip.Addr{"a.test": netip.MustParseAddr("198.19.0.10")}, SPKIHash: "abc=", Hosts: []string{"a.test"}}
	flags := requestFlags(req)
	if len(Flags(req)) != len(flags) {
		t.Fatalf("%d chromedp options from %d flags", len(Flags(req)), len(flags))
	}
	got := args(flags)
	for _, want := range []string{"--headless", "--disable-quic", "--disable-http2", "--ignore-certificate-errors-spki-list=abc=",
		"--disable-features=" + disabledFeatures, "--host-resolver-rules=MAP a.test 198.19.0.10,MAP * ~NOTFOUND"} {
		if !slices.Contains(got, want) {
			t.Errorf("the arguments %q lack %q", got, want)
		}
	}
	seen := map[string]bool{}
	for _, f := range flags {
		if seen[f.name] {
			t.Errorf("flag --%s given twice: only the last would count", f.name)
		}
		seen[f.name] = true
	}
}

// TestDiscoveryForcesNothing: under a discovery rule QUIC is on for every
// protocol and no origin a page uses is forced; the hosts are named on
// UnusedPort only, so that Chromium accepts their certificate over QUIC.
func TestDiscoveryForcesNothing(t *testing.T) {
	for _, p := range factor.Protocols().Values() {
		req := client.Request{Protocol: p, Discovery: factor.DiscoveryAltSvc, Hosts: []string{"a.test", "b.test"}, SPKIHash: "abc="}
		flags := map[string]string{}
		for _, f := range requestFlags(req) {
			flags[f.name] = f.value
		}
		if _, off := flags["disable-quic"]; off {
			t.Errorf("%s: QUIC is off", p)
		}
		if got := flags["origin-to-force-quic-on"]; got != "a.test:1,b.test:1" {
			t.Errorf("%s: forced %q, want only the unused port", p, got)
		}
		if _, noH2 := flags["disable-http2"]; noH2 != (p == factor.H1) {
			t.Errorf("%s: HTTP/2 off %v", p, noH2)
		}
	}
	forced := client.Request{Protocol: factor.H3, Hosts: []string{"a.test"}}
	alt := forced
	alt.Discovery = factor.DiscoveryAltSvc
	if warmKey(forced) == warmKey(alt) {
		t.Error("a forced and a discovering browser share a warm key")
	}
}

// TestAResolvingBrowserIsGivenNoAddresses: with dns resolved the hosts
// are not mapped in the browser, whose own DNS client and HTTPS records
// are on, in the one --enable-features Chromium reads.
func TestAResolvingBrowserIsGivenNoAddresses(t *testing.T) {
	req := client.Request{Protocol: factor.H3, DNS: factor.DNSResolved, Addrs: map[string]netip.Addr{"a.test": netip.MustParseAddr("198.19.0.10")}}
	features := 0
	for _, f := range requestFlags(req) {
		switch f.name {
		case "host-resolver-rules":
			t.Errorf("resolver rules %q", f.value)
		case "enable-features":
			features++
			if !strings.Contains(f.value, "NetworkService") || !strings.Contains(f.value, "UseDnsHttpsSvcbAlpn") {
				t.Errorf("features %q", f.value)
			}
		}
	}
	if features != 1 {
		t.Errorf("%d --enable-features flags", features)
	}
	pinned := req
	pinned.DNS = factor.DNSPinned
	if warmKey(pinned) == warmKey(req) {
		t.Error("a pinned and a resolving browser share a warm key")
	}
}
