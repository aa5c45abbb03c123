package firefox

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/factor"
)

// TestUserJSQuotesEveryValue renders booleans, numbers and strings as
// Firefox reads them, one preference a line in the order of the names.
func TestUserJSQuotesEveryValue(t *testing.T) {
	got, err := userJS(map[string]any{"b.str": `a "quoted" h;h3=:443`, "a.num": 5, "c.bool": false})
	if err != nil {
		t.Fatal(err)
	}
	want := `user_pref("a.num", 5);
user_pref("b.str", "a \"quoted\" h;h3=:443");
user_pref("c.bool", false);
`
	if string(got) != want {
		t.Errorf("user.js:\n%s\nwant:\n%s", got, want)
	}
	if _, err := userJS(map[string]any{"x": 1.5}); err == nil {
		t.Error("a float preference was rendered")
	}
}

// TestProtocolPrefsForceOneProtocol: h3 maps every host to HTTP/3 on 443
// with no TCP race; h2 turns HTTP/3 off; h1 turns HTTP/2 off too.
func TestProtocolPrefsForceOneProtocol(t *testing.T) {
	h3 := protocolPrefs(factor.H3, []string{"a.test", "b.test"})
	if h3["network.http.http3.alt-svc-mapping-for-testing"] != "a.test;h3=:443,b.test;h3=:443" ||
		h3["network.http.http3.force-use-alt-svc-mapping-for-testing"] != true ||
		h3["network.http.http3.backup_timer_delay"] != noBackupConnectionMs {
		t.Errorf("h3 prefs %v", h3)
	}
	if h2 := protocolPrefs(factor.H2, nil); h2["network.http.http3.enable"] != false || h2["network.http.http2.enabled"] != nil {
		t.Errorf("h2 prefs %v", h2)
	}
	if h1 := protocolPrefs(factor.H1, nil); h1["network.http.http3.enable"] != false || h1["network.http.http2.enabled"] != false {
		t.Errorf("h1 prefs %v", h1)
	}
	for _, p := range factor.Protocols().Values() {
		if _, err := userJS(protocolPrefs(p, []string{"a.test"})); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if _, err := userJS(basePrefs()); err != nil {
		t.Error(err)
	}
}

// TestHostsFileMapsEachHost lists localhost and each host at its address,
// in the order of the names.
func TestHostsFileMapsEachHost(t *testing.T) {
	got := string(hostsFile(map[string]netip.Addr{"b.test": netip.MustParseAddr("198.19.0.11"), "a.test": netip.MustParseAddr("198.19.0.10")}))
	if !strings.HasPrefix(got, "127.0.0.1\tlocalhost\n") || !strings.HasSuffix(got, "198.19.0.10\ta.test\n198.19.0.11\tb.test\n") {
		t.Errorf("hosts file:\n%s", got)
	}
}
