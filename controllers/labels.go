package controllers

import (
	"k8s.io/apimachinery/pkg/labels"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/controllers/operand"
)

// FieldOwner is the server-side apply field manager of every object the
// operator writes, and the value of its managed-by label.
const FieldOwner = "memcached-operator"

const labelManagedBy = "app.kubernetes.io/managed-by"

// ManagedBySelector selects every object the operator owns. The manager's
// caches use it so the operator's memory does not grow with unrelated
// Deployments, Services, PDBs and Pods in the cluster.
func ManagedBySelector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{labelManagedBy: FieldOwner})
}

// objectLabels are put on every object built for mc and its pods.
func objectLabels(mc *cachev1.Memcached) map[string]string {
	l := selectorLabels(mc)
	l[labelManagedBy] = FieldOwner
	return l
}

// selectorLabels select mc's pods.
func selectorLabels(mc *cachev1.Memcached) map[string]string {
	return operand.SelectorLabels(mc.Name)
}
