package controllers

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
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
