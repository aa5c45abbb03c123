package origin

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestCertsWrittenAndHashed(t *testing.T) {
	dir := t.TempDir()
	c, err := NewCerts(dir, []string{"a.test", "b.test"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ca.pem", "ca-key.pem", "leaf.pem", "leaf-key.pem"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	sum := sha256.Sum256(c.Leaf.Leaf.RawSubjectPublicKeyInfo)
	if want := base64.StdEncoding.EncodeToString(sum[:]); c.SPKIHash != want {
		t.Errorf("SPKI hash %q, want %q", c.SPKIHash, want)
	}
	for _, host := range []string{"a.test", "b.test"} {
		if err := c.Leaf.Leaf.VerifyHostname(host); err != nil {
			t.Error(err)
		}
	}
	if _, err := c.Leaf.Leaf.Verify(x509VerifyOptions(c)); err != nil {
		t.Errorf("leaf does not chain to the run's CA: %v", err)
	}
	// The servers that read files (nginx, Caddy, the Rust servers) get
	// the same pair, and the keys are their owner's alone.
	pair, err := tls.LoadX509KeyPair(c.LeafFile, c.LeafKeyFile)
	if err != nil || !bytes.Equal(pair.Certificate[0], c.Leaf.Certificate[0]) {
		t.Errorf("leaf.pem and leaf-key.pem: %v, or not the leaf in memory", err)
	}
	for _, key := range []string{"ca-key.pem", "leaf-key.pem"} {
		info, err := os.Stat(filepath.Join(dir, key))
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v; want 0600", key, info.Mode().Perm())
		}
	}
}

func x509VerifyOptions(c *Certs) x509.VerifyOptions {
	return x509.VerifyOptions{Roots: c.Pool, DNSName: "a.test"}
}
