package memcached_test

import (
	"context"
	"crypto/tls"
	"log/slog"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

	"github.com/example-inc/memcached-operator/certs/certstest"
	"github.com/example-inc/memcached-operator/certs/memcachedtls"
	"github.com/example-inc/memcached-operator/hack/local-cluster/memcachedproc"
	"github.com/example-inc/memcached-operator/test/framework/memcache"
)

// sidecar is a running memcachedtls.Run.
type sidecar struct {
	// logs collects its log lines for the test to read while it runs.
	logs *gbytes.Buffer
	// healthURL is the base URL of its health server, at healthAddr.
	healthURL, healthAddr string
}

// startSidecar runs memcachedtls.Run for the Secret volume at dir and the
// memcached whose plain listener is adminAddr, reading the files every
// 50 ms, until the test ends; Run must then return nil.
func startSidecar(t *testing.T, dir, adminAddr string) sidecar {
	t.Helper()
	ports, err := certstest.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	logs := gbytes.NewBuffer()
	healthAddr := "127.0.0.1:" + strconv.Itoa(ports[0])
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- memcachedtls.Run(ctx, memcachedtls.Options{
			Secret:        memcachedtls.Secret{Dir: dir, Name: "web-tls"},
			MemcachedAddr: adminAddr,
			HealthAddr:    healthAddr,
			Interval:      50 * time.Millisecond,
			Log:           slog.New(slog.NewTextHandler(logs, nil)),
		})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Run did not return within 5 s of its context's end")
		}
		if t.Failed() {
			t.Logf("sidecar log:\n%s", logs.Contents())
		}
	})
	return sidecar{logs: logs, healthURL: "http://" + healthAddr, healthAddr: healthAddr}
}

func (s sidecar) log() string { return string(s.logs.Contents()) }

// serialInLog is how the sidecar's log names a certificate it refreshed.
func serialInLog(serial *big.Int) string { return "serial=" + serial.Text(16) }

// TestRunRefreshesMemcachedInPlace renews the certificate as kubelet
// updates a Secret volume, and shows that memcached, the release shipped
// and the oldest supported, serves the new one to new handshakes without
// losing an item or a connection.
func TestRunRefreshesMemcachedInPlace(t *testing.T) {
	memcachedproc.ForEachRelease(t, testRefreshesInPlace)
}

func testRefreshesInPlace(t *testing.T, rel memcachedproc.Release) {
	g := NewWithT(t)
	ctx := t.Context()
	ca := certstest.NewTestCA(t)
	first, renewed := ca.IssueLoopback(t, certstest.CertOptions{}), ca.IssueLoopback(t, certstest.CertOptions{})
	dir := secretVolume(t, ca, first)
	mc := startMemcached(t, rel, dir)
	g.Expect(servedSerial(ctx, mc.tlsAddr, ca)).To(Equal(first.Serial))

	client, err := memcache.DialTLS(ctx, mc.tlsAddr, &tls.Config{RootCAs: ca.Pool()})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = client.Close() }()
	g.Expect(client.Set("before", []byte("the renewal"))).To(Succeed())

	sc := startSidecar(t, dir, mc.adminAddr)
	g.Expect(certstest.WriteSecretVolume(dir, ca.SecretData(renewed))).To(Succeed())
	g.Eventually(func() (*big.Int, error) { return servedSerial(ctx, mc.tlsAddr, ca) }).
		WithTimeout(10 * time.Second).WithPolling(50 * time.Millisecond).Should(Equal(renewed.Serial))

	g.Expect(client.Get("before")).To(Equal([]byte("the renewal")), "the connection opened before the renewal, and its item")
	// memcached may have loaded the renewed files in answer to a refresh
	// the sidecar sent for the first ones, and the sidecar then sends
	// another at its next tick: the log line comes when memcached answers.
	g.Eventually(sc.log).WithTimeout(5 * time.Second).Should(ContainSubstring(
		serialInLog(renewed.Serial) + " notAfter=" + renewed.NotAfter.UTC().Format(time.RFC3339)))
	g.Expect(sc.log()).NotTo(ContainSubstring("PRIVATE KEY"))
	g.Expect(memcachedtls.ReadServed(ctx, http.DefaultClient, sc.healthAddr)).To(And(
		HaveField("SerialNumber", renewed.Serial.Text(16)), HaveField("NotAfter", renewed.NotAfter.UTC().Truncate(time.Second))),
		"what the health server says memcached serves")
}

// TestRunDoesNotSendAnUnusableSecret starts the sidecar before memcached
// listens, as a pod may, so its first refreshes fail and are retried; then
// it gives it a certificate with the wrong
// key: memcached must keep the certificate it has, since a refresh_certs
// with those files would leave it with a certificate and no key.
func TestRunDoesNotSendAnUnusableSecret(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ca := certstest.NewTestCA(t)
	first, renewed, other := ca.IssueLoopback(t, certstest.CertOptions{}), ca.IssueLoopback(t, certstest.CertOptions{}), ca.IssueLoopback(t, certstest.CertOptions{})
	dir := secretVolume(t, ca, first)
	mc := newMemcached(t, memcachedproc.Shipped())
	sc := startSidecar(t, dir, mc.adminAddr)
	g.Eventually(sc.log).WithTimeout(5 * time.Second).Should(ContainSubstring("connection refused"))
	_, err := memcachedtls.ReadServed(ctx, http.DefaultClient, sc.healthAddr)
	g.Expect(err).To(MatchError(ContainSubstring("503 Service Unavailable: no certificate handed to memcached yet")))
	mc.start(t, dir)
	// The first refresh after a start is sent even though the files are
	// those memcached started with.
	g.Eventually(sc.log).WithTimeout(5 * time.Second).Should(ContainSubstring(serialInLog(first.Serial)))

	broken := ca.SecretData(renewed)
	broken[memcachedtls.KeyFile] = other.KeyPEM
	g.Expect(certstest.WriteSecretVolume(dir, broken)).To(Succeed())
	g.Eventually(sc.log).WithTimeout(5 * time.Second).
		Should(ContainSubstring(`Secret \"web-tls\": tls.key does not match the certificate in tls.crt`))
	g.Expect(servedSerial(ctx, mc.tlsAddr, ca)).To(Equal(first.Serial), "memcached's certificate after an unusable Secret")
	g.Expect(memcachedtls.ReadServed(ctx, http.DefaultClient, sc.healthAddr)).To(HaveField("SerialNumber", first.Serial.Text(16)),
		"what the health server says memcached serves after an unusable Secret")
	g.Consistently(func() int { return strings.Count(sc.log(), "does not match") }).
		WithTimeout(300*time.Millisecond).WithPolling(50*time.Millisecond).Should(Equal(1), "a problem is logged once, not at every tick")

	g.Expect(certstest.WriteSecretVolume(dir, ca.SecretData(renewed))).To(Succeed())
	g.Eventually(func() (*big.Int, error) { return servedSerial(ctx, mc.tlsAddr, ca) }).
		WithTimeout(10 * time.Second).WithPolling(50 * time.Millisecond).Should(Equal(renewed.Serial))
}
