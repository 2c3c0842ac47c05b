package controllers

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestOwnedFields(t *testing.T) {
	mc := types.NamespacedName{Namespace: "ns", Name: "cache"}
	entry := func(manager string, op metav1.ManagedFieldsOperationType, subresource, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, Subresource: subresource, APIVersion: "apps/v1",
			FieldsV1: metav1.NewFieldsV1(fields)}
	}
	deployment := func(uid types.UID, entries ...metav1.ManagedFieldsEntry) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: "ns", UID: uid, ManagedFields: entries}}
	}
	ours := entry(FieldOwner, metav1.ManagedFieldsOperationApply, "", `{"f:spec":{"f:replicas":{}}}`)
	verified := deployment("u1", ours, entry("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "status", `{"f:status":{}}`))

	tests := []struct {
		name string
		// remember is false for an object never verified.
		remember bool
		live     *appsv1.Deployment
		want     string
		forget   bool
		expected bool
	}{
		{name: "never verified", live: verified, want: "h1"},
		{name: "verified, unchanged", remember: true, live: verified, want: "h1", expected: true},
		{name: "others' entries changed (a status update)", remember: true, want: "h1", expected: true,
			live: deployment("u1", ours, entry("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "status", `{"f:status":{"f:readyReplicas":{}}}`))},
		{name: "the operator's entry lost a field to a hand edit", remember: true, want: "h1",
			live: deployment("u1", entry(FieldOwner, metav1.ManagedFieldsOperationApply, "", `{"f:spec":{}}`),
				entry("kubectl-edit", metav1.ManagedFieldsOperationUpdate, "", `{"f:spec":{"f:replicas":{}}}`))},
		{name: "the operator's entry is gone", remember: true, want: "h1", live: deployment("u1")},
		{name: "an update entry of the operator's name is not its applies", remember: true, want: "h1",
			live: deployment("u1", entry(FieldOwner, metav1.ManagedFieldsOperationUpdate, "", `{"f:spec":{"f:replicas":{}}}`))},
		{name: "recreated under the same name", remember: true, live: deployment("u2", ours), want: "h1"},
		{name: "the want changed", remember: true, live: verified, want: "h2"},
		{name: "the Memcached was deleted", remember: true, live: verified, want: "h1", forget: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := newOwnedFields()
			if tc.remember {
				o.remember(mc, "Deployment", verified, "h1")
			}
			if tc.forget {
				o.forget(mc)
			}
			if got := o.unchanged(mc, "Deployment", tc.live, tc.want); got != tc.expected {
				t.Errorf("unchanged = %v, want %v", got, tc.expected)
			}
			if o.unchanged(mc, "Service", tc.live, tc.want) {
				t.Error("a Deployment's comparison answered for the Service")
			}
		})
	}
}
