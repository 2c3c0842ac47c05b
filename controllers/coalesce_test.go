package controllers

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestControllerOf(t *testing.T) {
	owner := func(apiVersion, kind string, controller bool) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: "cache", UID: "u", Controller: ptr.To(controller)}
	}
	want := []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "cache"}}}
	tests := []struct {
		name string
		refs []metav1.OwnerReference
		want []reconcile.Request
	}{
		{"controlled by a Memcached", []metav1.OwnerReference{owner("cache.example.com/v1", "Memcached", true)}, want},
		{"owned but not controlled", []metav1.OwnerReference{owner("cache.example.com/v1", "Memcached", false)}, nil},
		{"a Memcached of another group", []metav1.OwnerReference{owner("other.example.com/v1", "Memcached", true)}, nil},
		{"controlled by something else", []metav1.OwnerReference{owner("apps/v1", "Deployment", true)}, nil},
		{"no owner", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "svc", OwnerReferences: tt.refs}}
			if diff := cmp.Diff(tt.want, controllerOf(context.Background(), svc)); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}
