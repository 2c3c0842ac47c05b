package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
)

// Event reasons, for `kubectl get events --field-selector reason=...`.
// Creation has none: the Deployment and the status show it, and an event is
// one more API write per Memcached. A resize keeps one, as a resize through
// the scale subresource leaves no other record of the size before.
const (
	eventResized = "Resized"
	eventFailed  = "ReconcileFailed"
)

// MemcachedReconciler makes each Memcached's Deployment, Service and
// PodDisruptionBudget what the Memcached says, and reports their state.
type MemcachedReconciler struct {
	client   client.Client
	recorder events.EventRecorder
	opts     Options
	pacer    *statusPacer
}

// NewMemcachedReconciler returns a reconciler that reads through c (the
// manager's cached client) and writes as FieldOwner.
func NewMemcachedReconciler(c client.Client, recorder events.EventRecorder, opts Options) *MemcachedReconciler {
	opts = opts.withDefaults()
	return &MemcachedReconciler{client: c, recorder: recorder, opts: opts,
		pacer: newStatusPacer(opts.ProgressInterval, clock.RealClock{})}
}

// The operator writes with server-side apply (patch; create when the object
// is new) and deletes only PDBs, so it needs no update verb.
// +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds,verbs=get;list;watch
// +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds/status,verbs=patch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the reconciler. Changes to the owned objects
// and to the pods (found by their instance label) trigger a reconcile; the
// only timed requeue is for a status progress the pacer holds back.
func (r *MemcachedReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := indexPodsByInstance(context.Background(), mgr); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		// Every update, status included: a status write that lost a race
		// with a stale cache is corrected when the newer object arrives.
		For(&cachev1.Memcached{}).
		Watches(&corev1.Service{}, coalescing(r.opts.CoalesceDelay, controllerOf)).
		Watches(&policyv1.PodDisruptionBudget{}, coalescing(r.opts.CoalesceDelay, controllerOf)).
		// The Deployment and its pods change in bursts during a rollout.
		Watches(&appsv1.Deployment{}, coalescing(r.opts.CoalesceDelay, instanceOf)).
		Watches(&corev1.Pod{}, coalescing(r.opts.CoalesceDelay, instanceOf)).
		Named("memcached").
		WithOptions(controller.Options{MaxConcurrentReconciles: r.opts.Workers}).
		Complete(r)
}

// Reconcile brings one Memcached's objects to the desired state and writes
// its status when it changed.
func (r *MemcachedReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	mc := &cachev1.Memcached{}
	if err := r.client.Get(ctx, req.NamespacedName, mc); err != nil {
		// Deleted: the garbage collector removes the owned objects.
		if apierrors.IsNotFound(err) {
			r.pacer.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !mc.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}

	d, writeErr := r.reconcileObjects(ctx, mc)
	if writeErr != nil {
		r.recorder.Eventf(mc, nil, corev1.EventTypeWarning, eventFailed, "Reconcile", "%v", writeErr)
	}

	pods := &corev1.PodList{}
	if err := r.client.List(ctx, pods, podsOf(mc)...); err != nil {
		return ctrl.Result{}, errors.Join(writeErr, err)
	}
	st := desiredStatus(mc, r.opts, d, pods.Items, writeErr)
	changed := !equality.Semantic.DeepEqual(st, mc.Status)
	if d == nil && writeErr == nil {
		// This reconcile created the Deployment; its Add event brings the
		// next reconcile within moments, with pods to report. Writing the
		// empty status now would be one more API write per Memcached.
		changed = false
	}
	var wait time.Duration
	if changed {
		wait = r.pacer.wait(req.NamespacedName, urgent(mc.Status, st))
	}
	log.FromContext(ctx).V(1).Info("reconciled", "readyReplicas", st.ReadyReplicas, "nodes", len(st.Nodes),
		"statusChanged", changed, "statusHeldFor", wait)
	if wait > 0 {
		// A failure makes the status settled, so writeErr is nil here.
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	if changed {
		if err := r.writeStatus(ctx, mc, st); err != nil {
			return ctrl.Result{}, errors.Join(writeErr, err)
		}
	}
	// Returning the write error requeues with backoff.
	return ctrl.Result{}, writeErr
}

// writeStatus replaces mc's status with st.
func (r *MemcachedReconciler) writeStatus(ctx context.Context, mc *cachev1.Memcached, st cachev1.MemcachedStatus) error {
	// The lock makes a patch computed from a stale cached object fail instead
	// of leaving fields that only the server has changed.
	patch := client.MergeFromWithOptions(mc.DeepCopy(), client.MergeFromWithOptimisticLock{})
	mc.Status = st
	err := r.client.Status().Patch(ctx, mc, patch)
	if apierrors.IsConflict(err) {
		// A newer Memcached is on its way to the cache; its update event
		// reconciles again.
		log.FromContext(ctx).V(1).Info("status write raced a newer object; waiting for it")
		return nil
	}
	if err != nil {
		return fmt.Errorf("writing status: %w", err)
	}
	return nil
}

// reconcileObjects applies the Deployment, Service and PDB where they differ
// from the desired ones and returns the Deployment as last seen.
func (r *MemcachedReconciler) reconcileObjects(ctx context.Context, mc *cachev1.Memcached) (*appsv1.Deployment, error) {
	d := &appsv1.Deployment{}
	if err := r.getOptional(ctx, mc, d); err != nil {
		return nil, err
	}
	if err := r.applyDeployment(ctx, mc, d); err != nil {
		return liveOrNil(d), err
	}

	svc := &corev1.Service{}
	if err := r.getOptional(ctx, mc, svc); err != nil {
		return liveOrNil(d), err
	}
	if _, err := r.applyIfChanged(ctx, desiredService(mc), svc, func() (any, error) {
		return corev1ac.ExtractService(svc, FieldOwner)
	}); err != nil {
		return liveOrNil(d), fmt.Errorf("applying Service: %w", err)
	}

	return liveOrNil(d), r.reconcilePDB(ctx, mc)
}

// liveOrNil turns the empty Deployment that getOptional leaves for a missing
// one into nil.
func liveOrNil(d *appsv1.Deployment) *appsv1.Deployment {
	if d.UID == "" {
		return nil
	}
	return d
}

// applyDeployment applies mc's Deployment where it differs from live (empty
// when there is none) and records an event for a create or a resize.
func (r *MemcachedReconciler) applyDeployment(ctx context.Context, mc *cachev1.Memcached, live *appsv1.Deployment) error {
	want := desiredDeployment(mc, r.opts)
	if live.UID != "" {
		owned, err := appsv1ac.ExtractDeployment(live, FieldOwner)
		if err != nil {
			return fmt.Errorf("reading owned fields of Deployment: %w", err)
		}
		if patch := prunePatch(live, owned, want); patch != nil {
			if err := r.client.Patch(ctx, live, client.RawPatch(types.StrategicMergePatchType, patch)); err != nil {
				return fmt.Errorf("removing stale entries from Deployment: %w", err)
			}
		}
	}
	applied, err := r.applyIfChanged(ctx, want, live, func() (any, error) {
		return appsv1ac.ExtractDeployment(live, FieldOwner)
	})
	if err != nil {
		return fmt.Errorf("applying Deployment: %w", err)
	}
	replicas := *want.Spec.Replicas
	switch {
	case !applied:
	case live.UID == "":
		log.FromContext(ctx).Info("created Deployment", "replicas", replicas)
	case live.Spec.Replicas == nil || *live.Spec.Replicas != replicas:
		r.recorder.Eventf(mc, nil, corev1.EventTypeNormal, eventResized, "Resize", "resized from %d to %d pods", ptr.Deref(live.Spec.Replicas, 1), replicas)
	default:
		log.FromContext(ctx).Info("repaired Deployment")
	}
	return nil
}

func (r *MemcachedReconciler) reconcilePDB(ctx context.Context, mc *cachev1.Memcached) error {
	pdb := &policyv1.PodDisruptionBudget{}
	if err := r.getOptional(ctx, mc, pdb); err != nil {
		return err
	}
	want := desiredPDB(mc, r.opts)
	if want == nil {
		if pdb.UID == "" {
			return nil
		}
		err := r.client.Delete(ctx, pdb, client.Preconditions{UID: &pdb.UID})
		if client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting PodDisruptionBudget: %w", err)
		}
		return nil
	}
	if _, err := r.applyIfChanged(ctx, want, pdb, func() (any, error) {
		return policyv1ac.ExtractPodDisruptionBudget(pdb, FieldOwner)
	}); err != nil {
		return fmt.Errorf("applying PodDisruptionBudget: %w", err)
	}
	return nil
}

// applyIfChanged applies want unless live exists and the fields the operator
// owns in it, as extract returns them, already equal want; it reports whether
// it wrote. Fields another manager took over by a hand edit are missing from
// the extract, so they differ and the forced apply takes them back.
func (r *MemcachedReconciler) applyIfChanged(ctx context.Context, want runtime.ApplyConfiguration, live client.Object, extract func() (any, error)) (bool, error) {
	if live.GetUID() != "" {
		current, err := extract()
		if err != nil {
			return false, fmt.Errorf("reading owned fields: %w", err)
		}
		if equality.Semantic.DeepEqual(current, want) {
			return false, nil
		}
	}
	if err := r.client.Apply(ctx, want, client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return false, err
	}
	return true, nil
}

// getOptional reads mc's namesake object of obj's kind into obj, leaving obj
// empty when it does not exist.
func (r *MemcachedReconciler) getOptional(ctx context.Context, mc *cachev1.Memcached, obj client.Object) error {
	err := r.client.Get(ctx, client.ObjectKeyFromObject(mc), obj)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
