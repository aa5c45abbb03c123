package factor

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestEnumParseAndMessages(t *testing.T) {
	if v, err := Visits().Parse("repeat"); err != nil || v != RepeatVisit {
		t.Errorf("Parse(repeat) = %q, %v", v, err)
	}
	_, err := Visits().Parse("second")
	if err == nil || err.Error() != `visit "second" is unknown: use first or repeat` {
		t.Errorf("error %v", err)
	}
	_, err = Protocols().Parse("h4")
	if err == nil || err.Error() != `protocol "h4" is unknown: use h1, h2 or h3` {
		t.Errorf("error %v", err)
	}
	if got := Servers().Usage(); !strings.HasPrefix(got, "go (Go's net/http") || !strings.Contains(got, ", nginx (") || !strings.Contains(got, " or caddy (") {
		t.Errorf("usage %q", got)
	}
	// Every enumerated factor parses each of its levels and nothing else.
	checkEnum(t, Protocols())
	checkEnum(t, Visits())
	checkEnum(t, Caches())
	checkEnum(t, Servers())
	checkEnum(t, Stacks())
	checkEnum(t, Clients())
	checkEnum(t, Browsers())
	checkEnum(t, PageKinds())
}

func checkEnum[T ~string](t *testing.T, e Enum[T]) {
	t.Helper()
	if e.What == "" || len(e.Levels) == 0 {
		t.Fatalf("enum %+v has no name or levels", e)
	}
	for _, l := range e.Levels {
		if v, err := e.Parse(string(l.Name)); err != nil || v != l.Name || l.Meaning == "" {
			t.Errorf("%s %q: parsed %q, %v; meaning %q", e.What, l.Name, v, err, l.Meaning)
		}
		if _, err := e.Parse(strings.ToUpper(string(l.Name)) + "x"); err == nil {
			t.Errorf("%s accepts %q", e.What, strings.ToUpper(string(l.Name))+"x")
		}
	}
}

func TestParseList(t *testing.T) {
	got, err := ParseList(Protocols(), "h3, h1")
	if err != nil || len(got) != 2 || got[0] != H3 || got[1] != H1 {
		t.Errorf("got %v, %v", got, err)
	}
	for in, want := range map[string]string{
		"h1,h1": "protocol h1 is listed twice",
		"h1,h4": `protocol "h4" is unknown`,
		"":      `protocol "" is unknown`,
	} {
		if _, err := ParseList(Protocols(), in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
}

func TestPages(t *testing.T) {
	for in, want := range map[string]Page{
		"synthetic:32x10KB":                         {Kind: PageSynthetic, Objects: 32, ObjectBytes: 10_000},
		"synthetic:2x100B":                          {Kind: PageSynthetic, Objects: 2, ObjectBytes: 100},
		"synthetic:1x1MiB":                          {Kind: PageSynthetic, Objects: 1, ObjectBytes: 1 << 20},
		"synthetic:3x1500":                          {Kind: PageSynthetic, Objects: 3, ObjectBytes: 1500},
		"web2024:7":                                 {Kind: PageWeb2024, Number: 7, CorpusSeed: 1},
		"web2024:100@3":                             {Kind: PageWeb2024, Number: 100, CorpusSeed: 3},
		"synthetic:8x10KB+wait200ms":                {Kind: PageSynthetic, Objects: 8, ObjectBytes: 10_000, ServerWait: 200 * time.Millisecond},
		"url:https://www.example.test/shop?x=1#top": {Kind: PageLive, URL: "https://www.example.test/shop?x=1"},
		"url:https://WWW.Example.test":              {Kind: PageLive, URL: "https://www.example.test/"},
	} {
		p, err := ParsePage(in)
		if err != nil || p != want {
			t.Errorf("%s: %+v, %v", in, p, err)
		}
		if again, err := ParsePage(p.String()); err != nil || again != p {
			t.Errorf("%s: String %q does not parse back: %+v, %v", in, p.String(), again, err)
		}
	}
	if p, _ := ParsePage("synthetic:3x1500"); p.String() != "synthetic:3x1500B" || p.ObjectsBytes() != 4500 {
		t.Errorf("%q, %d bytes", p.String(), p.ObjectsBytes())
	}
	for in, want := range map[string]string{
		"cnn.com":                      "use synthetic:NxSIZE",
		"recorded:32x10KB":             "is not supported",
		"synthetic:0x10KB":             "object count 0 is outside 1 to 10000",
		"synthetic:10KB":               "lacks the x",
		"synthetic:ax10KB":             "is not a whole number",
		"synthetic:1x10":               "object size 10 B is outside 83 B",
		"synthetic:1x2GB":              "is outside 83 B",
		"synthetic:1x10mbit":           "synthetic:1x10mbit",
		"synthetic:-1x10KB":            "object count -1",
		"synthetic:3x":                 "synthetic:3x",
		"synthetic:100000x1":           "object count 100000",
		"synthetic:2x2GiB":             "is outside 83 B",
		"":                             "is not supported",
		"web2024:0":                    "page number 0 is outside 1 to 100000",
		"web2024:x":                    "page number \"x\" is not a whole number",
		"web2024:3@-1":                 "corpus seed \"-1\"",
		"web2024:3@":                   "corpus seed \"\"",
		"synthetic:8x10KB+wait":        "server wait \"\" is not a positive duration",
		"synthetic:8x10KB+wait-1s":     "is not a positive duration",
		"synthetic:8x10KB+wait200":     "is not a positive duration",
		"synthetic:8x10KB+wait11s":     "server wait 11s is outside 0 to 10s",
		"url:http://www.example.test/": "is not https",
		"url:www.example.test":         "is not https",
	} {
		if _, err := ParsePage(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", in, err, want)
		}
	}
}

func TestOrigins(t *testing.T) {
	if n, err := ParseOrigins("4"); n != 4 || err != nil {
		t.Errorf("4: %d, %v", n, err)
	}
	for _, in := range []string{"0", "65", "x", "-1"} {
		if _, err := ParseOrigins(in); err == nil {
			t.Errorf("%s accepted", in)
		}
	}
}

func TestVisitLoads(t *testing.T) {
	if FirstVisit.Loads() != 1 || RepeatVisit.Loads() != 2 {
		t.Errorf("loads %d, %d", FirstVisit.Loads(), RepeatVisit.Loads())
	}
	if !CacheOn.On() || CacheOff.On() || CacheOf(true) != CacheOn || CacheOf(false) != CacheOff {
		t.Error("cache levels")
	}
}

// FuzzParsePage: any text either parses into a valid page that prints
// back to itself, or is refused with an error that names it.
func FuzzParsePage(f *testing.F) {
	for _, s := range []string{"synthetic:32x10KB", "synthetic:1x83", "synthetic:x", "synthetic:1x1e9", ":", "synthetic:-1x10KB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePage(s)
		if err != nil {
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("%q parsed into an invalid page %+v: %v", s, p, err)
		}
		if again, err := ParsePage(p.String()); err != nil || again != p {
			t.Fatalf("%q: %q does not parse back: %v", s, p.String(), err)
		}
	})
}

func TestQUICStacks(t *testing.T) {
	for _, c := range []struct {
		server QUICServer
		cc     CC
		want   QUIC
		err    string
	}{
		{QUICGo, "", QUICGoNewReno, ""},
		{QUICGo, CCNewReno, QUICGoNewReno, ""},
		{QUICGo, CCCubic, "", `QUIC server quic-go has no congestion control "cubic": use newreno`},
		{QUICQuinn, "", QUICQuinnCubic, ""},
		{QUICQuinn, CCBBR, QUICQuinnBBR, ""},
		{QUICQuinn, "bbr2", "", `has no congestion control "bbr2": use cubic, newreno or bbr`},
		{QUICQuiche, "", QUICQuicheCubic, ""},
		{QUICQuiche, CCBBR2, QUICQuicheBBR2, ""},
		{QUICQuiche, CCBBR, "", `QUIC server quiche has no congestion control "bbr": use cubic, reno or bbr2`},
		{"msquic", "", "", `QUIC server "msquic" is unknown`},
	} {
		got, err := QUICOf(c.server, c.cc)
		if got != c.want || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("QUICOf(%q, %q) = %q, %v; want %q, %q", c.server, c.cc, got, err, c.want, c.err)
		}
	}
	var experimental []QUIC
	for _, q := range QUICs().Values() { // each level's parts name it again
		if back, err := QUICOf(q.Server(), q.CC()); back != q || err != nil {
			t.Errorf("%s: server %s, cc %s give %q, %v", q, q.Server(), q.CC(), back, err)
		}
		if q.Experimental() != "" {
			experimental = append(experimental, q)
		}
	}
	if !slices.Equal(experimental, []QUIC{QUICQuinnBBR}) {
		t.Errorf("experimental stacks %q, want quinn+bbr alone", experimental)
	}
}

func TestClientCPULevels(t *testing.T) {
	for in, want := range map[string]ClientCPU{"unlimited": "unlimited", "1": "1", "0.50": "0.5", " 2 ": "2", "0.25": "0.25", "1e0": "1"} {
		if got, err := ParseClientCPU(in); err != nil || got != want {
			t.Errorf("ParseClientCPU(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0", "0.05", "-1", "NaN", "Inf", "2000", "one", "max"} {
		if _, err := ParseClientCPU(bad); err == nil || !strings.Contains(err.Error(), "client CPU") {
			t.Errorf("ParseClientCPU(%q): %v, want an error naming the factor", bad, err)
		}
	}
	if ClientCPU("0.5").Cores() != 0.5 || ClientCPUUnlimited.Cores() != 0 {
		t.Error("cores")
	}
	f := Of(IDClientCPU)
	if f.Compare("0.25", "1") >= 0 || f.Compare("unlimited", "1") <= 0 || f.Compare("1", "1") != 0 {
		t.Error("client CPU levels do not order by cores, unlimited last")
	}
	if f.Words("1") != "1 client core" || f.Words("0.5") != "0.5 client cores" || f.Words("unlimited") != "unlimited client CPU" {
		t.Errorf("words %q %q %q", f.Words("1"), f.Words("0.5"), f.Words("unlimited"))
	}
}

func TestClientCPUIsInAKeyOnlyWhenLimited(t *testing.T) {
	var l Levels
	l.Set(IDNetwork, "n")
	l.Set(IDProtocol, "h2")
	l.Set(IDClientCPU, string(ClientCPUUnlimited))
	if k := l.Key(ScopeCell); strings.Contains(k, "client_cpu") {
		t.Errorf("key %q names the default client CPU", k)
	}
	l.Set(IDClientCPU, "0.5")
	if k := l.Key(ScopeCell); !strings.Contains(k, "client_cpu=0.5") {
		t.Errorf("key %q lacks client_cpu=0.5", k)
	}
}

func TestParseLiveURL(t *testing.T) {
	if u, err := ParseLiveURL("https://a.test:443/x"); err != nil || u.String() != "https://a.test/x" {
		t.Errorf("port 443: %v, %v", u, err)
	}
	if u, err := ParseLiveURL("https://www.h5.test./x"); err != nil || u.String() != "https://www.h5.test/x" {
		t.Errorf("a fully qualified name (trailing dot): %v, %v; want the name without it, as --resolve keys it", u, err)
	}
	if u, err := ParseLiveURL("https://203.0.113.7/"); err != nil || u.Hostname() != "203.0.113.7" {
		t.Errorf("an IPv4 address: %v, %v", u, err)
	}
	u, err := ParseLiveURL("https://WWW.Example.com#top")
	if err != nil || u.String() != "https://www.example.com/" {
		t.Errorf("got %v, %v", u, err)
	}
	for raw, want := range map[string]string{
		"http://www.example.com/":      "is not https",
		"https://user:pw@example.com/": "user name or password",
		"https:///path":                "names no host",
		"https://a.test/x y":           "spaces or control characters",
		"https://a.test/" + strings.Repeat("a", MaxLiveURLBytes): "too long",
		"https://a.test:8443/": "names port 8443",
		// Hardening five: an IPv6 literal lost its brackets on the way to
		// the spec and was "line 12: … does not parse"; a host that is
		// no DNS name reached the browser's resolver rules.
		"https://[::1]/":            "IPv6 address, and the testbed carries IPv4 only",
		"https://[2001:db8::1]:443": "IPv6 address",
		"https://a,MAP.test/":       "is not a DNS name",
		"https://*.test/":           "is not a DNS name",
		"https://-a.test/":          "is not a DNS name",
	} {
		if _, err := ParseLiveURL(raw); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.40q: %v, want an error saying %q", raw, err, want)
		}
	}
}
