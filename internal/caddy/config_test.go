package caddy

import (
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/origin"
	"github.com/quicbench/quicbench/internal/site/gen"
	"github.com/quicbench/quicbench/internal/testenv"
)

// TestConfigIsCaddys: Caddy itself validates the configuration quicbench
// writes (every module and field known to Debian's Caddy 2.6), for each
// share of the protocols and cache policy.
func TestConfigIsCaddys(t *testing.T) {
	testenv.RequireFile(t, DefaultPath, "make caddy (apt-get install caddy)")
	dir := t.TempDir()
	page, err := gen.Synthetic(factor.Page{Kind: factor.PageSynthetic, Objects: 2, ObjectBytes: 1000}, gen.OriginHosts(2), 1)
	if err != nil {
		t.Fatal(err)
	}
	certs, err := origin.NewCerts(dir, page.Hosts(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	answers, err := newAnswers(page)
	if err != nil {
		t.Fatal(err)
	}
	addrs := map[string]netip.Addr{}
	for i, h := range page.Hosts() {
		addrs[h] = netip.AddrFrom4([4]byte{127, 0, 0, byte(10 + i)})
	}
	for _, c := range []struct{ tcp, quic, cache bool }{{true, true, false}, {true, false, true}, {false, true, false}} {
		p := confParams{dir: dir, certFile: certs.LeafFile, keyFile: certs.LeafKeyFile, port: 443, tcp: c.tcp, quic: c.quic, cache: c.cache,
			addrs: addrs, hosts: page.Hosts(), site: page, answers: answers}
		data, err := conf(p)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "caddy.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(DefaultPath, "validate", "--config", path)
		cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "XDG_DATA_HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("tcp %v, quic %v, cache %v: caddy validate: %v\n%s", c.tcp, c.quic, c.cache, err, out)
		}
	}
}
