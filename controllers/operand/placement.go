package operand

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
)

const (
	// LabelName and LabelInstance are the labels that select a Memcached's
	// pods.
	LabelName     = "app.kubernetes.io/name"
	LabelInstance = "app.kubernetes.io/instance"

	appName = "memcached"
)

// SelectorLabels select the pods of the Memcached named name. They never
// change for a given Memcached, as a Deployment's selector is immutable.
func SelectorLabels(name string) map[string]string {
	return map[string]string{LabelName: appName, LabelInstance: name}
}

// HasPlacement reports whether spec says anything about where its pods run.
func HasPlacement(spec *cachev1.MemcachedSpec) bool {
	return len(spec.NodeSelector) > 0 || len(spec.Tolerations) > 0 || spec.Affinity != nil ||
		len(spec.TopologySpreadConstraints) > 0 || spec.PriorityClassName != ""
}

// DefaultTopologySpread is the placement of a Memcached that gives none: its
// pods spread across nodes, then zones, as evenly as the scheduler can
// without leaving one pending, so that losing a node or a zone empties as
// little of the cache as possible.
//
// The selector names no Memcached: the instance label comes from each pod
// through matchLabelKeys, because a name the API server generates is not
// known yet when the defaulting webhook writes this. pod-template-hash keeps
// a rollout's new pods from being weighed against the old ones they replace.
func DefaultTopologySpread() []corev1.TopologySpreadConstraint {
	constraint := func(key string) corev1.TopologySpreadConstraint {
		return corev1.TopologySpreadConstraint{
			MaxSkew:           1,
			TopologyKey:       key,
			WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{LabelName: appName}},
			MatchLabelKeys:    []string{LabelInstance, "pod-template-hash"},
		}
	}
	return []corev1.TopologySpreadConstraint{
		constraint(corev1.LabelHostname),
		constraint(corev1.LabelTopologyZone),
	}
}
