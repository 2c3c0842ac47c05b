package app

import (
	"testing"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
)

// The registry is the process's and the manager is not: a second manager
// in one process reports to the Metrics the first registered, and a
// collector of another type under the same name is an error.
func TestRegisterReconcilerMetrics(t *testing.T) {
	g := NewWithT(t)
	reg := prometheus.NewPedanticRegistry()
	first, err := registerReconcilerMetrics(reg)
	g.Expect(err).NotTo(HaveOccurred())
	second, err := registerReconcilerMetrics(reg)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(second).To(BeIdenticalTo(first), "a second registration made new Metrics, which /metrics would not serve")

	other := prometheus.NewRegistry()
	other.MustRegister(prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "memcached_operator_memcached_blocked"},
		[]string{"namespace", "name", "reason"}))
	if _, err := registerReconcilerMetrics(other); err == nil {
		t.Error("registered over another collector of the same metric")
	}
}
