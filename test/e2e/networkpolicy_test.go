package e2e

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example-inc/memcached-operator/test/framework/netpolicy"
)

// expectNetworkPolicies checks what OLM made of the bundle's
// NetworkPolicies: in the install's namespace they select its manager pod
// and admit only the webhook port, from any source, and the metrics port,
// from namespaces labelled metrics: enabled; elsewhere there are none. No
// CNI plugin on this cluster enforces them: this proves the objects, not the
// filtering (docs/olm.md).
func expectNetworkPolicies(ctx context.Context, in install, pod *corev1.Pod, elsewhere []string) {
	GinkgoHelper()
	By(in.String() + ": its NetworkPolicies select the manager pod and admit only the webhook and metrics ports")
	c, err := managerContainer(pod.Spec.Containers)
	Expect(err).NotTo(HaveOccurred())
	Expect(c.Ports).To(ContainElement(HaveField("ContainerPort", int32(webhookPort))), "%s: the manager's ports", in)
	svc := &corev1.Service{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: in.namespace, Name: metricsService}, svc)).To(Succeed())
	Expect(svc.Spec.Ports).To(HaveLen(1))

	var policies networkingv1.NetworkPolicyList
	Expect(k8s.List(ctx, &policies, client.InNamespace(in.namespace))).To(Succeed())
	admitted, err := netpolicy.AdmittedIngress(policies.Items, pod.Labels)
	Expect(err).NotTo(HaveOccurred())
	Expect(admitted).To(Equal(map[string][]string{
		fmt.Sprintf("TCP/%d", webhookPort):                             {netpolicy.AnySource},
		fmt.Sprintf("TCP/%d", svc.Spec.Ports[0].TargetPort.IntValue()): {"namespaces{metrics=enabled}"},
	}), "%s: what the NetworkPolicies admit into pod %s", in, pod.Name)

	for _, ns := range elsewhere {
		Expect(k8s.List(ctx, &policies, client.InNamespace(ns))).To(Succeed())
		Expect(policies.Items).To(BeEmpty(), "%s: NetworkPolicies in %s", in, ns)
	}
}
