package controllers

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// ignoreStatusOnly passes every event but an update that changed nothing
// except the object's status: the same generation, which the API server
// moves with the spec, and the same metadata but for the resourceVersion.
// The disruption controller rewrites a PodDisruptionBudget's status as its
// pods come and go, and the reconciler reads none of it. The status writer's
// managed-fields entry does not count: the cache keeps only the operator's
// (keepOwnManagedFields).
func ignoreStatusOnly() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return !sameButStatus(e.ObjectOld, e.ObjectNew)
	}}
}

func sameButStatus(a, b client.Object) bool {
	return a.GetGeneration() == b.GetGeneration() &&
		a.GetUID() == b.GetUID() &&
		equality.Semantic.DeepEqual(a.GetLabels(), b.GetLabels()) &&
		equality.Semantic.DeepEqual(a.GetAnnotations(), b.GetAnnotations()) &&
		equality.Semantic.DeepEqual(a.GetOwnerReferences(), b.GetOwnerReferences()) &&
		equality.Semantic.DeepEqual(a.GetFinalizers(), b.GetFinalizers()) &&
		equality.Semantic.DeepEqual(a.GetDeletionTimestamp(), b.GetDeletionTimestamp()) &&
		equality.Semantic.DeepEqual(a.GetManagedFields(), b.GetManagedFields())
}
