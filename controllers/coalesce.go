package controllers

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// defaultCoalesceDelay is how long a Memcached waits after a change of its
// Deployment or pods before it is reconciled.
const defaultCoalesceDelay = time.Second

// coalescing enqueues the Memcached that mapFn names after delay. Pods of a
// Memcached become ready one after another and the Deployment's status
// follows each of them; the workqueue keeps one pending entry per key, so the
// burst ends in one reconcile and one status write instead of one each.
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
	name, ok := o.GetLabels()[labelInstance]
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}
