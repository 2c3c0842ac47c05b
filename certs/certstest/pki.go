package certstest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"testing"
	"time"
)

// CA signs certificates.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// PEM is the CA certificate, as a Secret's ca.crt holds it.
	PEM []byte
}

// Cert is a certificate and its key, PEM-encoded as a kubernetes.io/tls
// Secret holds them.
type Cert struct {
	CertPEM, KeyPEM []byte
	// Serial is the certificate's serial number, to tell a renewed one.
	Serial *big.Int
	// NotAfter is when it expires.
	NotAfter time.Time
}

// CertOptions shape a certificate; the zero value is a server certificate
// valid from an hour ago for a day.
type CertOptions struct {
	DNSNames    []string
	IPAddresses []net.IP
	// Client makes a client certificate instead of a server one.
	Client bool
	// NotBefore and NotAfter override the validity.
	NotBefore, NotAfter time.Time
	// RSA gives the certificate an RSA key, written in PKCS #1 form ("RSA
	// PRIVATE KEY") as openssl genrsa writes it; the default is an ECDSA
	// key in PKCS #8 form ("PRIVATE KEY"), as cert-manager writes it.
	RSA bool
}

// NewCA makes a self-signed CA named name.
func NewCA(name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{cert: cert, key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// NewTestCA is NewCA for a test, which fails on an error.
func NewTestCA(t testing.TB) *CA {
	t.Helper()
	ca, err := NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// IssueLoopback issues a certificate for localhost and 127.0.0.1, as a
// server on this host presents it to a client that verifies it, shaped by
// o otherwise; the test fails on an error.
func (ca *CA) IssueLoopback(t testing.TB, o CertOptions) Cert {
	t.Helper()
	o.DNSNames = append(o.DNSNames, "localhost")
	o.IPAddresses = append(o.IPAddresses, net.IPv4(127, 0, 0, 1))
	c, err := ca.Issue(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// SecretData is the data of a kubernetes.io/tls Secret that holds c and
// the CA, as cert-manager writes it: tls.crt, tls.key and ca.crt.
func (ca *CA) SecretData(c Cert) map[string][]byte {
	return map[string][]byte{"tls.crt": c.CertPEM, "tls.key": c.KeyPEM, "ca.crt": ca.PEM}
}

// Certificate is the CA's certificate.
func (ca *CA) Certificate() *x509.Certificate { return ca.cert }

// Pool is a pool holding only the CA, for a client's RootCAs or a
// server's ClientCAs.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// Issue signs a certificate shaped by o.
func (ca *CA) Issue(o CertOptions) (Cert, error) {
	key, keyBlock, err := newKey(o.RSA)
	if err != nil {
		return Cert{}, err
	}
	if o.NotBefore.IsZero() {
		o.NotBefore = time.Now().Add(-time.Hour)
	}
	if o.NotAfter.IsZero() {
		o.NotAfter = time.Now().Add(24 * time.Hour)
	}
	usage := x509.ExtKeyUsageServerAuth
	if o.Client {
		usage = x509.ExtKeyUsageClientAuth
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: fmt.Sprint(o.DNSNames)},
		DNSNames:     o.DNSNames,
		IPAddresses:  o.IPAddresses,
		NotBefore:    o.NotBefore,
		NotAfter:     o.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		return Cert{}, err
	}
	return Cert{
		CertPEM:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:   pem.EncodeToMemory(keyBlock),
		Serial:   tmpl.SerialNumber,
		NotAfter: tmpl.NotAfter,
	}, nil
}

// newKey makes a key and its PEM block: RSA in PKCS #1 form, or ECDSA in
// PKCS #8 form.
func newKey(rsaKey bool) (crypto.Signer, *pem.Block, error) {
	if rsaKey {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, nil, err
		}
		return key, &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return key, &pem.Block{Type: "PRIVATE KEY", Bytes: der}, nil
}

// TLSCertificate is c as crypto/tls takes it, for a client certificate.
func (c Cert) TLSCertificate() (tls.Certificate, error) {
	return tls.X509KeyPair(c.CertPEM, c.KeyPEM)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		// crypto/rand does not fail on Linux.
		panic(err)
	}
	return n
}
