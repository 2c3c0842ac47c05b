package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
)

// Event reasons, for `kubectl get events --field-selector reason=...`.
// Creation has none: the Deployment and the status show it, and an event is
// one more API write per Memcached. A resize has one, as a resize through
// the scale subresource leaves no other record of the size before; so does
// a repair, which undoes someone's change, and a blocked Memcached's reason
// (see blockedError), once.
const (
	eventResized  = "Resized"
	eventRepaired = "Repaired"
	eventFailed   = "ReconcileFailed"
)

// MemcachedReconciler makes each Memcached's Deployment, Service and
// PodDisruptionBudget what the Memcached says, and reports their state.
type MemcachedReconciler struct {
	client client.Client
	// reader reads from the API server; the client reads the cache, which
	// holds only the operator's own objects.
	reader   client.Reader
	recorder events.EventRecorder
	opts     Options
	pacer    *statusPacer
	clock    clock.Clock
	owned    *ownedFields
}

// NewMemcachedReconciler returns a reconciler that reads through mgr's
// cached client and writes as FieldOwner.
func NewMemcachedReconciler(mgr ctrl.Manager, opts Options) *MemcachedReconciler {
	opts = opts.withDefaults()
	return &MemcachedReconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(),
		recorder: mgr.GetEventRecorder(FieldOwner), opts: opts,
		pacer: newStatusPacer(opts.ProgressInterval, clock.RealClock{}), clock: clock.RealClock{},
		owned: newOwnedFields()}
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
// only timed requeues are for a status progress the pacer holds back and
// for a Memcached blocked by someone else's object of its name.
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
		WithOptions(controller.Options{
			MaxConcurrentReconciles: r.opts.Workers,
			// One key per line for the Memcached, where controller-runtime's
			// default names it three times (object, namespace, name).
			LogConstructor: func(req *reconcile.Request) logr.Logger {
				l := mgr.GetLogger().WithName("memcached")
				if req != nil {
					l = l.WithValues("memcached", req.String())
				}
				return l
			},
		}).
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
			r.owned.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !mc.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}

	d, writeErr := r.reconcileObjects(ctx, mc)
	var blocked *blockedError
	switch {
	case errors.As(writeErr, &blocked):
		r.reportBlocked(ctx, mc, blocked)
	case writeErr != nil:
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
	if blocked != nil {
		return ctrl.Result{RequeueAfter: r.pollInterval(blocked, st)}, nil
	}
	// Returning the write error requeues with backoff.
	return ctrl.Result{}, writeErr
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
// from the desired ones and returns the Deployment as last seen. Nothing is
// written when mc is blocked (see blockedError).
func (r *MemcachedReconciler) reconcileObjects(ctx context.Context, mc *cachev1.Memcached) (*appsv1.Deployment, error) {
	d, svc, pdb := &appsv1.Deployment{}, &corev1.Service{}, &policyv1.PodDisruptionBudget{}
	wantPDB := desiredPDB(mc, r.opts)
	children := []struct {
		kind   string
		live   client.Object
		create bool
	}{
		{"Deployment", d, true},
		{"Service", svc, true},
		{"PodDisruptionBudget", pdb, wantPDB != nil},
	}
	// On a name clash the object read is someone else's: nil, so that its
	// pods do not count as mc's.
	for _, c := range children {
		if err := r.getLive(ctx, mc, c.kind, c.live); err != nil {
			return nil, err
		}
	}
	if err := checkSizePolicy(mc, r.opts); err != nil {
		return liveOrNil(d), err
	}
	// Every name is checked before anything is created, so that a clash
	// leaves nothing half-made.
	for _, c := range children {
		if c.create && c.live.GetUID() == "" {
			if err := r.checkNameFree(ctx, mc, c.kind, c.live); err != nil {
				return nil, err
			}
		}
	}

	if err := r.applyDeployment(ctx, mc, d); err != nil {
		return liveOrNil(d), err
	}
	wantSvc := desiredService(mc)
	if err := r.apply(ctx, mc, write{kind: "Service", want: wantSvc, annotations: wantSvc.Annotations, live: svc,
		extract: func() (any, error) { return corev1ac.ExtractService(svc, FieldOwner) }}); err != nil {
		return liveOrNil(d), err
	}
	if wantPDB == nil {
		return liveOrNil(d), r.deletePDB(ctx, pdb)
	}
	err := r.apply(ctx, mc, write{kind: "PodDisruptionBudget", want: wantPDB, annotations: wantPDB.Annotations, live: pdb,
		extract: func() (any, error) { return policyv1ac.ExtractPodDisruptionBudget(pdb, FieldOwner) }})
	return liveOrNil(d), err
}

// liveOrNil turns the empty Deployment that getLive leaves for a missing
// one into nil.
func liveOrNil(d *appsv1.Deployment) *appsv1.Deployment {
	if d.UID == "" {
		return nil
	}
	return d
}

// applyDeployment applies mc's Deployment where it differs from live (empty
// when there is none), after removing list entries the operator no longer
// wants (see prunePatch).
func (r *MemcachedReconciler) applyDeployment(ctx context.Context, mc *cachev1.Memcached, live *appsv1.Deployment) error {
	want := desiredDeployment(mc, r.opts)
	w := write{kind: "Deployment", want: want, annotations: want.Annotations, live: live,
		extract: func() (any, error) { return appsv1ac.ExtractDeployment(live, FieldOwner) }}
	owned, err := r.ownedOf(mc, w)
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
	wrote, err := r.applyOver(ctx, mc, w, owned)
	if pruned && !wrote {
		// The removal was the whole change.
		r.reportWrite(ctx, mc, w)
	}
	return err
}

// deletePDB deletes pdb (empty when there is none): mc is below pdbMinSize.
func (r *MemcachedReconciler) deletePDB(ctx context.Context, pdb *policyv1.PodDisruptionBudget) error {
	if pdb.UID == "" {
		return nil
	}
	err := r.client.Delete(ctx, pdb, client.Preconditions{UID: &pdb.UID})
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting PodDisruptionBudget: %w", err)
	}
	log.FromContext(ctx).Info("deleted PodDisruptionBudget: fewer than " + strconv.Itoa(pdbMinSize) + " pods")
	return nil
}

// write is one object the reconciler applies.
type write struct {
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

// ownedOf returns the fields the operator owns in w.live, as an apply
// configuration of w.want's type, or nil when there is no w.live. When they
// were found equal to w.want before and have not changed since, it returns
// w.want itself without extracting them again (see ownedFields).
func (r *MemcachedReconciler) ownedOf(mc *cachev1.Memcached, w write) (any, error) {
	if w.live.GetUID() == "" {
		return nil, nil
	}
	if r.owned.unchanged(client.ObjectKeyFromObject(mc), w.kind, w.live, w.annotations[desiredHashAnnotation]) {
		return w.want, nil
	}
	owned, err := w.extract()
	if err != nil {
		return nil, fmt.Errorf("reading owned fields of %s: %w", w.kind, err)
	}
	return owned, nil
}

// apply is applyOver with what the operator owns of w.live.
func (r *MemcachedReconciler) apply(ctx context.Context, mc *cachev1.Memcached, w write) error {
	owned, err := r.ownedOf(mc, w)
	if err != nil {
		return err
	}
	_, err = r.applyOver(ctx, mc, w, owned)
	return err
}

// applyOver applies w.want unless w.live exists and owned, the fields the
// operator owns in it (ownedOf), already equal w.want. Fields another manager
// took over by a hand edit are missing from owned, so they differ and the
// forced apply takes them back. Each write is logged, and a resize or a
// repair recorded as an event. It reports whether it wrote.
func (r *MemcachedReconciler) applyOver(ctx context.Context, mc *cachev1.Memcached, w write, owned any) (bool, error) {
	if owned != nil {
		if owned == any(w.want) {
			return false, nil
		}
		if equality.Semantic.DeepEqual(owned, w.want) {
			r.owned.remember(client.ObjectKeyFromObject(mc), w.kind, w.live, w.annotations[desiredHashAnnotation])
			return false, nil
		}
	}
	written, err := r.applyAndRead(ctx, mc, w)
	if err != nil {
		return false, fmt.Errorf("applying %s: %w", w.kind, err)
	}
	// What was just written is what the operator wants: the next reconcile
	// need not extract it to find so.
	r.owned.remember(client.ObjectKeyFromObject(mc), w.kind, written, w.annotations[desiredHashAnnotation])
	r.reportWrite(ctx, mc, w)
	return true, nil
}

// applyAndRead applies w.want and returns the object as the API server wrote
// it. client.Apply would decode the answer into w.want, and apply
// configurations have no managed fields: the operator's entry in the answer
// is what ownedFields remembers.
func (r *MemcachedReconciler) applyAndRead(ctx context.Context, mc *cachev1.Memcached, w write) (client.Object, error) {
	data, err := json.Marshal(w.want)
	if err != nil {
		return nil, err
	}
	written := reflect.New(reflect.TypeOf(w.live).Elem()).Interface().(client.Object)
	written.SetName(mc.Name)
	written.SetNamespace(mc.Namespace)
	err = r.client.Patch(ctx, written, client.RawPatch(types.ApplyPatchType, data),
		client.FieldOwner(FieldOwner), client.ForceOwnership)
	return written, err
}

// reportWrite says what the write w did.
func (r *MemcachedReconciler) reportWrite(ctx context.Context, mc *cachev1.Memcached, w write) {
	logger := log.FromContext(ctx)
	var wantReplicas, liveReplicas int32
	d, isDeployment := w.live.(*appsv1.Deployment)
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
		related := w.live.DeepCopyObject().(client.Object)
		related.SetName(mc.Name)
		related.SetNamespace(mc.Namespace)
		r.recorder.Eventf(mc, related, corev1.EventTypeNormal, eventRepaired, "Repair", "%s", msg)
	}
	switch {
	case w.live.GetUID() == "" && recreating(mc):
		repaired("recreated the " + w.kind + ", which had been deleted")
	case w.live.GetUID() == "":
		logger.Info("created " + w.kind)
	case isRepair(w.live.GetAnnotations(), w.annotations) && isDeployment && liveReplicas != wantReplicas:
		repaired(fmt.Sprintf("set the Deployment back to %s: it had been changed to %d (spec.size sets the number of pods)",
			podCount(wantReplicas), liveReplicas))
	case isRepair(w.live.GetAnnotations(), w.annotations):
		repaired("undid a change to the " + w.kind + " that the Memcached does not ask for")
	case isDeployment && liveReplicas != wantReplicas:
		msg := fmt.Sprintf("resized from %d to %s", liveReplicas, podCount(wantReplicas))
		logger.Info(msg)
		r.recorder.Eventf(mc, nil, corev1.EventTypeNormal, eventResized, "Resize", "%s", msg)
	default:
		logger.Info("updated " + w.kind)
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
