package controllers

import (
	"k8s.io/apimachinery/pkg/util/intstr"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
)

// pdbMinSize is the smallest size that gets a PodDisruptionBudget: with one
// pod, maxUnavailable 1 protects nothing, and anything stricter would block
// node drains forever.
const pdbMinSize = 2

// desiredPDB lets voluntary disruptions (drains, upgrades) take down one
// memcached pod at a time, so a node drain never empties the cache at once.
// It returns nil when mc should have none.
func desiredPDB(mc *cachev1.Memcached, o Options) *policyv1ac.PodDisruptionBudgetApplyConfiguration {
	if size(mc, o) < pdbMinSize {
		return nil
	}
	pdb := policyv1ac.PodDisruptionBudget(mc.Name, mc.Namespace).
		WithLabels(objectLabels(mc)).
		WithOwnerReferences(ownerReference(mc)).
		WithSpec(policyv1ac.PodDisruptionBudgetSpec().
			WithMaxUnavailable(intstr.FromInt32(1)).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(selectorLabels(mc))))
	return pdb.WithAnnotations(desiredHash(pdb))
}
