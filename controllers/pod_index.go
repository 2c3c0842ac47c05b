package controllers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/controllers/operand"
)

// podInstanceIndex indexes cached pods by their Memcached (the instance
// label). A label-selected list from the cache scans every cached pod of the
// namespace; with a thousand Memcached objects in one namespace that is
// thousands of pods per reconcile. The index makes it the object's own pods.
const podInstanceIndex = "memcached.instance"

func indexPodsByInstance(ctx context.Context, mgr ctrl.Manager) error {
	return mgr.GetFieldIndexer().IndexField(ctx, &corev1.Pod{}, podInstanceIndex, func(o client.Object) []string {
		if name, ok := o.GetLabels()[operand.LabelInstance]; ok {
			return []string{name}
		}
		return nil
	})
}

// podsOf are the options that list mc's pods through the index; the label
// selector stays, so a pod that only shares the instance label is not one.
func podsOf(mc *cachev1.Memcached) []client.ListOption {
	return []client.ListOption{
		client.InNamespace(mc.Namespace),
		client.MatchingFields{podInstanceIndex: mc.Name},
		client.MatchingLabels(selectorLabels(mc)),
	}
}
