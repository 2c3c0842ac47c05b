package certs_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"

	"github.com/example-inc/memcached-operator/certs"
	"github.com/example-inc/memcached-operator/certs/certstest"
)

// newKeyPair returns a self-signed certificate and key in PEM, like a
// cert-manager SelfSigned issuer's, and the certificate's serial number.
func newKeyPair(t *testing.T, host string) (map[string][]byte, *big.Int) {
	t.Helper()
	g := NewWithT(t)
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(host, nil, nil)
	g.Expect(err).NotTo(HaveOccurred())
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	g.Expect(err).NotTo(HaveOccurred())
	return map[string][]byte{certs.CertFile: certPEM, certs.KeyFile: keyPEM, certs.CAFile: certPEM}, pair.Leaf.SerialNumber
}

// serve runs a TLS server configured by src on 127.0.0.1 and returns its
// address; servedSerial tells which certificate it presents.
func serve(t *testing.T, src certs.Source) string {
	t.Helper()
	cfg := &tls.Config{}
	src.ConfigureTLS(cfg)
	return certstest.ServeTLS(t, cfg)
}

// startAndServe starts src's watch of its files until the test ends, and
// serves its certificate (serve).
func startAndServe(t *testing.T, src certs.Source) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- src.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the source's watch: %v", err)
		}
	})
	return serve(t, src)
}

func servedSerial(addr string) (*big.Int, error) {
	cert, err := servedCertificate(addr)
	if err != nil {
		return nil, err
	}
	return cert.SerialNumber, nil
}

func servedCertificate(addr string) (*x509.Certificate, error) {
	st, err := certstest.Handshake(context.Background(), addr, certstest.Offer{})
	if err != nil {
		return nil, err
	}
	return st.PeerCertificates[0], nil
}

// A renewed Secret reaches the server without a restart: kubelet swaps the
// volume's files, and the next handshake presents the new certificate. For
// both servers that serve a mounted certificate: the webhook server's and,
// with --metrics-cert-path, the metrics server's. Files written in place
// (not through a symlink swap) are picked up too.
func TestMountedSourceReloadsRenewedCertificate(t *testing.T) {
	swap := func(dir string, files map[string][]byte) error { return certstest.WriteSecretVolume(dir, files) }
	for _, tt := range []struct {
		name      string
		newSource func(dir string) (certs.Source, error)
		write     func(dir string, files map[string][]byte) error
	}{
		{"webhook", func(dir string) (certs.Source, error) { return certs.NewWebhookSource(certs.WebhookOptions{Dir: dir}) }, swap},
		{"metrics", func(dir string) (certs.Source, error) { return certs.NewMetricsSource(dir, logr.Discard()) }, swap},
		{"rewritten in place", func(dir string) (certs.Source, error) { return certs.NewMounted(dir) }, func(dir string, files map[string][]byte) error {
			for name, data := range files {
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
					return err
				}
			}
			return nil
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			dir := t.TempDir()
			first, firstSerial := newKeyPair(t, "webhook-service.system.svc")
			g.Expect(tt.write(dir, first)).To(Succeed())

			src, err := tt.newSource(dir)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(src.NeedLeaderElection()).To(BeFalse())
			addr := startAndServe(t, src)
			g.Expect(servedSerial(addr)).To(Equal(firstSerial))

			for i := range 2 { // twice: the watch must survive a swap
				renewed, renewedSerial := newKeyPair(t, "webhook-service.system.svc")
				g.Expect(tt.write(dir, renewed)).To(Succeed())
				g.Eventually(func() (*big.Int, error) { return servedSerial(addr) }).
					WithTimeout(15*time.Second).WithPolling(100*time.Millisecond).
					Should(Equal(renewedSerial), "renewal %d", i+1)
			}
		})
	}
}

func TestNewMountedFailsClearly(t *testing.T) {
	pair, _ := newKeyPair(t, "a")
	other, _ := newKeyPair(t, "b")
	tests := []struct {
		name    string
		files   map[string][]byte
		wantErr []string
	}{
		{name: "empty directory", files: nil, wantErr: []string{"tls.crt", "no such file"}},
		{name: "key missing", files: map[string][]byte{certs.CertFile: pair[certs.CertFile]}, wantErr: []string{"tls.key"}},
		{name: "key of another certificate", files: map[string][]byte{certs.CertFile: pair[certs.CertFile], certs.KeyFile: other[certs.KeyFile]},
			wantErr: []string{"private key does not match"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tt.files {
				NewWithT(t).Expect(os.WriteFile(filepath.Join(dir, name), data, 0o600)).To(Succeed())
			}
			_, err := certs.NewMounted(dir)
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range append(tt.wantErr, dir) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
	if _, err := certs.NewMounted(""); err == nil {
		t.Error("no error for an empty directory name")
	}
}

// Without a metrics certificate, controller-runtime's fallback applies: the
// source leaves GetCertificate unset. With one, it is served.
func TestMetricsSource(t *testing.T) {
	g := NewWithT(t)
	fallback, err := certs.NewMetricsSource("", logr.Discard())
	g.Expect(err).NotTo(HaveOccurred())
	cfg := &tls.Config{}
	fallback.ConfigureTLS(cfg)
	g.Expect(cfg.GetCertificate).To(BeNil())
	g.Expect(fallback.Start(context.Background())).To(Succeed())

	dir := t.TempDir()
	pair, serial := newKeyPair(t, "metrics")
	g.Expect(certstest.WriteSecretVolume(dir, pair)).To(Succeed())
	mounted, err := certs.NewMetricsSource(dir, logr.Discard())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(servedSerial(serve(t, mounted))).To(Equal(serial))

	// A directory that is not there, or holds something else than a
	// certificate, is a mistake: the operator stops at once.
	_, err = certs.NewMetricsSource(filepath.Join(t.TempDir(), "missing"), logr.Discard())
	g.Expect(err).To(MatchError(HavePrefix("metrics: mounted certificate in")))
	stray := t.TempDir()
	g.Expect(certstest.WriteSecretVolume(stray, map[string][]byte{certs.CAFile: pair[certs.CAFile]})).To(Succeed())
	_, err = certs.NewMetricsSource(stray, logr.Discard())
	g.Expect(err).To(MatchError(ContainSubstring("tls.crt")))
}

// The bundle mounts the Secret OpenShift's service CA writes for the
// metrics Service as an optional volume: kubelet starts the pod with the
// directory empty and fills it once the Secret exists, on OpenShift only.
// Until then the endpoint serves a self-signed certificate; then the mounted
// one, renewals included, without a restart.
func TestMetricsSourceAwaitsMountedCertificate(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	// What kubelet makes of a missing optional Secret.
	g.Expect(certstest.WriteSecretVolume(dir, nil)).To(Succeed())
	src, err := certs.NewMetricsSource(dir, logr.Discard())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(src.Ready(nil)).To(Succeed())
	addr := startAndServe(t, src)
	fallback, err := servedCertificate(addr)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fallback.DNSNames).To(Equal([]string{"localhost"}))

	for i := range 2 { // the first certificate, then its renewal
		pair, serial := newKeyPair(t, "metrics.ns.svc")
		g.Expect(certstest.WriteSecretVolume(dir, pair)).To(Succeed())
		g.Eventually(func() (*big.Int, error) { return servedSerial(addr) }).
			WithTimeout(30*time.Second).WithPolling(200*time.Millisecond).
			Should(Equal(serial), "certificate %d", i+1)
	}
}

func TestParseMode(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    certs.Mode
		wantErr bool
	}{
		{in: "mounted", want: certs.ModeMounted},
		{in: "local", want: certs.ModeLocal},
		{in: "", wantErr: true},
		{in: "Local", wantErr: true},
		{in: "self-signed", wantErr: true},
	} {
		got, err := certs.ParseMode(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseMode(%q) = %q, %v", tt.in, got, err)
		}
		if err != nil && !strings.Contains(err.Error(), "mounted, local") {
			t.Errorf("ParseMode(%q): error %q does not list the modes", tt.in, err)
		}
	}
}

func TestNewWebhookSourceFailsClearly(t *testing.T) {
	tests := []struct {
		name    string
		opts    certs.WebhookOptions
		wantErr string
	}{
		{name: "unknown mode", opts: certs.WebhookOptions{Mode: "vault"}, wantErr: `unknown webhook certificate mode "vault"`},
		{name: "mounted without files", opts: certs.WebhookOptions{Dir: "/nonexistent/serving-certs"}, wantErr: "mounted certificate in /nonexistent/serving-certs"},
		{name: "local without manifests", opts: certs.WebhookOptions{Mode: certs.ModeLocal, Dir: "x", Port: 9443, ManifestsPath: "/nonexistent/manifests.yaml"},
			wantErr: "reading the webhook configurations"},
		{name: "local without REST config", opts: certs.WebhookOptions{Mode: certs.ModeLocal, Dir: "x", Port: 9443, ManifestsPath: "mounted_test.go"},
			wantErr: "no REST config"},
		{name: "local on no port", opts: certs.WebhookOptions{Mode: certs.ModeLocal, Dir: "x", ManifestsPath: "mounted_test.go", RESTConfig: &rest.Config{}},
			wantErr: "webhook port 0 is not a TCP port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := certs.NewWebhookSource(tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}
