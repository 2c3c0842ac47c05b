package registrymirror

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/url"
	"os"
	"slices"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// proxied is a client transport configured as ProxyEnv configures a
// program: through the proxy, trusting only the mirror's CA.
func proxied(t *testing.T, m *Mirror) http.RoundTripper {
	t.Helper()
	u, err := url.Parse(m.ProxyURL)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := os.ReadFile(m.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("%s holds no certificate", m.CAFile)
	}
	return &http.Transport{Proxy: http.ProxyURL(u), TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
}

// A tag pushed to the mirror of quay.io resolves, through the proxy and
// under its quay.io name, to the pushed digest, and the registry records
// the manifest it served.
func TestProxyAnswersForTheMirroredHost(t *testing.T) {
	m, err := Start(t.TempDir(), "quay.io")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	const ref = "quay.io/prometheus/memcached-exporter:v0.16.0"
	pushed, err := m.Push(t.Context(), ref, img)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Head(name.MustParseReference(ref), remote.WithTransport(proxied(t, m)), remote.WithContext(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	if desc.Digest != pushed {
		t.Errorf("%s resolved to %s through the proxy, pushed %s", ref, desc.Digest, pushed)
	}
	want := Request{Host: "quay.io", Method: http.MethodHead, Path: "/v2/prometheus/memcached-exporter/manifests/v0.16.0", Status: http.StatusOK}
	if !slices.Contains(m.Requests(), want) {
		t.Errorf("requests %+v hold no %+v", m.Requests(), want)
	}
	if r := m.Refused(); len(r) != 0 {
		t.Errorf("refused %q", r)
	}
}

// A host that is not mirrored is refused at the proxy, never dialled, and
// recorded; so is a plain-HTTP proxy request.
func TestProxyRefusesOtherHosts(t *testing.T) {
	m, err := Start(t.TempDir(), "quay.io")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	// registry.invalid cannot resolve (RFC 2606): were the proxy to dial,
	// it still would not leave the machine.
	if _, err := remote.Head(name.MustParseReference("registry.invalid/x:1"), remote.WithTransport(proxied(t, m)), remote.WithContext(t.Context())); err == nil {
		t.Error("registry.invalid resolved through the proxy")
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://registry.invalid/v2/", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := proxied(t, m).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("plain proxy request: %s, want 403", resp.Status)
	}
	want := []string{"CONNECT registry.invalid:443", "GET http://registry.invalid/v2/"}
	if got := m.Refused(); !slices.Equal(got, want) {
		t.Errorf("refused %q, want %q", got, want)
	}
	if r := m.Requests(); len(r) != 0 {
		t.Errorf("registries answered %+v", r)
	}
}
