package origin

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"

	"github.com/quicbench/quicbench/internal/safefs"
)

// Certs are the per-run certificate authority and the leaf certificate that
// every origin presents.
type Certs struct {
	Leaf tls.Certificate
	// SPKIHash is the base64 SHA-256 of the leaf's SubjectPublicKeyInfo, the
	// form Chromium's --ignore-certificate-errors-spki-list takes.
	SPKIHash string
	// CAFile, LeafFile and LeafKeyFile are the PEM files written to the run
	// directory.
	CAFile, LeafFile, LeafKeyFile string
	// Pool trusts the CA, for Go clients.
	Pool *x509.CertPool
}

// NewCerts makes a fresh CA and a leaf for hosts (valid for one week from
// now) and writes ca.pem, ca-key.pem, leaf.pem and leaf-key.pem into dir.
func NewCerts(dir string, hosts []string, now time.Time) (*Certs, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("certs: CA key: %w", err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "quicbench run CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(7 * 24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("certs: CA: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("certs: parse CA: %w", err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("certs: leaf key: %w", err)
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: hosts[0]},
		DNSNames:     hosts,
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("certs: leaf: %w", err)
	}
	leaf, err := x509.ParseCertificate(leafDER)
	if err != nil {
		return nil, fmt.Errorf("certs: parse leaf: %w", err)
	}
	c := &Certs{
		Leaf:        tls.Certificate{Certificate: [][]byte{leafDER, caDER}, PrivateKey: leafKey, Leaf: leaf},
		CAFile:      filepath.Join(dir, "ca.pem"),
		LeafFile:    filepath.Join(dir, "leaf.pem"),
		LeafKeyFile: filepath.Join(dir, "leaf-key.pem"),
		Pool:        x509.NewCertPool(),
	}
	c.Pool.AddCert(ca)
	sum := sha256.Sum256(leaf.RawSubjectPublicKeyInfo)
	c.SPKIHash = base64.StdEncoding.EncodeToString(sum[:])
	caKeyDER, err := x509.MarshalECPrivateKey(caKey)
	if err != nil {
		return nil, err
	}
	leafKeyDER, err := x509.MarshalECPrivateKey(leafKey)
	if err != nil {
		return nil, err
	}
	files := []struct {
		path, kind string
		der        []byte
		mode       os.FileMode
	}{
		{c.CAFile, "CERTIFICATE", caDER, 0o644},
		{filepath.Join(dir, "ca-key.pem"), "EC PRIVATE KEY", caKeyDER, 0o600},
		{c.LeafFile, "CERTIFICATE", leafDER, 0o644},
		{c.LeafKeyFile, "EC PRIVATE KEY", leafKeyDER, 0o600},
	}
	for _, f := range files {
		data := pem.EncodeToMemory(&pem.Block{Type: f.kind, Bytes: f.der})
		if err := safefs.WriteFile(dir, filepath.Base(f.path), data, f.mode); err != nil {
			return nil, fmt.Errorf("certs: write %s: %w", f.path, err)
		}
	}
	return c, nil
}
