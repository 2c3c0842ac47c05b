package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// The names a local serving certificate is valid for: what the webhook
// configurations' URLs use, and what a developer would type.
const (
	localIP  = "127.0.0.1"
	localDNS = "localhost"
)

// Lifetimes of the local CA and serving certificate. Both are made again,
// together, once either has less than localRenewBefore left.
const (
	localCAValidity   = 10 * 365 * 24 * time.Hour
	localCertValidity = 365 * 24 * time.Hour
	localRenewBefore  = 30 * 24 * time.Hour
)

// localPKI is a CA and a serving certificate it signed, in PEM. The CA's
// private key is not kept: it signs once, and a new CA is made when the
// certificate is made again.
type localPKI struct {
	caPEM   []byte
	certPEM []byte
	keyPEM  []byte
}

// loadOrCreateLocalPKI returns the CA and serving certificate kept in dir,
// or makes and keeps new ones when they are missing, do not verify, lack
// a name, or expire within localRenewBefore of now. It reports why it made
// new ones ("" when it reused them).
func loadOrCreateLocalPKI(dir string, now time.Time) (localPKI, string, error) {
	pki, err := loadLocalPKI(dir, now)
	if err == nil {
		return pki, "", nil
	}
	// The first run has nothing to load, which is no problem to report.
	reason := "none kept yet"
	if !errors.Is(err, fs.ErrNotExist) {
		reason = err.Error()
	}
	if pki, err = newLocalPKI(now); err != nil {
		return localPKI{}, "", err
	}
	if err := pki.write(dir); err != nil {
		return localPKI{}, "", err
	}
	return pki, reason, nil
}

// loadLocalPKI reads the files in dir and says why they cannot be reused.
func loadLocalPKI(dir string, now time.Time) (localPKI, error) {
	var pki localPKI
	for _, f := range []struct {
		name string
		to   *[]byte
	}{{CAFile, &pki.caPEM}, {CertFile, &pki.certPEM}, {KeyFile, &pki.keyPEM}} {
		b, err := os.ReadFile(filepath.Join(dir, f.name))
		if err != nil {
			return pki, err
		}
		*f.to = b
	}
	ca, err := parseCertificatePEM(pki.caPEM)
	if err != nil {
		return pki, fmt.Errorf("%s: %w", CAFile, err)
	}
	if !ca.IsCA {
		return pki, fmt.Errorf("%s is not a CA", CAFile)
	}
	pair, err := tls.X509KeyPair(pki.certPEM, pki.keyPEM)
	if err != nil {
		return pki, err
	}
	leaf := pair.Leaf
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	for _, name := range []string{localIP, localDNS} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: name, CurrentTime: now}); err != nil {
			return pki, fmt.Errorf("%s for %s: %w", CertFile, name, err)
		}
	}
	for _, c := range []*x509.Certificate{ca, leaf} {
		if c.NotAfter.Sub(now) < localRenewBefore {
			return pki, fmt.Errorf("certificate %q expires at %s", c.Subject.CommonName, c.NotAfter.Format(time.RFC3339))
		}
	}
	return pki, nil
}

// newLocalPKI makes a CA and a serving certificate for 127.0.0.1 and
// localhost.
func newLocalPKI(now time.Time) (localPKI, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return localPKI{}, err
	}
	caTemplate := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "memcached-operator local webhook CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(localCAValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, ca, err := signCertificate(caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return localPKI{}, err
	}

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return localPKI{}, err
	}
	template := &x509.Certificate{
		Subject:     pkix.Name{CommonName: localIP},
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(localCertValidity),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP(localIP)},
		DNSNames:    []string{localDNS},
	}
	certDER, _, err := signCertificate(template, ca, &key.PublicKey, caKey)
	if err != nil {
		return localPKI{}, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return localPKI{}, err
	}
	return localPKI{
		caPEM:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certDER}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

func signCertificate(template, parent *x509.Certificate, pub *ecdsa.PublicKey, signer *ecdsa.PrivateKey) ([]byte, *x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, nil, err
	}
	template.SerialNumber = serial
	der, err := x509.CreateCertificate(rand.Reader, template, parent, pub, signer)
	if err != nil {
		return nil, nil, err
	}
	c, err := x509.ParseCertificate(der)
	return der, c, err
}

// write keeps the files in dir, which only the user may read. Each file is
// written under a temporary name and renamed, so a run that is interrupted
// leaves either the old file or the new one.
func (p localPKI) write(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("local webhook certificates: %w", err)
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{CAFile, p.caPEM}, {CertFile, p.certPEM}, {KeyFile, p.keyPEM}} {
		path := filepath.Join(dir, f.name)
		if err := os.WriteFile(path+".tmp", f.data, 0o600); err != nil {
			return fmt.Errorf("local webhook certificates: %w", err)
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			return fmt.Errorf("local webhook certificates: %w", err)
		}
	}
	return nil
}

func parseCertificatePEM(b []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}
