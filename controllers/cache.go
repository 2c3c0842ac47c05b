package controllers

import (
	"slices"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
)

// CacheOptions restrict the manager's informers to the objects the operator
// owns, in the namespaces it watches (all when namespaces is empty), and cut
// what they hold down to what the reconciler reads.
//
// Deployments, Services and PDBs keep the operator's own managed-fields
// entry, which tells whether an apply would change anything (see
// appliedEntry), and lose the others'. Memcached objects keep none. Pods are
// cut down to what status needs, as a cluster can hold many.
func CacheOptions(namespaces []string, prometheusOperator, certManager bool) cache.Options {
	owned := cache.ByObject{Label: ManagedBySelector(), Transform: keepOwnManagedFields}
	opts := cache.Options{
		ByObject: map[client.Object]cache.ByObject{
			&cachev1.Memcached{}:            {Transform: cache.TransformStripManagedFields()},
			&appsv1.Deployment{}:            owned,
			&corev1.Service{}:               owned,
			&policyv1.PodDisruptionBudget{}: owned,
			&corev1.Pod{}:                   {Label: ManagedBySelector(), Transform: trimPod},
		},
	}
	// Only where served: a cache restricted to namespaces looks each type
	// up in the API server's discovery when it is made.
	if prometheusOperator {
		opts.ByObject[&monitoringv1.PodMonitor{}] = owned
		opts.ByObject[&monitoringv1.PrometheusRule{}] = owned
	}
	if certManager {
		opts.ByObject[&cmapi.Certificate{}] = owned
	}
	if len(namespaces) > 0 {
		opts.DefaultNamespaces = make(map[string]cache.Config, len(namespaces))
		for _, ns := range namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
}

// keepOwnManagedFields drops the managed-fields entries of every manager but
// the operator: kube-controller-manager's status entry and a user's edits
// would grow each cached object by a kilobyte or more, copied on every read,
// for nothing the reconciler looks at. A user's edit still shows, as the
// fields it took leave the operator's entry.
func keepOwnManagedFields(obj any) (any, error) {
	o, ok := obj.(client.Object)
	if !ok {
		return obj, nil
	}
	if mf := o.GetManagedFields(); len(mf) > 0 {
		o.SetManagedFields(slices.DeleteFunc(mf, func(e metav1.ManagedFieldsEntry) bool { return e.Manager != FieldOwner }))
	}
	return o, nil
}

// trimPod keeps what the operator reads of a pod: its identity, labels,
// owners, deletion and phase, how its TLS check ended (see tlsProblem), its
// IP, where the served-certificate watcher asks its sidecar, and its warm
// gate with the conditions that pacing a rollout reads (see paceRollout).
func trimPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	return &corev1.Pod{
		TypeMeta: p.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name:              p.Name,
			Namespace:         p.Namespace,
			UID:               p.UID,
			ResourceVersion:   p.ResourceVersion,
			Labels:            p.Labels,
			OwnerReferences:   p.OwnerReferences,
			DeletionTimestamp: p.DeletionTimestamp,
		},
		Spec: corev1.PodSpec{ReadinessGates: p.Spec.ReadinessGates},
		Status: corev1.PodStatus{Phase: p.Status.Phase, PodIP: p.Status.PodIP, InitContainerStatuses: tlsCheckEnds(p.Status.InitContainerStatuses),
			Conditions: pacingConditions(p.Status.Conditions)},
	}, nil
}

// pacingConditions are the conditions paceRollout reads; nil when none.
func pacingConditions(conds []corev1.PodCondition) []corev1.PodCondition {
	var kept []corev1.PodCondition
	for _, c := range conds {
		if c.Type == corev1.ContainersReady || c.Type == WarmCondition {
			kept = append(kept, c)
		}
	}
	return kept
}

// tlsCheckEnds is the TLS check's status cut down to how its runs ended:
// nil when the pod has no check or its check has not ended yet.
func tlsCheckEnds(statuses []corev1.ContainerStatus) []corev1.ContainerStatus {
	for _, s := range statuses {
		if s.Name != tlsCheckContainer || (s.State.Terminated == nil && s.LastTerminationState.Terminated == nil) {
			continue
		}
		return []corev1.ContainerStatus{{Name: s.Name,
			State:                corev1.ContainerState{Terminated: s.State.Terminated},
			LastTerminationState: corev1.ContainerState{Terminated: s.LastTerminationState.Terminated}}}
	}
	return nil
}
