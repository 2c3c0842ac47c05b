package netpolicy

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

var managerLabels = map[string]string{"control-plane": "controller-manager", "app": "memcached-operator"}

func policy(name string, podSelector map[string]string, types []networkingv1.PolicyType, rules ...networkingv1.NetworkPolicyIngressRule) networkingv1.NetworkPolicy {
	return networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: podSelector}, PolicyTypes: types, Ingress: rules,
		},
	}
}

func ports(ps ...intstr.IntOrString) []networkingv1.NetworkPolicyPort {
	var out []networkingv1.NetworkPolicyPort
	for i := range ps {
		out = append(out, networkingv1.NetworkPolicyPort{Port: &ps[i]})
	}
	return out
}

func TestAdmittedIngress(t *testing.T) {
	udp := corev1.ProtocolUDP
	endPort := int32(9000)
	ingress := []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
	metricsNamespaces := networkingv1.NetworkPolicyPeer{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"metrics": "enabled"}}}
	tests := []struct {
		name     string
		policies []networkingv1.NetworkPolicy
		want     map[string][]string
	}{
		{name: "no policy: not isolated"},
		{name: "a policy for other pods: not isolated", policies: []networkingv1.NetworkPolicy{policy("other", map[string]string{"app": "memcached"}, ingress)}},
		{name: "egress only: ingress not isolated", policies: []networkingv1.NetworkPolicy{policy("egress", nil, []networkingv1.PolicyType{networkingv1.PolicyTypeEgress})}},
		{name: "selected without rules: nothing admitted", policies: []networkingv1.NetworkPolicy{policy("deny", nil, ingress)},
			want: map[string][]string{}},
		{name: "omitted policyTypes mean ingress; the two policies' rules add up",
			policies: []networkingv1.NetworkPolicy{
				policy("webhook", managerLabels, nil, networkingv1.NetworkPolicyIngressRule{Ports: ports(intstr.FromInt32(9443))}),
				policy("metrics", map[string]string{"control-plane": "controller-manager"}, ingress,
					networkingv1.NetworkPolicyIngressRule{From: []networkingv1.NetworkPolicyPeer{metricsNamespaces}, Ports: ports(intstr.FromInt32(8443))}),
			},
			want: map[string][]string{"TCP/9443": {AnySource}, "TCP/8443": {"namespaces{metrics=enabled}"}}},
		{name: "every kind of peer, a named port, a range, UDP and a rule for all ports",
			policies: []networkingv1.NetworkPolicy{policy("mixed", nil, ingress,
				networkingv1.NetworkPolicyIngressRule{
					From: []networkingv1.NetworkPolicyPeer{
						{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "prometheus"}}},
						{PodSelector: &metav1.LabelSelector{}, NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"policy-group.network.openshift.io/host-network": ""}}},
						{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8", Except: []string{"10.1.0.0/16"}}},
					},
					Ports: []networkingv1.NetworkPolicyPort{
						{Port: new(intstr.FromString("webhook-server"))},
						{Port: new(intstr.FromInt32(8000)), EndPort: &endPort},
						{Protocol: &udp, Port: new(intstr.FromInt32(53))},
					},
				},
				networkingv1.NetworkPolicyIngressRule{From: []networkingv1.NetworkPolicyPeer{metricsNamespaces}},
			)},
			want: map[string][]string{
				"TCP/webhook-server": {"ipBlock 10.0.0.0/8 except [10.1.0.0/16]", "pods{app=prometheus}", "pods{} in namespaces{policy-group.network.openshift.io/host-network=}"},
				"TCP/8000-9000":      {"ipBlock 10.0.0.0/8 except [10.1.0.0/16]", "pods{app=prometheus}", "pods{} in namespaces{policy-group.network.openshift.io/host-network=}"},
				"UDP/53":             {"ipBlock 10.0.0.0/8 except [10.1.0.0/16]", "pods{app=prometheus}", "pods{} in namespaces{policy-group.network.openshift.io/host-network=}"},
				AllPorts:             {"namespaces{metrics=enabled}"},
			}},
		{name: "a source admitted by two policies is listed once",
			policies: []networkingv1.NetworkPolicy{
				policy("a", nil, ingress, networkingv1.NetworkPolicyIngressRule{Ports: ports(intstr.FromInt32(9443))}),
				policy("b", nil, ingress, networkingv1.NetworkPolicyIngressRule{Ports: ports(intstr.FromInt32(9443))}),
			},
			want: map[string][]string{"TCP/9443": {AnySource}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AdmittedIngress(tt.policies, managerLabels)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("AdmittedIngress = %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestAdmittedIngressRefusesAnEmptyPeer(t *testing.T) {
	p := policy("bad", nil, nil, networkingv1.NetworkPolicyIngressRule{From: []networkingv1.NetworkPolicyPeer{{}}})
	if _, err := AdmittedIngress([]networkingv1.NetworkPolicy{p}, managerLabels); err == nil {
		t.Error("a peer with nothing in it was accepted")
	}
}
