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
// a name, or expire within localRenewBefore of now, or when they are not
// private files of this user's (see readPrivateFile). It reports why it
// made new ones ("" when it reused them). It refuses a directory that is
// not this user's or that others can write (see preparePrivateDir).
func loadOrCreateLocalPKI(dir string, now time.Time) (localPKI, string, error) {
	uid := os.Geteuid()
	if err := preparePrivateDir(dir, uid); err != nil {
		return localPKI{}, "", fmt.Errorf("local webhook certificates: %w", err)
	}
	pki, err := loadLocalPKI(dir, uid, now)
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
func loadLocalPKI(dir string, uid int, now time.Time) (localPKI, error) {
	var pki localPKI
	for _, f := range []struct {
		name string
		to   *[]byte
	}{{CAFile, &pki.caPEM}, {CertFile, &pki.certPEM}, {KeyFile, &pki.keyPEM}} {
		b, err := readPrivateFile(filepath.Join(dir, f.name), uid)
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
	ca, err := NewCA("memcached-operator local webhook CA", now.Add(-time.Hour), now.Add(localCAValidity))
	if err != nil {
		return localPKI{}, err
	}
	certPEM, keyPEM, err := ca.Issue(x509.Certificate{
		Subject:     pkix.Name{CommonName: localIP},
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(localCertValidity),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP(localIP)},
		DNSNames:    []string{localDNS},
	})
	if err != nil {
		return localPKI{}, err
	}
	return localPKI{caPEM: ca.CertPEM, certPEM: certPEM, keyPEM: keyPEM}, nil
}

// CA is a certificate authority made on the spot, with an ECDSA P-256 key,
// that signs leaf certificates only. Local mode makes one with each serving
// certificate; the test framework's local clusters use it too, so that the
// repository has one certificate generator.
type CA struct {
	// Cert is the CA's self-signed certificate, CertPEM the same in PEM.
	Cert    *x509.Certificate
	CertPEM []byte
	key     *ecdsa.PrivateKey
}

// NewCA makes a CA named commonName, valid from notBefore to notAfter.
func NewCA(commonName string, notBefore, notAfter time.Time) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	template := &x509.Certificate{
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := createCertificate(template, template, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), key: key}, nil
}

// KeyPEM is the CA's private key in PKCS #8 PEM, for a signer that issues
// certificates of its own with it (a cluster's kube-controller-manager).
func (ca *CA) KeyPEM() ([]byte, error) { return encodePrivateKey(ca.key) }

// Issue signs a certificate for a new ECDSA P-256 key and returns both in
// PEM. template gives the subject, validity, names and extended key usages;
// Issue sets the serial number and the key usage.
func (ca *CA) Issue(template x509.Certificate) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	template.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := createCertificate(&template, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, err
	}
	if keyPEM, err = encodePrivateKey(key); err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, nil
}

// createCertificate gives template a random serial number and signs it.
func createCertificate(template, parent *x509.Certificate, pub *ecdsa.PublicKey, signer *ecdsa.PrivateKey) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, err
	}
	template.SerialNumber = serial
	return x509.CreateCertificate(rand.Reader, template, parent, pub, signer)
}

func encodePrivateKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// write keeps the files in dir, which preparePrivateDir has checked.
func (p localPKI) write(dir string) error {
	for _, f := range []struct {
		name string
		data []byte
	}{{CAFile, p.caPEM}, {CertFile, p.certPEM}, {KeyFile, p.keyPEM}} {
		if err := writePrivateFile(dir, f.name, f.data); err != nil {
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
