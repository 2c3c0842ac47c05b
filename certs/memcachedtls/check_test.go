package memcachedtls_test

import (
	"bytes"
	"encoding/pem"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/example-inc/memcached-operator/certs/certstest"
	"github.com/example-inc/memcached-operator/certs/memcachedtls"
)

// TestCheck is the init container's verdict on every kind of Secret an
// admin can get wrong, with the sentence the operator puts in the
// Memcached's status.
func TestCheck(t *testing.T) {
	ca := certstest.NewTestCA(t)
	now := time.Now().UTC().Truncate(time.Second)
	valid := ca.IssueLoopback(t, certstest.CertOptions{})
	other := ca.IssueLoopback(t, certstest.CertOptions{})
	expired := ca.IssueLoopback(t, certstest.CertOptions{NotBefore: now.Add(-48 * time.Hour), NotAfter: now.Add(-time.Hour)})
	early := ca.IssueLoopback(t, certstest.CertOptions{NotBefore: now.Add(time.Hour), NotAfter: now.Add(48 * time.Hour)})
	rsaPKCS1 := ca.IssueLoopback(t, certstest.CertOptions{RSA: true})
	// data is the valid Secret with change applied; a nil value removes
	// the key.
	data := func(c certstest.Cert, change map[string][]byte) map[string][]byte {
		d := ca.SecretData(c)
		for k, v := range change {
			if v == nil {
				delete(d, k)
			} else {
				d[k] = v
			}
		}
		return d
	}
	garbage := []byte("not a certificate\n")
	badDER := []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
	const crt, key, caCrt = memcachedtls.CertFile, memcachedtls.KeyFile, memcachedtls.CAFile

	tests := []struct {
		name     string
		data     map[string][]byte
		clientCA bool
		// after changes the volume once written.
		after func(t *testing.T, dir string)
		// reason and message are the problem; "" when the files are usable.
		reason  memcachedtls.Reason
		message string
	}{
		{name: "valid", data: data(valid, nil)},
		{name: "valid, with client certificates required", data: data(valid, nil), clientCA: true},
		{name: "valid without ca.crt, which only client certificates need", data: data(valid, map[string][]byte{caCrt: nil})},
		{name: "an RSA key in PKCS #1 form", data: data(rsaPKCS1, nil)},
		{name: "the Secret does not exist: kubelet mounts it empty", data: map[string][]byte{},
			reason: memcachedtls.ReasonNotFound, message: `Secret "web-tls" does not exist or holds no keys: it needs tls.crt and tls.key`},
		{name: "no tls.crt", data: data(valid, map[string][]byte{crt: nil}),
			reason: memcachedtls.ReasonMissing, message: `Secret "web-tls": tls.crt is missing`},
		{name: "no tls.key", data: data(valid, map[string][]byte{key: nil}),
			reason: memcachedtls.ReasonMissing, message: `Secret "web-tls": tls.key is missing`},
		{name: "tls.key cannot be read", data: data(valid, nil), after: func(t *testing.T, dir string) {
			// Root reads any file whatever its mode; nobody reads a directory.
			link := filepath.Join(dir, key)
			g := NewWithT(t)
			g.Expect(os.Remove(link)).To(Succeed())
			g.Expect(os.Mkdir(link, 0o755)).To(Succeed())
		}, reason: memcachedtls.ReasonUnreadable, message: `Secret "web-tls": tls.key cannot be read: is a directory`},
		{name: "tls.crt is not PEM", data: data(valid, map[string][]byte{crt: garbage}),
			reason: memcachedtls.ReasonNoPEM, message: `Secret "web-tls": tls.crt holds no PEM certificate`},
		{name: "tls.crt holds only a key", data: data(valid, map[string][]byte{crt: valid.KeyPEM}),
			reason: memcachedtls.ReasonNoPEM, message: `Secret "web-tls": tls.crt holds no PEM certificate`},
		{name: "tls.crt's certificate is not DER", data: data(valid, map[string][]byte{crt: badDER}),
			reason: memcachedtls.ReasonMalformed},
		{name: "tls.key is not PEM", data: data(valid, map[string][]byte{key: garbage}),
			reason: memcachedtls.ReasonNoPEM, message: `Secret "web-tls": tls.key holds no PEM private key`},
		{name: "tls.key is another certificate's key", data: data(valid, map[string][]byte{key: other.KeyPEM}),
			reason: memcachedtls.ReasonKeyMismatch, message: `Secret "web-tls": tls.key does not match the certificate in tls.crt`},
		{name: "expired", data: data(expired, nil),
			reason:  memcachedtls.ReasonExpired,
			message: `Secret "web-tls": the certificate in tls.crt expired at ` + now.Add(-time.Hour).Format(time.RFC3339)},
		{name: "not yet valid", data: data(early, nil),
			reason:  memcachedtls.ReasonNotYetValid,
			message: `Secret "web-tls": the certificate in tls.crt is not valid until ` + now.Add(time.Hour).Format(time.RFC3339)},
		{name: "no ca.crt with client certificates required", data: data(valid, map[string][]byte{caCrt: nil}), clientCA: true,
			reason: memcachedtls.ReasonMissing, message: `Secret "web-tls": ca.crt is missing`},
		{name: "ca.crt is not PEM with client certificates required", data: data(valid, map[string][]byte{caCrt: garbage}), clientCA: true,
			reason: memcachedtls.ReasonNoPEM, message: `Secret "web-tls": ca.crt holds no PEM certificate`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tls")
			NewWithT(t).Expect(certstest.WriteSecretVolume(dir, maps.Clone(tt.data))).To(Succeed())
			if tt.after != nil {
				tt.after(t, dir)
			}
			leaf, err := memcachedtls.Secret{Dir: dir, Name: "web-tls", ClientCA: tt.clientCA}.Check(now)
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("Check: %v, want the files accepted", err)
				}
				if block, _ := pem.Decode(tt.data[crt]); leaf == nil || !bytes.Equal(leaf.Raw, block.Bytes) {
					t.Errorf("Check returned %v, want the certificate of tls.crt", leaf)
				}
				return
			}
			var p *memcachedtls.Problem
			if !errors.As(err, &p) {
				t.Fatalf("Check: %v (%T), want a *Problem %s", err, err, tt.reason)
			}
			if p.Reason != tt.reason {
				t.Errorf("reason %s, want %s (%v)", p.Reason, tt.reason, err)
			}
			if tt.message != "" && err.Error() != tt.message {
				t.Errorf("message\n  %s\nwant\n  %s", err, tt.message)
			}
		})
	}
}
