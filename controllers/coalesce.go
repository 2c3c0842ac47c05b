package controllers

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/controllers/operand"
)

// defaultCoalesceDelay is how long a Memcached waits after a change of its
// Deployment or pods before it is reconciled.
const defaultCoalesceDelay = time.Second

// coalescing enqueues the Memcached that mapFn names after delay. Pods of a
// Memcached become ready one after another and the Deployment's status
// follows each of them; the workqueue keeps one pending entry per key, so the
// burst ends in one reconcile and one status write instead of one each. For
// the Service and the PDB the delay also lets the cache see both objects the
// operator has just created before it looks again: without it the Service's
// Add event could start a reconcile that finds no PDB in the cache yet and
// applies it a second time.
func coalescing(delay time.Duration, mapFn handler.MapFunc) handler.EventHandler {
	enqueue := func(ctx context.Context, o client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		for _, req := range mapFn(ctx, o) {
			q.AddAfter(req, delay)
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.Object, q)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.ObjectNew, q)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.Object, q)
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.Object, q)
		},
	}
}

// instanceOf maps an object the operator made (a Deployment or one of its
// pods) to its Memcached by the instance label. The caches hold only objects
// with the managed-by label, so nothing else reaches here.
func instanceOf(_ context.Context, o client.Object) []reconcile.Request {
	name, ok := o.GetLabels()[operand.LabelInstance]
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}

// controllerOf maps an object the operator made to the Memcached that
// controls it, by its controller owner reference, which a hand edit of its
// labels cannot take away.
func controllerOf(_ context.Context, o client.Object) []reconcile.Request {
	ref := metav1.GetControllerOf(o)
	if ref == nil || ref.Kind != "Memcached" {
		return nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || gv.Group != cachev1.GroupVersion.Group {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: ref.Name}}}
}
