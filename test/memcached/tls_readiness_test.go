package memcached_test

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/example-inc/memcached-operator/certs/certstest"
	"github.com/example-inc/memcached-operator/certs/memcachedtls"
	"github.com/example-inc/memcached-operator/test/framework/memcache"
)

// get is the status of GET url, within 5 s.
func get(ctx context.Context, url string, header http.Header) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// TestReadyzFollowsMemcached probes the sidecar's health server as kubelet
// would: ready while memcached answers on its plain listener, not ready
// once it is gone, and never holding a request that is too large.
func TestReadyzFollowsMemcached(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	dir, mc := startShippedTLS(t)
	s := startSidecar(t, dir, mc.adminAddr)

	// Run listens in its own goroutine.
	g.Eventually(get).WithArguments(ctx, s.healthURL+"/readyz", http.Header(nil)).
		WithTimeout(5 * time.Second).WithPolling(20 * time.Millisecond).Should(Equal(http.StatusOK))
	g.Expect(get(ctx, s.healthURL+"/readyz", http.Header{"X-Large": {strings.Repeat("x", 8<<10)}})).
		To(Equal(http.StatusRequestHeaderFieldsTooLarge))
	g.Expect(get(ctx, s.healthURL+"/metrics", nil)).To(Equal(http.StatusNotFound))

	g.Expect(mc.proc.Kill()).To(Succeed())
	g.Expect(get(ctx, s.healthURL+"/readyz", nil)).To(Equal(http.StatusServiceUnavailable))
}

// TestTCPProbeOfTheTLSPortIsAHandshakeError is why memcached's readiness
// goes through the sidecar: kubelet's TCP probe connects and closes at
// once, and memcached (the release shipped, as 1.6.18) counts such a
// connection in ssl_handshake_errors, the figure an admin watches for
// clients that fail to connect, whenever the close arrives before its
// SSL_accept (5 to 20 of 20 here).
func TestTCPProbeOfTheTLSPortIsAHandshakeError(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	_, mc := startShippedTLS(t)
	admin, err := memcache.Dial(ctx, mc.adminAddr)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = admin.Close() }()
	const probes = 20
	for range probes {
		conn, err := net.Dial("tcp", mc.tlsAddr)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(conn.Close()).To(Succeed())
	}
	errorsCounted := func() (int, error) {
		stats, err := admin.Stats()
		if err != nil {
			return 0, err
		}
		return strconv.Atoi(stats["ssl_handshake_errors"])
	}
	g.Eventually(errorsCounted).WithTimeout(5*time.Second).Should(BeNumerically(">", 0), "ssl_handshake_errors after %d TCP probes", probes)
	n, _ := errorsCounted()
	t.Logf("%d TCP probes of the TLS port, %d handshake errors counted", probes, n)
}

// TestReadyzRefusesWhatIsNotMemcached: something that takes the
// connection but does not answer version as memcached does is not a ready
// memcached, and one that never answers does not hold the probe.
func TestReadyzRefusesWhatIsNotMemcached(t *testing.T) {
	for name, answer := range map[string]string{
		"an error":  "ERROR\r\n",
		"no answer": "",
	} {
		t.Run(name, func(t *testing.T) {
			addr := certstest.ServeConn(t, nil, func(conn net.Conn) {
				if _, err := bufio.NewReader(conn).ReadString('\n'); err != nil || answer == "" {
					// Hold the connection until the client gives up.
					_, _ = conn.Read(make([]byte, 1))
					return
				}
				_, _ = conn.Write([]byte(answer))
			})
			srv := httptest.NewServer(memcachedtls.ReadinessHandler(addr))
			t.Cleanup(srv.Close)
			if code, err := get(t.Context(), srv.URL+"/readyz", nil); err != nil || code != http.StatusServiceUnavailable {
				t.Errorf("GET /readyz: %d, %v; want 503 within the probe's timeout", code, err)
			}
		})
	}
}
