package controllers_test

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apitypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/controllers"
	"github.com/example-inc/memcached-operator/controllers/monitoring"
	"github.com/example-inc/memcached-operator/controllers/operand"
	"github.com/example-inc/memcached-operator/hack/repo"
)

// The Prometheus Operator's CRDs are installed by this container only; the
// rest of the suite runs as on a cluster without them.
var _ = Describe("monitoring where the Prometheus Operator's API is served", Ordered, func() {
	BeforeAll(func() {
		installAPI(repo.PrometheusOperatorCRDDir(), controllers.PrometheusOperatorServed)
		opts := suiteOptions()
		opts.PrometheusOperator = true
		runOperator(opts)
	})

	podMonitorOf := func(g Gomega, mc *cachev1.Memcached) *monitoringv1.PodMonitor {
		return objectOf(g, mc, &monitoringv1.PodMonitor{})
	}
	ruleOf := func(g Gomega, mc *cachev1.Memcached) *monitoringv1.PrometheusRule {
		return objectOf(g, mc, &monitoringv1.PrometheusRule{})
	}
	containersOf := func(g Gomega, mc *cachev1.Memcached) []string {
		var names []string
		for _, c := range objectOf(g, mc, &appsv1.Deployment{}).Spec.Template.Spec.Containers {
			names = append(names, c.Name)
		}
		return names
	}

	It("gives a monitored Memcached a PodMonitor of its exporters and its alerts, both its own", func() {
		mc := createMemcached(watchedNS, gen.WithSize(2), gen.WithMonitoring(true))
		eventuallyAvailable(mc, 2)
		Expect(k8s.Get(ctx, key(mc), mc)).To(Succeed())
		Eventually(containersOf).WithArguments(mc).Should(Equal([]string{"memcached", monitoring.ExporterContainer}))

		pm := podMonitorOf(Default, mc)
		Expect(metav1.IsControlledBy(pm, mc)).To(BeTrue())
		Expect(pm.Spec).To(Equal(monitoring.PodMonitorSpec(mc.Name, operand.SelectorLabels(mc.Name))))
		Expect(pm.Spec.PodMetricsEndpoints[0].RelabelConfigs).To(ConsistOf(HaveField("TargetLabel", "memcached")))
		rule := ruleOf(Default, mc)
		Expect(metav1.IsControlledBy(rule, mc)).To(BeTrue())
		Expect(rule.Spec).To(Equal(monitoring.Rules(mc.Namespace, mc.Name)))

		By("writing neither again when the Memcached changes in nothing they hold")
		path := func(resource string) string {
			return "/apis/" + monitoringv1.SchemeGroupVersion.String() + "/namespaces/" + mc.Namespace + "/" + resource + "/" + mc.Name
		}
		pmWrites, ruleWrites := op.requests.To(http.MethodPatch, path(monitoringv1.PodMonitorName)),
			op.requests.To(http.MethodPatch, path(monitoringv1.PrometheusRuleName))
		Expect(pmWrites).To(Equal(1), "the PodMonitor's creation")
		Expect(ruleWrites).To(Equal(1), "the PrometheusRule's creation")
		before := reconciles()
		setSize(mc, 3)
		settled(before, 1)
		eventuallyAvailable(mc, 3)
		Expect(op.requests.To(http.MethodPatch, path(monitoringv1.PodMonitorName))).To(Equal(pmWrites))
		Expect(op.requests.To(http.MethodPatch, path(monitoringv1.PrometheusRuleName))).To(Equal(ruleWrites))
	})

	It("repairs a hand edit and recreates a deleted one", func() {
		mc := createMemcached(watchedNS, gen.WithSize(1), gen.WithMonitoring(true))
		eventuallyAvailable(mc, 1)

		pm := podMonitorOf(Default, mc)
		pm.Spec.PodMetricsEndpoints[0].Interval = "5m"
		pm.Spec.PodMetricsEndpoints[0].RelabelConfigs = nil
		Expect(k8s.Update(ctx, pm)).To(Succeed())
		Eventually(func(g Gomega) monitoringv1.PodMonitorSpec { return podMonitorOf(g, mc).Spec }).
			Should(Equal(monitoring.PodMonitorSpec(mc.Name, operand.SelectorLabels(mc.Name))))

		rule := ruleOf(Default, mc)
		rule.Spec.Groups = nil
		Expect(k8s.Update(ctx, rule)).To(Succeed())
		Eventually(func(g Gomega) monitoringv1.PrometheusRuleSpec { return ruleOf(g, mc).Spec }).Should(Equal(monitoring.Rules(mc.Namespace, mc.Name)))

		Expect(k8s.Delete(ctx, ruleOf(Default, mc))).To(Succeed())
		Eventually(func(g Gomega) apitypes.UID { return ruleOf(g, mc).UID }).ShouldNot(Equal(rule.UID))
		Eventually(eventsOf(mc)).Should(ContainElements(
			"Repaired: undid a change to the PodMonitor that the Memcached does not ask for",
			"Repaired: undid a change to the PrometheusRule that the Memcached does not ask for",
			"Repaired: recreated the PrometheusRule, which had been deleted"))
	})

	It("removes both and the exporter when monitoring is turned off, and makes none for a Memcached without it", func() {
		mc := createMemcached(watchedNS, gen.WithSize(1), gen.WithMonitoring(true))
		eventuallyAvailable(mc, 1)
		Eventually(getOf(mc, &monitoringv1.PodMonitor{})).Should(Succeed())

		Expect(k8s.Patch(ctx, gen.Memcached(mc.Namespace, mc.Name), client.RawPatch("application/merge-patch+json",
			[]byte(`{"spec":{"monitoring":{"enabled":false}}}`)))).To(Succeed())
		Eventually(getOf(mc, &monitoringv1.PodMonitor{})).Should(Satisfy(apierrors.IsNotFound))
		Eventually(getOf(mc, &monitoringv1.PrometheusRule{})).Should(Satisfy(apierrors.IsNotFound))
		Eventually(containersOf).WithArguments(mc).Should(Equal([]string{"memcached"}))

		// Stored before the operator offered monitoring: no webhook runs in
		// this suite, so the field stays absent, as on an upgrade.
		old := createMemcached(watchedNS, gen.WithSize(1))
		eventuallyAvailable(old, 1)
		Expect(getOf(old, &monitoringv1.PodMonitor{})()).To(Satisfy(apierrors.IsNotFound))
		Expect(getOf(old, &monitoringv1.PrometheusRule{})()).To(Satisfy(apierrors.IsNotFound))
		Expect(containersOf(Default, old)).To(Equal([]string{"memcached"}))
	})

	It("leaves someone else's PodMonitor of the same name alone and says so", func() {
		theirs := &monitoringv1.PodMonitor{
			ObjectMeta: metav1.ObjectMeta{Namespace: watchedNS, Name: "their-monitor"},
			Spec:       monitoringv1.PodMonitorSpec{PodMetricsEndpoints: []monitoringv1.PodMetricsEndpoint{{Port: ptr.To("web")}}},
		}
		mc := blockedBy(theirs, "PodMonitor", gen.WithSize(1), gen.WithMonitoring(true))
		Expect(getOf(mc, &appsv1.Deployment{})()).To(Satisfy(apierrors.IsNotFound), "nothing half-made")
		Expect(getOf(mc, &corev1.Service{})()).To(Satisfy(apierrors.IsNotFound), "nothing half-made")
		expectUntouched(theirs)

		By("and never for a Memcached without monitoring: an upgraded one with an admin's PodMonitor of its name")
		Expect(k8s.Delete(ctx, mc)).To(Succeed())
		Eventually(getOf(mc, &cachev1.Memcached{})).Should(Satisfy(apierrors.IsNotFound))
		unmonitored := gen.Memcached(watchedNS, theirs.Name, gen.WithSize(1))
		Expect(k8s.Create(ctx, unmonitored)).To(Succeed())
		eventuallyAvailable(unmonitored, 1)
		expectUntouched(theirs)
	})
})
