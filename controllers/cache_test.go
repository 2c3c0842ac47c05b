package controllers

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestKeepOwnManagedFields(t *testing.T) {
	own := metav1.ManagedFieldsEntry{Manager: FieldOwner, Operation: metav1.ManagedFieldsOperationApply,
		FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:replicas":{}}}`)}
	status := metav1.ManagedFieldsEntry{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate,
		Subresource: "status", FieldsV1: metav1.NewFieldsV1(`{"f:status":{}}`)}
	edit := metav1.ManagedFieldsEntry{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate,
		FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:template":{}}}`)}
	tests := []struct {
		name string
		in   []metav1.ManagedFieldsEntry
		want []metav1.ManagedFieldsEntry
	}{
		{name: "none", in: nil, want: nil},
		{name: "only others'", in: []metav1.ManagedFieldsEntry{status, edit}, want: []metav1.ManagedFieldsEntry{}},
		{name: "the operator's among others'", in: []metav1.ManagedFieldsEntry{status, own, edit}, want: []metav1.ManagedFieldsEntry{own}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "a", ManagedFields: tt.in}}
			out, err := keepOwnManagedFields(d)
			if err != nil {
				t.Fatal(err)
			}
			got := out.(*appsv1.Deployment).ManagedFields
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("managed fields (-want +got):\n%s", diff)
			}
			if _, ok := appliedEntry(out.(*appsv1.Deployment)); ok != (len(tt.want) > 0) {
				t.Errorf("appliedEntry found = %v after the transform", ok)
			}
		})
	}
}

// The cached pod keeps what the status, the served-certificate watcher and
// the pacing of a rollout read, and drops the rest of its spec and status.
func TestTrimPod(t *testing.T) {
	gate := []corev1.PodReadinessGate{{ConditionType: WarmCondition}}
	containersReady := corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionTrue}
	warm := corev1.PodCondition{Type: WarmCondition, Status: corev1.ConditionTrue, Reason: "PodWarm"}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cache-a", Labels: map[string]string{"app": "memcached"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "memcached", Image: "memcached"}}, ReadinessGates: gate},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.244.0.7", HostIP: "10.88.0.1",
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}, containersReady, warm}},
	}
	out, err := trimPod(p)
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cache-a", Labels: map[string]string{"app": "memcached"}},
		Spec:       corev1.PodSpec{ReadinessGates: gate},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.244.0.7", Conditions: []corev1.PodCondition{containersReady, warm}},
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("trimmed pod (-want +got):\n%s", diff)
	}
}
