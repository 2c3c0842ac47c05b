package memcachedtls_test

import (
	"net"
	"testing"
	"time"

	"github.com/example-inc/memcached-operator/certs/memcachedtls"
	"github.com/example-inc/memcached-operator/test/framework/pki"
)

// issuer is a CA the tests issue serving certificates from, as
// cert-manager's CA issuer would.
type issuer struct{ *pki.CA }

func newIssuer(t *testing.T) issuer {
	t.Helper()
	ca, err := pki.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	return issuer{ca}
}

// certOption changes a serving certificate's options.
type certOption func(*pki.Options)

func withValidity(notBefore, notAfter time.Time) certOption {
	return func(o *pki.Options) { o.NotBefore, o.NotAfter = notBefore, notAfter }
}

// withRSAKey gives the certificate an RSA key in PKCS #1 form, as openssl
// genrsa writes it.
func withRSAKey() certOption { return func(o *pki.Options) { o.RSA = true } }

// issue makes a certificate for 127.0.0.1 and localhost, valid from an
// hour ago for a day, with a random serial.
func (ca issuer) issue(t *testing.T, opts ...certOption) pki.Cert {
	t.Helper()
	o := pki.Options{DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
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
func (ca issuer) secretData(c pki.Cert) map[string][]byte {
	return map[string][]byte{memcachedtls.CertFile: c.CertPEM, memcachedtls.KeyFile: c.KeyPEM, memcachedtls.CAFile: ca.PEM}
}
