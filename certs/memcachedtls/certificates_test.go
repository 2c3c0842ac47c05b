package memcachedtls_test

import (
	"net"
	"testing"
	"time"

	"github.com/example-inc/memcached-operator/certs/certstest"
	"github.com/example-inc/memcached-operator/certs/memcachedtls"
)

// issuer is a CA the tests issue serving certificates from, as
// cert-manager's CA issuer would.
type issuer struct{ *certstest.CA }

func newIssuer(t *testing.T) issuer {
	t.Helper()
	ca, err := certstest.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	return issuer{ca}
}

// certOption changes a serving certificate's options.
type certOption func(*certstest.CertOptions)

func withValidity(notBefore, notAfter time.Time) certOption {
	return func(o *certstest.CertOptions) { o.NotBefore, o.NotAfter = notBefore, notAfter }
}

// withRSAKey gives the certificate an RSA key in PKCS #1 form, as openssl
// genrsa writes it.
func withRSAKey() certOption { return func(o *certstest.CertOptions) { o.RSA = true } }

// issue makes a certificate for 127.0.0.1 and localhost, valid from an
// hour ago for a day, with a random serial.
func (ca issuer) issue(t *testing.T, opts ...certOption) certstest.Cert {
	t.Helper()
	o := certstest.CertOptions{DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	for _, opt := range opts {
		opt(&o)
	}
	c, err := ca.Issue(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// secretData is the Secret's data for c: tls.crt, tls.key and ca.crt.
func (ca issuer) secretData(c certstest.Cert) map[string][]byte {
	return map[string][]byte{memcachedtls.CertFile: c.CertPEM, memcachedtls.KeyFile: c.KeyPEM, memcachedtls.CAFile: ca.PEM}
}
