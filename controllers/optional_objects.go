package controllers

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
)

// optionalObject is an object of another project's API (a PodMonitor, a
// Certificate) that a Memcached has while a feature of its spec asks for
// it, and how to tell whether a live one is what the operator wants.
type optionalObject struct {
	kind string
	live client.Object
	// want is the object to apply.
	want client.Object
	// same reports whether live, which exists and is mc's, has want's
	// labels, hash and the spec fields the operator sets.
	same func() bool
}

// sameMeta reports whether live carries want's labels and hash; others'
// labels and annotations may stand beside them.
func sameMeta(live, want client.Object) bool {
	for k, v := range want.GetLabels() {
		if live.GetLabels()[k] != v {
			return false
		}
	}
	return live.GetAnnotations()[desiredHashAnnotation] == want.GetAnnotations()[desiredHashAnnotation]
}

// reconcileOptional applies o where it differs from what the operator
// wants, or, when mc does not want it (why says so), deletes it if mc
// controls it. A wanted object has been read with mc's other objects (and
// found to be mc's, or absent); one not wanted is read here, and one of the
// name that someone else made is left alone.
func (r *MemcachedReconciler) reconcileOptional(ctx context.Context, mc *cachev1.Memcached, o optionalObject, wanted bool, why string) error {
	if !wanted {
		err := r.client.Get(ctx, client.ObjectKeyFromObject(mc), o.live)
		if apierrors.IsNotFound(err) || (err == nil && !metav1.IsControlledBy(o.live, mc)) {
			return nil
		}
		if err != nil {
			return err
		}
		return r.deleteOwned(ctx, o.kind, o.live, why)
	}
	if o.live.GetUID() != "" && o.same() {
		return nil
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o.want)
	if err != nil {
		return err
	}
	// Status is the other project's controller's to write.
	delete(obj, "status")
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	patched := o.live.DeepCopyObject().(client.Object)
	patched.SetName(mc.Name)
	patched.SetNamespace(mc.Namespace)
	if err := r.client.Patch(ctx, patched, client.RawPatch(types.ApplyPatchType, data),
		client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying %s: %w", o.kind, err)
	}
	r.reportApply(ctx, mc, applyTarget{kind: o.kind, annotations: o.want.GetAnnotations(), live: o.live})
	return nil
}

// servesResources reports whether the API server serves every one of the
// resources (plural names) in gv. An optional API that is not served is no
// error: the features that need it report so on the Memcached.
func servesResources(dc discovery.DiscoveryInterface, gv fmt.Stringer, resources ...string) (bool, error) {
	list, err := dc.ServerResourcesForGroupVersion(gv.String())
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("discovering %s: %w", gv, err)
	}
	served := map[string]bool{}
	for _, r := range list.APIResources {
		served[r.Name] = true
	}
	for _, name := range resources {
		if !served[name] {
			return false, nil
		}
	}
	return true, nil
}
