package testbed

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/site/gen"
	"github.com/quicbench/quicbench/internal/testenv"
)

func startTestbed(t *testing.T, linkCfg emulator.Config, s *site.Site) *Testbed {
	t.Helper()
	return startConfigured(t, Config{Link: linkCfg, Site: s})
}

// startConfigured starts a testbed of cfg with its own stem and run
// directory, closed when the test ends.
func startConfigured(t *testing.T, cfg Config) *Testbed {
	t.Helper()
	testenv.RequireRoot(t)
	cfg.Stem = netns.RunName(os.Getpid(), fmt.Sprintf("tb%d", time.Now().UnixNano()%1e6))
	cfg.RunDir = t.TempDir()
	tb, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tb.Close(); err != nil {
			t.Error(err)
		}
	})
	return tb
}

// TestServesIdenticalBytesOverEveryProtocol fetches every resource of a page
// over h1, h2 and h3 through the emulated link and compares the bytes with
// the site's, and the server's per-protocol counts with the requests made.
func TestServesIdenticalBytesOverEveryProtocol(t *testing.T) {
	s, err := gen.Synthetic(factor.Page{Kind: factor.PageSynthetic, Objects: 4, ObjectBytes: 20_000}, []string{"www.quicbench.test"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	tb := startTestbed(t, emulator.Config{Up: link.Config{Delay: 5 * time.Millisecond}, Down: link.Config{Delay: 5 * time.Millisecond}}, s)
	urls := append([]string{s.DocumentURL()}, s.Subresources...)
	for _, proto := range []string{"h1", "h2", "h3"} {
		t.Run(proto, func(t *testing.T) {
			c, err := tb.NewGoClient(proto)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			before, err := tb.Counts()
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range urls {
				resp, err := c.Get(u)
				if err != nil {
					t.Fatalf("GET %s over %s: %v", u, proto, err)
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Fatal(err)
				}
				wantProto := map[string]int{"h1": 1, "h2": 2, "h3": 3}[proto]
				if resp.ProtoMajor != wantProto {
					t.Errorf("GET %s: protocol %s, want %s", u, resp.Proto, proto)
				}
				path := strings.TrimPrefix(u, "https://www.quicbench.test")
				if want := s.Lookup("www.quicbench.test", path).Body; !bytes.Equal(body, want) {
					t.Errorf("GET %s over %s: %d bytes differ from the site's %d", u, proto, len(body), len(want))
				}
				if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
					t.Errorf("Cache-Control %q, want no-store", cc)
				}
			}
			after, err := tb.Counts()
			if err != nil {
				t.Fatal(err)
			}
			got := after.Sub(before)
			if got.Of(proto) != int64(len(urls)) || got.Total() != int64(len(urls)) {
				t.Errorf("server counted %+v, want %d requests, all %s", got, len(urls), proto)
			}
		})
	}
}

func TestUnknownPathIs404(t *testing.T) {
	s, _ := gen.Synthetic(factor.Page{Kind: factor.PageSynthetic, Objects: 1, ObjectBytes: 100}, []string{"a.test"}, 1)
	tb := startTestbed(t, emulator.Config{}, s)
	c, err := tb.NewGoClient("h2")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	resp, err := c.Get("https://a.test/nope")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("status %d, want 404", resp.StatusCode)
	}
}

// TestQlogOfAQUICConnection writes a qlog while an h3 request is served and
// finds the connection's packets in it once the server closed.
func TestQlogOfAQUICConnection(t *testing.T) {
	s, _ := gen.Synthetic(factor.Page{Kind: factor.PageSynthetic, Objects: 1, ObjectBytes: 5000}, []string{"a.test"}, 1)
	tb := startTestbed(t, emulator.Config{}, s)
	dir := t.TempDir()
	if err := tb.SetQlogDir(dir); err != nil {
		t.Fatal(err)
	}
	c, err := tb.NewGoClient("h3")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Get("https://a.test/obj/0.png")
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	c.Close()
	if err := tb.CloseConnections(); err != nil { // which completes the connection's trace
		t.Fatal(err)
	}
	files, _ := os.ReadDir(dir)
	if len(files) != 1 || !strings.HasSuffix(files[0].Name(), "_server.sqlog") {
		t.Fatalf("qlog directory holds %v, want one server trace", files)
	}
	data, err := os.ReadFile(filepath.Join(dir, files[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	for _, event := range []string{"transport:packet_sent", "transport:packet_received"} {
		if !strings.Contains(string(data), event) {
			t.Errorf("the trace has no %s event (%d bytes)", event, len(data))
		}
	}
}

// TestEveryServerLevelHasOneKind: each level of the server and QUIC
// server factors is served by exactly one registered stack, and each
// stack serves some level.
func TestEveryServerLevelHasOneKind(t *testing.T) {
	tcp, quic := map[factor.Server]int{}, map[factor.QUICServer]int{}
	for _, k := range Kinds() {
		if k.Name == "" || k.Start == nil || k.TCP == "" && k.QUIC == "" {
			t.Errorf("kind %+v: a name, a start and a level are needed", k)
		}
		if k.TCP != "" {
			tcp[k.TCP]++
		}
		if k.QUIC != "" {
			quic[k.QUIC]++
		}
	}
	for _, l := range factor.Servers().Values() {
		if tcp[l] != 1 {
			t.Errorf("server %s is served by %d stacks, want 1", l, tcp[l])
		}
	}
	for _, l := range factor.QUICServers().Values() {
		if quic[l] != 1 {
			t.Errorf("QUIC server %s is served by %d stacks, want 1", l, quic[l])
		}
	}
}

// TestEveryQUICLevelHasItsProfile: one profile per QUIC stack level, with
// the level's controller; a stack that does not pace says so in its
// limits; quic-go's says it has only NewReno.
func TestEveryQUICLevelHasItsProfile(t *testing.T) {
	profiles := QUICProfiles()
	if len(profiles) != len(factor.QUICs().Levels) {
		t.Fatalf("%d QUIC profiles for %d levels", len(profiles), len(factor.QUICs().Levels))
	}
	for i, q := range factor.QUICs().Values() {
		p := profiles[i]
		if p.Name != q || p.Transport.Congestion != string(q.CC()) || p.Transport.InitialWindowBytes == 0 {
			t.Errorf("profile %d = %+v, want %s's", i, p, q)
		}
		if !p.Transport.Pacing && !strings.Contains(strings.Join(p.Limits, " "), "paces only") {
			t.Errorf("%s does not pace and its limits do not say so: %q", q, p.Limits)
		}
	}
	if !strings.Contains(strings.Join(profiles[0].Limits, " "), "only NewReno") {
		t.Errorf("quic-go's profile does not say it has only NewReno: %+v", profiles[0])
	}
}
