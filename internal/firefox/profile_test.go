package firefox

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/testenv"
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

// TestTheCAIsReadOnceAndNeverBlocks: a --ca swapped for a FIFO after
// quicbench read it made certutil -i, run as root on the user's path,
// block until someone wrote into the FIFO, and quicbench ignored SIGINT
// and SIGTERM meanwhile. The CA is now read through a descriptor that
// refuses a FIFO at once, certutil is handed a private copy, and each
// certutil ends with the context.
func TestTheCAIsReadOnceAndNeverBlocks(t *testing.T) {
	testenv.RequireCommand(t, "certutil")
	dir := t.TempDir()
	fifo := filepath.Join(dir, "ca.pem")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- makeCertDB(context.Background(), t.TempDir(), fifo) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "FIFO") {
			t.Errorf("a FIFO for a CA: %v, want it refused as a FIFO", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a FIFO for a CA blocked the profile's making for 10 s")
	}
	// A real CA: certutil imports the private copy, which is gone after.
	ca := filepath.Join(dir, "real.pem")
	if err := os.WriteFile(ca, testCAPEM(t), 0o644); err != nil {
		t.Fatal(err)
	}
	profile := t.TempDir()
	if err := makeCertDB(context.Background(), profile, ca); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(profile, "ca-import.pem")); err == nil {
		t.Error("the private copy of the CA is left in the profile")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := makeCertDB(ctx, t.TempDir(), ca); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled context: %v, want context.Canceled", err)
	}
}

// testCAPEM is a self-signed certificate authority in PEM, made for the
// test.
func testCAPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "quicbench test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// TestDiscoveryPrefsForceNothing: under a discovery rule HTTP/3 is on and
// nothing is mapped or forced, and Firefox's race against a slow QUIC
// handshake keeps its default; h1 turns HTTP/2 off.
func TestDiscoveryPrefsForceNothing(t *testing.T) {
	for _, p := range factor.Protocols().Values() {
		prefs := discoveryPrefs(client.Request{Protocol: p, Discovery: factor.DiscoveryAltSvc}.SpeaksHTTP2(), factor.DiscoveryAltSvc)
		if prefs["network.http.http3.enable"] != true || prefs["network.http.http3.alt-svc-mapping-for-testing"] != nil ||
			prefs["network.http.http3.backup_timer_delay"] != nil {
			t.Errorf("%s: prefs %v", p, prefs)
		}
		if off := prefs["network.http.http2.enabled"] == false; off != (p == factor.H1) {
			t.Errorf("%s: HTTP/2 off %v", p, off)
		}
	}
}
