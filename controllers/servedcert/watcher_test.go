package servedcert

import (
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/example-inc/memcached-operator/certs/certstest"
	"github.com/example-inc/memcached-operator/certs/memcachedtls"
)

func TestNear(t *testing.T) {
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	served := memcachedtls.Served{NotBefore: start, NotAfter: start.Add(100 * time.Hour)}
	tests := []struct {
		at   time.Duration
		want bool
	}{
		{0, false},
		{75*time.Hour - time.Second, false},
		{75*time.Hour + time.Second, true},
		{100 * time.Hour, true},
		{200 * time.Hour, true},
	}
	for _, tt := range tests {
		if got := Near(served, start.Add(tt.at)); got != tt.want {
			t.Errorf("Near at %s of a 100h certificate = %v, want %v", tt.at, got, tt.want)
		}
	}
}

// A round asks each running pod at its IP, never through the proxy of the
// operator's environment, counts those that answer, lists
// those near or past their end soonest first, and publishes a change once.
func TestWatcherChecksEachPod(t *testing.T) {
	g := NewWithT(t)
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	ports, err := certstest.FreePorts(1)
	g.Expect(err).NotTo(HaveOccurred())
	port := ports[0]
	serve := func(ip string, s memcachedtls.Served) {
		l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
		g.Expect(err).NotTo(HaveOccurred())
		srv := &http.Server{ReadHeaderTimeout: time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_ = json.NewEncoder(w).Encode(s)
		})}
		go func() { _ = srv.Serve(l) }()
		t.Cleanup(func() { _ = srv.Close() })
	}
	valid := memcachedtls.Served{SerialNumber: "1", NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour)}
	near := memcachedtls.Served{SerialNumber: "2", NotBefore: now.Add(-10 * time.Hour), NotAfter: now.Add(time.Hour)}
	ended := memcachedtls.Served{SerialNumber: "3", NotBefore: now.Add(-10 * time.Hour), NotAfter: now.Add(-time.Minute)}
	serve("127.0.0.2", valid)
	serve("127.0.0.3", near)
	serve("127.0.0.4", ended)
	pod := func(name, ip string, phase corev1.PodPhase) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}, Status: corev1.PodStatus{Phase: phase, PodIP: ip}}
	}
	leaving := pod("cache-leaving", "127.0.0.3", corev1.PodRunning)
	leaving.DeletionTimestamp = &metav1.Time{Time: now}
	pods := []corev1.Pod{
		pod("cache-a", "127.0.0.2", corev1.PodRunning),
		pod("cache-b", "127.0.0.3", corev1.PodRunning),
		pod("cache-c", "127.0.0.4", corev1.PodRunning),
		pod("cache-silent", "127.0.0.5", corev1.PodRunning), // nothing listens
		pod("cache-pending", "", corev1.PodPending),
		leaving,
	}

	w := NewWatcher(nil, Options{Interval: time.Minute, Timeout: time.Second, Port: port})
	// Go never proxies loopback, so the addresses here cannot show it:
	// the transport itself must have no proxy.
	g.Expect(w.http.Transport.(*http.Transport).Proxy).To(BeNil(), "the proxy of the watcher's transport")
	w.now = func() time.Time { return now }
	r := w.check(t.Context(), pods)
	g.Expect(r).To(Equal(Report{Answered: 3, Expiring: []Expiring{
		{Pod: "cache-c", NotAfter: ended.NotAfter, Expired: true},
		{Pod: "cache-b", NotAfter: near.NotAfter},
	}}))

	mc := types.NamespacedName{Namespace: "shop", Name: "cache"}
	w.publish(map[types.NamespacedName]Report{mc: r})
	g.Expect(w.Changes()).To(Receive(HaveField("Object.GetName()", "cache")))
	got, known := w.Report(mc)
	g.Expect(known).To(BeTrue())
	g.Expect(got).To(Equal(r))
	g.Expect(testutil.ToFloat64(w.expiring.WithLabelValues("shop", "cache", "cache-b"))).To(BeEquivalentTo(near.NotAfter.Unix()))
	g.Expect(testutil.CollectAndCount(w)).To(Equal(2))

	// The same pods expiring, another count of answers: no event.
	w.publish(map[types.NamespacedName]Report{mc: {Answered: 2, Expiring: r.Expiring}})
	g.Expect(w.Changes()).NotTo(Receive())

	// Renewed everywhere: an event, and the series gone.
	w.publish(map[types.NamespacedName]Report{mc: {Answered: 3}})
	g.Expect(w.Changes()).To(Receive())
	g.Expect(testutil.CollectAndCount(w)).To(Equal(0))
}
