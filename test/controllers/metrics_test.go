package controllers_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
)

// blockedSeries returns a function that gathers reconcilerMetrics, as
// /metrics would, and returns mc's memcached_operator_memcached_blocked
// series: value by reason. Other Memcached's series are left out: those of
// earlier specs go only once the operator has seen them deleted.
func blockedSeries(mc *cachev1.Memcached) func(Gomega) map[string]float64 {
	return func(g Gomega) map[string]float64 {
		// Pedantic: the registry also checks that what Collect sends
		// matches what Describe declares.
		reg := prometheus.NewPedanticRegistry()
		g.Expect(reg.Register(reconcilerMetrics)).To(Succeed())
		families, err := reg.Gather()
		g.Expect(err).NotTo(HaveOccurred())
		series := map[string]float64{}
		for _, f := range families {
			g.Expect(f.GetName()).To(Equal("memcached_operator_memcached_blocked"))
			for _, m := range f.GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				g.Expect(labels).To(HaveLen(3), "namespace, name and reason")
				if labels["namespace"] == mc.Namespace && labels["name"] == mc.Name {
					series[labels["reason"]] = m.GetGauge().GetValue()
				}
			}
		}
		return series
	}
}

// The gauge of each reason alone is checked where the reconciler is blocked
// for it (memcached_controller_test.go).
var _ = Describe("The blocked gauge", func() {
	It("keeps one series per Memcached, of the current reason", func() {
		theirs := gen.UnrelatedService(watchedNS, fmt.Sprintf("mc-%d", nameSeq.Add(1)))
		Expect(k8s.Create(ctx, theirs)).To(Succeed())
		DeferCleanup(func() { Expect(k8s.Delete(ctx, theirs)).To(Succeed()) })
		// The size is checked before the names are: size first, then, once
		// the size is allowed, the name.
		mc := gen.Memcached(watchedNS, theirs.Name, gen.WithSize(40))
		create(mc)
		Eventually(blockedSeries(mc)).Should(Equal(map[string]float64{cachev1.ReasonSizeOutOfPolicy: 1}))

		setSize(mc, 3)
		// The status is written after the series is set.
		Eventually(degradedOf(mc)).Should(HaveField("Reason", cachev1.ReasonNameInUse))
		Expect(blockedSeries(mc)(Default)).To(Equal(map[string]float64{cachev1.ReasonNameInUse: 1}))

		Expect(k8s.Delete(ctx, mc)).To(Succeed())
		Eventually(blockedSeries(mc)).Should(BeEmpty())
	})
})
