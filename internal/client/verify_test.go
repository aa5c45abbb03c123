package client

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/factor"
)

func goodMetrics(proto string, urls []string) PageMetrics {
	m := PageMetrics{DocumentProtocol: proto, DocumentStatus: 200, TTFBMs: 50, DCLMs: 60, PLTMs: 100, Images: len(urls)}
	for _, u := range urls {
		m.Resources = append(m.Resources, ResourceTiming{URL: u, Protocol: proto, Status: 200})
	}
	return m
}

func TestVerify(t *testing.T) {
	urls := []string{"https://a/1.png", "https://a/2.png"}
	req := Request{Protocol: factor.H3, Expected: urls}
	tests := []struct {
		name   string
		mutate func(*PageMetrics)
		want   string // substring of the problems; "" for a verified load
	}{
		{"verified", func(*PageMetrics) {}, ""},
		{"document over h2", func(m *PageMetrics) { m.DocumentProtocol = "h2" }, `document over "h2"`},
		{"resource over h2", func(m *PageMetrics) { m.Resources[1].Protocol = "h2" }, "1 resources not over h3"},
		{"resource missing", func(m *PageMetrics) { m.Resources = m.Resources[:1] }, "1 of 2 resources missing"},
		{"resource 404", func(m *PageMetrics) { m.Resources[0].Status = 404 }, "status other than 200"},
		{"broken image", func(m *PageMetrics) { m.BrokenImages = 1 }, "1 of 2 images broken"},
		{"no load end", func(m *PageMetrics) { m.PLTMs = 0 }, "no load event end"},
		{"document 500", func(m *PageMetrics) { m.DocumentStatus = 500 }, "document status 500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := goodMetrics("h3", urls)
			tt.mutate(&m)
			got := strings.Join(Verify(req, m), "; ")
			if tt.want == "" && got != "" {
				t.Errorf("a good load was flagged: %s", got)
			}
			if tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("problems %q, want one containing %q", got, tt.want)
			}
		})
	}
}

// TestWarmKeyTellsFlagsApart: two requests share a warm browser only if
// every value its flags are made of is the same.
func TestWarmKeyTellsFlagsApart(t *testing.T) {
	base := Request{Protocol: factor.H3, HostResolverRules: "MAP a.test 198.19.0.10", SPKIHash: "abc=", Hosts: []string{"a.test"}}
	same := base
	same.Hosts = []string{"a.test"} // equal values, another slice
	if warmKey(same) != warmKey(base) {
		t.Fatal("equal requests gave two keys")
	}
	for name, change := range map[string]func(*Request){
		"protocol": func(r *Request) { r.Protocol = factor.H2 },
		"rules":    func(r *Request) { r.HostResolverRules = "MAP a.test 198.19.0.11" },
		"spki":     func(r *Request) { r.SPKIHash = "xyz=" },
		"hosts":    func(r *Request) { r.Hosts = []string{"a.test", "b.test"} },
	} {
		other := base
		change(&other)
		if warmKey(other) == warmKey(base) {
			t.Errorf("a request with another %s shares the warm browser's key", name)
		}
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
	removed := RemoveStaleTemp()
	if _, err := os.Stat(stale); !os.IsNotExist(err) || !slices.Contains(removed, stale) {
		t.Errorf("the dead process's %s: %v, removed %v", stale, err, removed)
	}
	if _, err := os.Stat(live); err != nil || !slices.Contains(TempDirs(), live) {
		t.Errorf("this process's %s: %v, TempDirs %v", live, err, TempDirs())
	}
}
