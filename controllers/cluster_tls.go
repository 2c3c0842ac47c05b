package controllers

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/certs/tlsprofile"
)

// withClusterTLS is the reconciler's options with the cluster's TLS profile
// read, when mc serves TLS and the cluster has one: the profile is the one
// input of the desired objects that lives outside the Memcached.
func (r *MemcachedReconciler) withClusterTLS(ctx context.Context, mc *cachev1.Memcached) (Options, error) {
	o := r.opts
	if mc.Spec.TLS == nil || !o.ClusterTLSProfile {
		return o, nil
	}
	p, err := tlsprofile.Read(ctx, r.client)
	if err != nil {
		return o, err
	}
	o.TLSProfile = p
	return o, nil
}

// followingClusterTLS maps a change of the cluster's APIServer to every
// Memcached whose pods follow its TLS profile. A profile change is rare and
// replaces those pods, one at a time, as any change of memcached's options
// does: memcached reads its minimum version and ciphers only at start.
func (r *MemcachedReconciler) followingClusterTLS(ctx context.Context, obj client.Object) []reconcile.Request {
	if obj.GetName() != tlsprofile.ClusterAPIServer {
		return nil
	}
	list := &cachev1.MemcachedList{}
	if err := r.client.List(ctx, list); err != nil {
		log.FromContext(ctx).Error(err, "listing Memcached to follow the cluster's TLS profile")
		return nil
	}
	var reqs []reconcile.Request
	for _, mc := range list.Items {
		// The ciphers follow the profile even where the spec sets the
		// minimum.
		if mc.Spec.TLS != nil {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&mc)})
		}
	}
	return reqs
}
