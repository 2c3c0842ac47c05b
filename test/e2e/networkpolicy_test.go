package e2e

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example-inc/memcached-operator/controllers/ingresspolicy"
	"github.com/example-inc/memcached-operator/controllers/ingresspolicy/netpolicy"
)

// expectNetworkPolicies checks the NetworkPolicies the manager keeps beside
// its pod (package ingresspolicy), however it was installed: in the pod's
// namespace they select the pod and admit only the webhook port, from any
// source, and the metrics port, from namespaces labelled metrics: enabled;
// they are owned by the manager's Deployment, so uninstalling removes them;
// one deleted comes back. Namespaces elsewhere hold none. No CNI plugin on
// this cluster enforces them: this proves the objects, not the filtering
// (docs/olm.md).
func expectNetworkPolicies(ctx context.Context, install string, pod *corev1.Pod, elsewhere []string) {
	GinkgoHelper()
	By(install + ": the manager's NetworkPolicies select its pod and admit only the webhook and metrics ports")
	ns := pod.Namespace
	c, err := managerContainer(pod.Spec.Containers)
	Expect(err).NotTo(HaveOccurred())
	Expect(c.Ports).To(ContainElement(HaveField("ContainerPort", int32(webhookPort))), "%s: the manager's ports", install)
	svc := &corev1.Service{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: metricsService}, svc)).To(Succeed())
	Expect(svc.Spec.Ports).To(HaveLen(1))
	var d appsv1.Deployment
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: operatorDeployment}, &d)).To(Succeed())

	kept := func(g Gomega) {
		var policies networkingv1.NetworkPolicyList
		g.Expect(k8s.List(ctx, &policies, client.InNamespace(ns))).To(Succeed())
		admitted, err := netpolicy.AdmittedIngress(policies.Items, pod.Labels)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(admitted).To(Equal(map[string][]string{
			fmt.Sprintf("TCP/%d", webhookPort):                             {netpolicy.AnySource},
			fmt.Sprintf("TCP/%d", svc.Spec.Ports[0].TargetPort.IntValue()): {"namespaces{metrics=enabled}"},
		}), "%s: what the NetworkPolicies admit into pod %s", install, pod.Name)
		for _, p := range policies.Items {
			g.Expect(p.OwnerReferences).To(ConsistOf(HaveField("UID", d.UID)), "%s: owners of NetworkPolicy %s", install, p.Name)
		}
	}
	eventually(ctx, kept).Should(Succeed())
	Expect(k8s.Delete(ctx, &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ingresspolicy.WebhookPolicy}})).To(Succeed())
	eventually(ctx, kept).Should(Succeed(), "%s: the deleted webhook policy back", install)

	for _, other := range elsewhere {
		var policies networkingv1.NetworkPolicyList
		Expect(k8s.List(ctx, &policies, client.InNamespace(other))).To(Succeed())
		Expect(policies.Items).To(BeEmpty(), "%s: NetworkPolicies in %s", install, other)
	}
}
