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
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "quicbench run CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(7 * 24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	ca, err := newSigned("CA", caTmpl, nil)
	if err != nil {
		return nil, err
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
	leaf, err := newSigned("leaf", leafTmpl, ca)
	if err != nil {
		return nil, err
	}
	c := &Certs{
		Leaf:        tls.Certificate{Certificate: [][]byte{leaf.der, ca.der}, PrivateKey: leaf.key, Leaf: leaf.cert},
		CAFile:      filepath.Join(dir, "ca.pem"),
		LeafFile:    filepath.Join(dir, "leaf.pem"),
		LeafKeyFile: filepath.Join(dir, "leaf-key.pem"),
		Pool:        x509.NewCertPool(),
	}
	c.Pool.AddCert(ca.cert)
	sum := sha256.Sum256(leaf.cert.RawSubjectPublicKeyInfo)
	c.SPKIHash = base64.StdEncoding.EncodeToString(sum[:])
	if err := writePEMs(dir, c, ca, leaf); err != nil {
		return nil, err
	}
	return c, nil
}

// signed is a certificate made by newSigned, with its key.
type signed struct {
	key  *ecdsa.PrivateKey
	der  []byte
	cert *x509.Certificate
}

// newSigned makes a P-256 key and the certificate of tmpl for it, signed
// by parent (self-signed if nil); what names it in errors.
func newSigned(what string, tmpl *x509.Certificate, parent *signed) (*signed, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("certs: %s key: %w", what, err)
	}
	issuer, issuerKey := tmpl, key
	if parent != nil {
		issuer, issuerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, issuer, &key.PublicKey, issuerKey)
	if err != nil {
		return nil, fmt.Errorf("certs: %s: %w", what, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("certs: parse %s: %w", what, err)
	}
	return &signed{key: key, der: der, cert: cert}, nil
}

// writePEMs writes c's CA and leaf certificates and their keys into dir as
// PEM files, the keys readable by their owner only.
func writePEMs(dir string, c *Certs, ca, leaf *signed) error {
	caKeyDER, err := x509.MarshalECPrivateKey(ca.key)
	if err != nil {
		return err
	}
	leafKeyDER, err := x509.MarshalECPrivateKey(leaf.key)
	if err != nil {
		return err
	}
	files := []struct {
		path, kind string
		der        []byte
		mode       os.FileMode
	}{
		{c.CAFile, "CERTIFICATE", ca.der, 0o644},
		{filepath.Join(dir, "ca-key.pem"), "EC PRIVATE KEY", caKeyDER, 0o600},
		{c.LeafFile, "CERTIFICATE", leaf.der, 0o644},
		{c.LeafKeyFile, "EC PRIVATE KEY", leafKeyDER, 0o600},
	}
	for _, f := range files {
		data := pem.EncodeToMemory(&pem.Block{Type: f.kind, Bytes: f.der})
		if err := safefs.WriteFile(dir, filepath.Base(f.path), data, f.mode); err != nil {
			return fmt.Errorf("certs: write %s: %w", f.path, err)
		}
	}
	return nil
}
