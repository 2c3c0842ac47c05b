package netpolicy

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// AnySource is the source of a rule without `from`: every pod, node and
// address.
const AnySource = "any"

// AllPorts is the port of a rule without `ports`.
const AllPorts = "all"

// AdmittedIngress returns what policies, all of one namespace, admit into a
// pod of that namespace with podLabels: for each port ("TCP/9443", or
// AllPorts), the sources admitted on it, sorted: AnySource, or a peer as
// "pods{...}", "namespaces{...}", "pods{...} in namespaces{...}" ("{}"
// selects all) or "ipBlock <cidr> except [...]". It returns nil when no
// policy selects the pod for ingress: such a pod admits everything.
func AdmittedIngress(policies []networkingv1.NetworkPolicy, podLabels map[string]string) (map[string][]string, error) {
	var admitted map[string][]string
	for _, p := range policies {
		sel, err := metav1.LabelSelectorAsSelector(&p.Spec.PodSelector)
		if err != nil {
			return nil, fmt.Errorf("NetworkPolicy %s: podSelector: %w", p.Name, err)
		}
		if !sel.Matches(labels.Set(podLabels)) || !governsIngress(p.Spec) {
			continue
		}
		if admitted == nil {
			admitted = map[string][]string{}
		}
		for _, rule := range p.Spec.Ingress {
			sources, err := describePeers(rule.From)
			if err != nil {
				return nil, fmt.Errorf("NetworkPolicy %s: %w", p.Name, err)
			}
			for _, port := range describePorts(rule.Ports) {
				for _, s := range sources {
					if !slices.Contains(admitted[port], s) {
						admitted[port] = append(admitted[port], s)
					}
				}
				slices.Sort(admitted[port])
			}
		}
	}
	return admitted, nil
}

// governsIngress: policyTypes defaults to Ingress when omitted (plus Egress
// when there are egress rules).
func governsIngress(spec networkingv1.NetworkPolicySpec) bool {
	return len(spec.PolicyTypes) == 0 || slices.Contains(spec.PolicyTypes, networkingv1.PolicyTypeIngress)
}

func describePorts(ports []networkingv1.NetworkPolicyPort) []string {
	if len(ports) == 0 {
		return []string{AllPorts}
	}
	out := make([]string, 0, len(ports))
	for _, p := range ports {
		protocol := corev1.ProtocolTCP
		if p.Protocol != nil {
			protocol = *p.Protocol
		}
		port := "all"
		if p.Port != nil {
			port = p.Port.String()
		}
		if p.EndPort != nil {
			port += fmt.Sprintf("-%d", *p.EndPort)
		}
		out = append(out, string(protocol)+"/"+port)
	}
	return out
}

func describePeers(peers []networkingv1.NetworkPolicyPeer) ([]string, error) {
	if len(peers) == 0 {
		return []string{AnySource}, nil
	}
	out := make([]string, 0, len(peers))
	for _, p := range peers {
		switch {
		case p.IPBlock != nil:
			out = append(out, fmt.Sprintf("ipBlock %s except %v", p.IPBlock.CIDR, p.IPBlock.Except))
		case p.PodSelector != nil && p.NamespaceSelector != nil:
			out = append(out, "pods"+describeSelector(p.PodSelector)+" in namespaces"+describeSelector(p.NamespaceSelector))
		case p.PodSelector != nil:
			out = append(out, "pods"+describeSelector(p.PodSelector))
		case p.NamespaceSelector != nil:
			out = append(out, "namespaces"+describeSelector(p.NamespaceSelector))
		default:
			return nil, fmt.Errorf("a peer with no selector and no ipBlock")
		}
	}
	return out, nil
}

// describeSelector: "{}" selects everything.
func describeSelector(s *metav1.LabelSelector) string {
	if len(s.MatchLabels)+len(s.MatchExpressions) == 0 {
		return "{}"
	}
	return "{" + metav1.FormatLabelSelector(s) + "}"
}
