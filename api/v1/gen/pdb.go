package gen

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// UnrelatedPDB is a PodDisruptionBudget the operator does not own: labelled
// app=<name> and nothing else, keeping at least one of those pods.
func UnrelatedPDB(ns, name string) *policyv1.PodDisruptionBudget {
	labels := map[string]string{"app": name}
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(1)),
			Selector:     &metav1.LabelSelector{MatchLabels: labels},
		},
	}
}
