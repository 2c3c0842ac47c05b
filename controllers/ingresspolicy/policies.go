package ingresspolicy

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"

	"github.com/example-inc/memcached-operator/controllers"
)

// The policies' names. They are the ones the kubectl install and the OLM
// bundle used to ship, so the manager takes those over where they exist.
const (
	WebhookPolicy = "memcached-operator-allow-webhook-traffic"
	MetricsPolicy = "memcached-operator-allow-metrics-traffic"
)

// MetricsNamespaceLabel and MetricsNamespaceValue mark the namespaces whose
// pods may scrape the manager's metrics (Prometheus's, for example).
const (
	MetricsNamespaceLabel = "metrics"
	MetricsNamespaceValue = "enabled"
)

// Target is the manager the policies protect.
type Target struct {
	// Namespace is the manager's.
	Namespace string
	// PodSelector selects the manager's pods: its Deployment's selector.
	PodSelector map[string]string
	// Owner is the manager's Deployment.
	Owner *metav1ac.OwnerReferenceApplyConfiguration
	// WebhookPort and MetricsPort are where the manager serves its
	// webhooks and its metrics; 0 for a server that is off.
	WebhookPort, MetricsPort int32
}

// Desired returns the policies t needs, by name; a name whose server is off
// maps to nil: no policy.
func Desired(t Target) map[string]*networkingv1ac.NetworkPolicyApplyConfiguration {
	out := map[string]*networkingv1ac.NetworkPolicyApplyConfiguration{WebhookPolicy: nil, MetricsPolicy: nil}
	if t.WebhookPort != 0 {
		out[WebhookPolicy] = policy(t, WebhookPolicy, networkingv1ac.NetworkPolicyIngressRule().
			WithPorts(port(t.WebhookPort)))
	}
	if t.MetricsPort != 0 {
		out[MetricsPolicy] = policy(t, MetricsPolicy, networkingv1ac.NetworkPolicyIngressRule().
			WithPorts(port(t.MetricsPort)).
			WithFrom(networkingv1ac.NetworkPolicyPeer().WithNamespaceSelector(metav1ac.LabelSelector().
				WithMatchLabels(map[string]string{MetricsNamespaceLabel: MetricsNamespaceValue}))))
	}
	return out
}

func policy(t Target, name string, rule *networkingv1ac.NetworkPolicyIngressRuleApplyConfiguration) *networkingv1ac.NetworkPolicyApplyConfiguration {
	p := networkingv1ac.NetworkPolicy(name, t.Namespace).
		WithLabels(map[string]string{
			"app.kubernetes.io/name":       "memcached-operator",
			"app.kubernetes.io/managed-by": controllers.FieldOwner,
		}).
		WithSpec(networkingv1ac.NetworkPolicySpec().
			WithPodSelector(metav1ac.LabelSelector().WithMatchLabels(t.PodSelector)).
			WithPolicyTypes("Ingress").
			WithIngress(rule))
	if t.Owner != nil {
		p.WithOwnerReferences(t.Owner)
	}
	return p
}

func port(n int32) *networkingv1ac.NetworkPolicyPortApplyConfiguration {
	return networkingv1ac.NetworkPolicyPort().WithProtocol(corev1.ProtocolTCP).WithPort(intstr.FromInt32(n))
}
