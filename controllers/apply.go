package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
)

// applyTarget is one object the reconciler applies. Each goes the same way:
// the fields the operator owns in it are read (readOwnedFields), compared
// with what the Memcached wants, and applied only where they differ
// (applyUnlessEqual, serverSideApply); the write is then reported
// (reportApply).
type applyTarget struct {
	kind string
	want runtime.ApplyConfiguration
	// annotations are want's, which apply configurations have no getter for.
	annotations map[string]string
	// live is the object as last seen, empty when there is none.
	live client.Object
	// extract returns the fields of live that the operator owns, as an
	// apply configuration of want's type.
	extract func() (any, error)
}

// applyIfDrifted is applyUnlessEqual with what the operator owns of t.live.
func (r *MemcachedReconciler) applyIfDrifted(ctx context.Context, mc *cachev1.Memcached, t applyTarget) error {
	owned, err := r.readOwnedFields(mc, t)
	if err != nil {
		return err
	}
	_, err = r.applyUnlessEqual(ctx, mc, t, owned)
	return err
}

// applyDeployment applies mc's Deployment where it differs from live (empty
// when there is none), after removing list entries the operator no longer
// wants (see prunePatch).
func (r *MemcachedReconciler) applyDeployment(ctx context.Context, mc *cachev1.Memcached, live *appsv1.Deployment) error {
	o, err := r.withClusterTLS(ctx, mc)
	if err != nil {
		return err
	}
	extract := func() (any, error) { return appsv1ac.ExtractDeployment(live, FieldOwner) }
	// The warm gate joins the pods' template with the first change of it
	// that the operator wants, and stays: a new Memcached's pods replace
	// nothing, an operator upgrade alone must restart no pod, and a repair
	// puts back what was there. Each gated pod costs a write when it is
	// marked warm, so only Memcached that roll pay it.
	want := desiredDeployment(mc, o, live.UID != "" && hasWarmGate(live))
	if live.UID != "" && !hasWarmGate(live) && !isRepair(live.Annotations, want.Annotations) {
		owned, err := r.readOwnedFields(mc, applyTarget{kind: "Deployment", want: want, annotations: want.Annotations, live: live, extract: extract})
		if err != nil {
			return err
		}
		if d, ok := owned.(*appsv1ac.DeploymentApplyConfiguration); !ok || d.Spec == nil ||
			!equality.Semantic.DeepEqual(d.Spec.Template, want.Spec.Template) {
			want = desiredDeployment(mc, o, true)
		}
	}
	t := applyTarget{kind: "Deployment", want: want, annotations: want.Annotations, live: live, extract: extract}
	owned, err := r.readOwnedFields(mc, t)
	if err != nil {
		return err
	}
	pruned := false
	if owned != nil {
		if patch := prunePatch(live, owned.(*appsv1ac.DeploymentApplyConfiguration), want); patch != nil {
			if err := r.client.Patch(ctx, live, client.RawPatch(types.StrategicMergePatchType, patch)); err != nil {
				return fmt.Errorf("removing stale entries from Deployment: %w", err)
			}
			pruned = true
		}
	}
	wrote, err := r.applyUnlessEqual(ctx, mc, t, owned)
	if pruned && !wrote {
		// The removal was the whole change.
		r.reportApply(ctx, mc, t)
	}
	return err
}

// readOwnedFields returns the fields the operator owns in t.live, as an
// apply configuration of t.want's type, or nil when there is no t.live. When they
// were found equal to t.want before and have not changed since, it returns
// t.want itself without extracting them again (see ownedFields).
func (r *MemcachedReconciler) readOwnedFields(mc *cachev1.Memcached, t applyTarget) (any, error) {
	if t.live.GetUID() == "" {
		return nil, nil
	}
	if r.owned.unchanged(client.ObjectKeyFromObject(mc), t.kind, t.live, t.annotations[desiredHashAnnotation]) {
		return t.want, nil
	}
	owned, err := t.extract()
	if err != nil {
		return nil, fmt.Errorf("reading owned fields of %s: %w", t.kind, err)
	}
	return owned, nil
}

// applyUnlessEqual applies t.want unless t.live exists and owned, the
// fields the operator owns in it (readOwnedFields), already equal t.want.
// Fields another manager took over by a hand edit are missing from owned,
// so they differ and the forced apply takes them back. Each write is logged, and a resize or a
// repair recorded as an event. It reports whether it wrote.
func (r *MemcachedReconciler) applyUnlessEqual(ctx context.Context, mc *cachev1.Memcached, t applyTarget, owned any) (bool, error) {
	if owned != nil {
		if owned == any(t.want) {
			return false, nil
		}
		if equality.Semantic.DeepEqual(owned, t.want) {
			r.owned.remember(client.ObjectKeyFromObject(mc), t.kind, t.live, t.annotations[desiredHashAnnotation])
			return false, nil
		}
	}
	written, err := r.serverSideApply(ctx, mc, t)
	if err != nil {
		return false, fmt.Errorf("applying %s: %w", t.kind, err)
	}
	// What was just written is what the operator wants: the next reconcile
	// need not extract it to find so.
	r.owned.remember(client.ObjectKeyFromObject(mc), t.kind, written, t.annotations[desiredHashAnnotation])
	r.reportApply(ctx, mc, t)
	return true, nil
}

// serverSideApply applies t.want and returns the object as the API server
// wrote it. client.Apply would decode the answer into t.want, and apply
// configurations have no managed fields: the operator's entry in the answer
// is what ownedFields remembers.
func (r *MemcachedReconciler) serverSideApply(ctx context.Context, mc *cachev1.Memcached, t applyTarget) (client.Object, error) {
	data, err := json.Marshal(t.want)
	if err != nil {
		return nil, err
	}
	written := reflect.New(reflect.TypeOf(t.live).Elem()).Interface().(client.Object)
	written.SetName(mc.Name)
	written.SetNamespace(mc.Namespace)
	err = r.client.Patch(ctx, written, client.RawPatch(types.ApplyPatchType, data),
		client.FieldOwner(FieldOwner), client.ForceOwnership)
	return written, err
}

// reportApply says what the apply of t did.
func (r *MemcachedReconciler) reportApply(ctx context.Context, mc *cachev1.Memcached, t applyTarget) {
	logger := log.FromContext(ctx)
	var wantReplicas, liveReplicas int32
	d, isDeployment := t.live.(*appsv1.Deployment)
	if isDeployment {
		wantReplicas = size(mc, r.opts)
		liveReplicas = ptr.Deref(d.Spec.Replicas, 1)
	}
	repaired := func(msg string) {
		logger.Info(msg)
		// The repaired object is the event's related object: events that
		// differ only in their note are merged into one series, and a
		// Memcached whose repairs leave it unchanged (same resourceVersion)
		// would show one kind's repair for all.
		related := t.live.DeepCopyObject().(client.Object)
		related.SetName(mc.Name)
		related.SetNamespace(mc.Namespace)
		r.recorder.Eventf(mc, related, corev1.EventTypeNormal, eventRepaired, "Repair", "%s", msg)
	}
	switch {
	case t.live.GetUID() == "" && recreating(mc):
		repaired("recreated the " + t.kind + ", which had been deleted")
	case t.live.GetUID() == "":
		logger.Info("created " + t.kind)
	case isRepair(t.live.GetAnnotations(), t.annotations) && isDeployment && liveReplicas != wantReplicas:
		repaired(fmt.Sprintf("set the Deployment back to %s: it had been changed to %d (spec.size sets the number of pods)",
			podCount(wantReplicas), liveReplicas))
	case isRepair(t.live.GetAnnotations(), t.annotations):
		repaired("undid a change to the " + t.kind + " that the Memcached does not ask for")
	case isDeployment && liveReplicas != wantReplicas:
		msg := fmt.Sprintf("resized from %d to %s", liveReplicas, podCount(wantReplicas))
		logger.Info(msg)
		r.recorder.Eventf(mc, nil, corev1.EventTypeNormal, eventResized, "Resize", "%s", msg)
	default:
		logger.Info("updated " + t.kind)
	}
}

// recreating reports whether creating an object of mc replaces one that was
// deleted: mc has been reconciled before, has not changed since (a PDB that a
// resize to 2 pods brings comes with a new generation) and was not blocked,
// so its objects existed.
func recreating(mc *cachev1.Memcached) bool {
	if mc.Status.ObservedGeneration == 0 || mc.Status.ObservedGeneration != mc.Generation {
		return false
	}
	c := meta.FindStatusCondition(mc.Status.Conditions, cachev1.ConditionDegraded)
	return c == nil || (c.Reason != cachev1.ReasonNameInUse && c.Reason != cachev1.ReasonSizeOutOfPolicy)
}

// deleteOwned deletes live, an object of mc's that it no longer wants (empty
// when there is none), saying why.
func (r *MemcachedReconciler) deleteOwned(ctx context.Context, kind string, live client.Object, why string) error {
	if live.GetUID() == "" {
		return nil
	}
	uid := live.GetUID()
	err := r.client.Delete(ctx, live, client.Preconditions{UID: &uid})
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting %s: %w", kind, err)
	}
	log.FromContext(ctx).Info("deleted " + kind + ": " + why)
	return nil
}
