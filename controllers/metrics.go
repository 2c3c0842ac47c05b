package controllers

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
)

// Metrics are the reconciler's own Prometheus metrics, beside those
// controller-runtime keeps for every controller (reconcile totals, errors,
// durations). It is a prometheus.Collector: cmd/manager/app registers one on
// controller-runtime's registry (sigs.k8s.io/controller-runtime/pkg/metrics),
// which the manager's /metrics serves. A reconciler made without one keeps
// its own, which nobody collects, so tests can run several reconcilers in
// one process without registering twice.
type Metrics struct {
	// blocked is 1 for each Memcached the reconciler leaves alone until a
	// user acts (see blockedError), labelled with why; a Memcached that is
	// not blocked has no series, so `count(...)` and an alert on the series
	// see only blocked ones and no stale zero outlives a deleted object.
	blocked *prometheus.GaugeVec

	mu sync.Mutex
	// reasons is the reason of each blocked Memcached's series, so that a
	// change of reason removes the old series after the new one is set: a
	// scrape in between never finds the Memcached unblocked, which would
	// restart the wait of an alert on it.
	reasons map[types.NamespacedName]string
}

// NewMetrics returns the reconciler's metrics, registered nowhere.
func NewMetrics() *Metrics {
	return &Metrics{
		blocked: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "memcached_operator",
			Name:      "memcached_blocked",
			Help: "1 while the operator leaves a Memcached's objects alone until a user acts: " +
				"reason NameInUse (another object has its name) or SizeOutOfPolicy (spec.size outside the allowed range).",
		}, []string{"namespace", "name", "reason"}),
		reasons: map[types.NamespacedName]string{},
	}
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) { m.blocked.Describe(ch) }

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) { m.blocked.Collect(ch) }

// setBlocked records that key is blocked for reason, and for no other.
func (m *Metrics) setBlocked(key types.NamespacedName, reason string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.blocked.WithLabelValues(key.Namespace, key.Name, reason).Set(1)
	if prev, ok := m.reasons[key]; ok && prev != reason {
		m.blocked.DeleteLabelValues(key.Namespace, key.Name, prev)
	}
	m.reasons[key] = reason
}

// clearBlocked removes key's series: it is no longer blocked, or gone.
func (m *Metrics) clearBlocked(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if prev, ok := m.reasons[key]; ok {
		m.blocked.DeleteLabelValues(key.Namespace, key.Name, prev)
		delete(m.reasons, key)
	}
}
