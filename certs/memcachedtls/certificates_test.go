package memcachedtls_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/example-inc/memcached-operator/certs/memcachedtls"
)

// issuer is a CA the tests issue serving certificates from, as
// cert-manager's CA issuer would.
type issuer struct {
	cert *x509.Certificate
	key  crypto.Signer
	pem  []byte
}

func newIssuer(t *testing.T) issuer {
	t.Helper()
	key := newECKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return issuer{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// servingCert is what a Secret of kubernetes.io/tls holds.
type servingCert struct {
	serial   *big.Int
	certPEM  []byte
	keyPEM   []byte
	notAfter time.Time
}

// certOption changes the template of a serving certificate, or its key.
type certOption func(*x509.Certificate, *crypto.Signer)

func withValidity(notBefore, notAfter time.Time) certOption {
	return func(c *x509.Certificate, _ *crypto.Signer) { c.NotBefore, c.NotAfter = notBefore, notAfter }
}

// withRSAKey gives the certificate an RSA key, which keyPEM then holds in
// PKCS #1 form ("RSA PRIVATE KEY"), as openssl genrsa writes it.
func withRSAKey(t *testing.T) certOption {
	return func(_ *x509.Certificate, k *crypto.Signer) {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		*k = key
	}
}

// issue makes a certificate for 127.0.0.1, valid from an hour ago for a
// day, with a random serial. The key is
// PKCS #8 ("PRIVATE KEY") for an EC key, as cert-manager writes it.
func (ca issuer) issue(t *testing.T, opts ...certOption) servingCert {
	t.Helper()
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	var key crypto.Signer = newECKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "memcached"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, o := range opts {
		o(tmpl, &key)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		t.Fatal(err)
	}
	var keyBlock *pem.Block
	if rsaKey, ok := key.(*rsa.PrivateKey); ok {
		keyBlock = &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaKey)}
	} else {
		pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		keyBlock = &pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}
	}
	return servingCert{
		serial:   tmpl.SerialNumber,
		certPEM:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:   pem.EncodeToMemory(keyBlock),
		notAfter: tmpl.NotAfter,
	}
}

// secretData is the Secret's data for c: tls.crt, tls.key and ca.crt.
func (ca issuer) secretData(c servingCert) map[string][]byte {
	return map[string][]byte{memcachedtls.CertFile: c.certPEM, memcachedtls.KeyFile: c.keyPEM, memcachedtls.CAFile: ca.pem}
}

func newECKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}
