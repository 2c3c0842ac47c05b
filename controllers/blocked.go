package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/log"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
)

// blockedError is why the reconciler writes none of a Memcached's objects
// when a retry cannot help and only a user's change can: an object of its
// name that belongs to someone else, or a size outside the policy. It is
// reported as Degraded with its reason, logged and recorded as an event when
// it first appears, and never returned to the controller, whose error path
// would retry within seconds and log a stack trace every time.
type blockedError struct {
	reason  string
	message string
	// poll is set when the user's fix cannot be seen: the other object is
	// not in the operator's cache (which holds only its own), so its removal
	// raises no event and the reconciler must look again now and then.
	poll bool
}

func (e *blockedError) Error() string { return e.message }

// getLive reads mc's namesake object of obj's kind into obj from the cache,
// leaving obj empty when the cache has none. An object there that mc does
// not control (someone else's, carrying the operator's label) is not mc's
// to write: that is a blockedError.
func (r *MemcachedReconciler) getLive(ctx context.Context, mc *cachev1.Memcached, kind string, obj client.Object) error {
	err := r.client.Get(ctx, client.ObjectKeyFromObject(mc), obj)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return checkControlled(mc, kind, obj)
}

// checkNameFree is called before an object is created. The cache holds only
// the operator's own objects, so an object of that name made by someone
// else is invisible to it, and an apply would take that object over (or, for
// a Deployment, fail on its immutable selector). The API server is asked,
// from its watch cache (resourceVersion 0), which costs one read per
// creation, not per reconcile. An object that mc controls is one the cache
// has not caught up with, and applying to it is safe.
func (r *MemcachedReconciler) checkNameFree(ctx context.Context, mc *cachev1.Memcached, kind string, obj client.Object) error {
	err := r.reader.Get(ctx, client.ObjectKeyFromObject(mc), obj, &client.GetOptions{Raw: &metav1.GetOptions{ResourceVersion: "0"}})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("looking for an existing %s: %w", kind, err)
	}
	return checkControlled(mc, kind, obj)
}

func checkControlled(mc *cachev1.Memcached, kind string, obj client.Object) error {
	if metav1.IsControlledBy(obj, mc) {
		return nil
	}
	return &blockedError{
		reason: cachev1.ReasonNameInUse,
		message: fmt.Sprintf("a %s named %q already exists and does not belong to this Memcached, so the operator "+
			"leaves it alone and creates nothing; delete that %s or give the Memcached another name", kind, obj.GetName(), kind),
		poll: true,
	}
}

// checkSizePolicy refuses a size outside the administrator's range. The
// validating webhook refuses it first; this holds when the webhooks did not
// run (stopped, or not installed), so that a size of 40 does not become 40
// pods behind the policy's back.
func checkSizePolicy(mc *cachev1.Memcached, o Options) error {
	n := size(mc, o)
	if (o.MinSize == 0 || n >= o.MinSize) && (o.MaxSize == 0 || n <= o.MaxSize) {
		return nil
	}
	return &blockedError{
		reason: cachev1.ReasonSizeOutOfPolicy,
		message: fmt.Sprintf("spec.size %d is outside the range the administrator allows (%d to %d), "+
			"so the operator leaves this Memcached's objects as they are; set spec.size within the range", n, o.MinSize, o.MaxSize),
	}
}

// reportBlocked logs and records why mc is blocked, once: when its status
// does not say so yet.
func (r *MemcachedReconciler) reportBlocked(ctx context.Context, mc *cachev1.Memcached, b *blockedError) {
	if c := meta.FindStatusCondition(mc.Status.Conditions, cachev1.ConditionDegraded); c != nil &&
		c.Status == metav1.ConditionTrue && c.Reason == b.reason && c.Message == b.message {
		return
	}
	log.FromContext(ctx).Info("not reconciling: "+b.message, "reason", b.reason)
	r.recorder.Eventf(mc, nil, corev1.EventTypeWarning, b.reason, "Reconcile", "%s", b.message)
}

// pollInterval is how long a blocked Memcached waits before it is looked at
// again: not at all when a change of the Memcached is what unblocks it, else
// as long as it has been blocked, between 10 seconds and 5 minutes, so that a
// quick fix is seen quickly and a forgotten one costs little.
func (r *MemcachedReconciler) pollInterval(b *blockedError, st cachev1.MemcachedStatus) time.Duration {
	if !b.poll {
		return 0
	}
	var blockedFor time.Duration
	if c := meta.FindStatusCondition(st.Conditions, cachev1.ConditionDegraded); c != nil {
		blockedFor = r.clock.Since(c.LastTransitionTime.Time)
	}
	return min(max(blockedFor, 10*time.Second), 5*time.Minute)
}
