package controllers

import (
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

func TestIgnoreStatusOnly(t *testing.T) {
	old := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cache", UID: "u1", ResourceVersion: "1", Generation: 1,
			Labels:          map[string]string{"app.kubernetes.io/instance": "cache"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "Memcached", Name: "cache", UID: "m1"}},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: FieldOwner, Operation: metav1.ManagedFieldsOperationApply}}},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: new(intstr.FromInt32(1))},
	}
	for _, tc := range []struct {
		name   string
		change func(*policyv1.PodDisruptionBudget)
		passed bool
	}{
		{"the status alone", func(p *policyv1.PodDisruptionBudget) { p.Status.CurrentHealthy, p.Status.DisruptionsAllowed = 3, 1 }, false},
		{"the spec, which moves the generation", func(p *policyv1.PodDisruptionBudget) { p.Generation = 2 }, true},
		{"a label", func(p *policyv1.PodDisruptionBudget) { p.Labels = nil }, true},
		{"an annotation", func(p *policyv1.PodDisruptionBudget) { p.Annotations = map[string]string{"a": "b"} }, true},
		{"the owner references", func(p *policyv1.PodDisruptionBudget) { p.OwnerReferences = nil }, true},
		{"a finalizer", func(p *policyv1.PodDisruptionBudget) { p.Finalizers = []string{"x"} }, true},
		{"the operator's managed fields", func(p *policyv1.PodDisruptionBudget) { p.ManagedFields = nil }, true},
		{"its deletion", func(p *policyv1.PodDisruptionBudget) { p.DeletionTimestamp = &metav1.Time{} }, true},
		{"another object of the name", func(p *policyv1.PodDisruptionBudget) { p.UID = "u2" }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed := old.DeepCopy()
			changed.ResourceVersion = "2"
			tc.change(changed)
			if got := ignoreStatusOnly().Update(event.UpdateEvent{ObjectOld: old, ObjectNew: changed}); got != tc.passed {
				t.Errorf("an update of %s passed: %v, want %v", tc.name, got, tc.passed)
			}
		})
	}
}
