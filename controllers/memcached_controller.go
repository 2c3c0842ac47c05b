package controllers

import (
	"context"
	"errors"
	"strconv"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/go-logr/logr"
	configv1 "github.com/openshift/api/config/v1"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/controllers/servedcert"
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
	echoes   *statusEchoes
	warmups  *warmupRounds
}

// NewMemcachedReconciler returns a reconciler that reads through mgr's
// cached client and writes as FieldOwner.
func NewMemcachedReconciler(mgr ctrl.Manager, opts Options) *MemcachedReconciler {
	opts = opts.withDefaults()
	return &MemcachedReconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(),
		recorder: mgr.GetEventRecorder(FieldOwner), opts: opts,
		pacer: newStatusPacer(opts.ProgressInterval, clock.RealClock{}), clock: clock.RealClock{},
		owned: newOwnedFields(), echoes: newStatusEchoes(), warmups: newWarmupRounds()}
}

// The operator writes with server-side apply (patch; create when the object
// is new) and deletes only PDBs, so it needs no update verb.
// +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds,verbs=get;list;watch
// +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds/status,verbs=patch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods/status,verbs=patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=monitoring.coreos.com,resources=podmonitors;prometheusrules,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=cert-manager.io,resources=certificates,verbs=get;list;watch;create;patch;delete

// SetupWithManager registers the reconciler. Changes to the owned objects
// and to the pods (found by their instance label) trigger a reconcile; the
// only timed requeues are for a status progress the pacer holds back and
// for a Memcached blocked by someone else's object of its name. The
// served-certificate watcher, when set, sends the Memcached objects whose
// pods' certificates it found changed.
func (r *MemcachedReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := indexPodsByInstance(context.Background(), mgr); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).
		// Every update, status included: a status write that lost a race
		// with a stale cache is corrected when the newer object arrives.
		// Only the echo of the reconciler's own status write is left out.
		For(&cachev1.Memcached{}, builder.WithPredicates(r.echoes.filter())).
		Watches(&corev1.Service{}, coalescing(r.opts.CoalesceDelay, controllerOf)).
		Watches(&policyv1.PodDisruptionBudget{}, coalescing(r.opts.CoalesceDelay, controllerOf), builder.WithPredicates(ignoreStatusOnly())).
		// The Deployment and its pods change in bursts during a rollout.
		Watches(&appsv1.Deployment{}, coalescing(r.opts.CoalesceDelay, instanceOf)).
		Watches(&corev1.Pod{}, coalescing(r.opts.CoalesceDelay, instanceOf))
	if r.opts.PrometheusOperator {
		b = b.Watches(&monitoringv1.PodMonitor{}, coalescing(r.opts.CoalesceDelay, controllerOf)).
			Watches(&monitoringv1.PrometheusRule{}, coalescing(r.opts.CoalesceDelay, controllerOf))
	}
	if r.opts.CertManager {
		b = b.Watches(&cmapi.Certificate{}, coalescing(r.opts.CoalesceDelay, controllerOf))
	}
	if r.opts.ClusterTLSProfile {
		b = b.Watches(&configv1.APIServer{}, handler.EnqueueRequestsFromMapFunc(r.followingClusterTLS))
	}
	if w := r.opts.ServedCertificates; w != nil {
		b = b.WatchesRawSource(source.Channel(w.Changes(), &handler.EnqueueRequestForObject{}))
	}
	return b.
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
			r.echoes.forget(req.NamespacedName)
			r.warmups.forget(req.NamespacedName)
			r.opts.Metrics.clearBlocked(req.NamespacedName)
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
		r.opts.Metrics.setBlocked(req.NamespacedName, blocked.reason)
	case writeErr != nil:
		// Whether mc is still blocked is unknown until a write gets
		// through: its series stays as it was.
		r.recorder.Eventf(mc, nil, corev1.EventTypeWarning, eventFailed, "Reconcile", "%v", writeErr)
	default:
		r.opts.Metrics.clearBlocked(req.NamespacedName)
	}

	pods := &corev1.PodList{}
	if err := r.client.List(ctx, pods, podsOf(mc)...); err != nil {
		return ctrl.Result{}, errors.Join(writeErr, err)
	}
	st := desiredStatus(mc, r.opts, d, pods.Items, writeErr)
	var served servedcert.Report
	known := false
	if w := r.opts.ServedCertificates; w != nil {
		served, known = w.Report(req.NamespacedName)
	}
	st = withServedCertificates(mc, st, served, known)
	cert, err := r.liveCertificate(ctx, mc)
	if err != nil {
		return ctrl.Result{}, errors.Join(writeErr, err)
	}
	st = withCertificateReady(mc, st, r.opts.CertManager, cert)
	waiting, err := r.paceRollout(ctx, mc, pods.Items)
	if err != nil {
		return ctrl.Result{}, errors.Join(writeErr, err)
	}
	st = withWarming(mc, st, waiting)
	changed := !equality.Semantic.DeepEqual(st, mc.Status)
	if d == nil && writeErr == nil {
		// This reconcile created the Deployment; its Add event brings the
		// next reconcile within moments, with pods to report. Writing the
		// empty status now would be one more API write per Memcached.
		changed = false
	}
	wait := r.pacer.wait(req.NamespacedName, changed, urgent(mc.Status, st))
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
	if waiting != nil && writeErr == nil {
		// The waiting pod's counters are read again then.
		return ctrl.Result{RequeueAfter: r.opts.Warmup.Interval}, nil
	}
	// Returning the write error requeues with backoff.
	return ctrl.Result{}, writeErr
}

// reconcileObjects applies the Deployment, Service and PDB where they differ
// from the desired ones and returns the Deployment as last seen. Nothing is
// written when mc is blocked (see blockedError).
func (r *MemcachedReconciler) reconcileObjects(ctx context.Context, mc *cachev1.Memcached) (*appsv1.Deployment, error) {
	d, svc, pdb := &appsv1.Deployment{}, &corev1.Service{}, &policyv1.PodDisruptionBudget{}
	wantPDB := desiredPDB(mc, r.opts)
	children := []child{
		{"Deployment", d, true},
		{"Service", svc, true},
		{"PodDisruptionBudget", pdb, wantPDB != nil},
	}
	var monitors []optionalObject
	if r.opts.PrometheusOperator {
		monitors = desiredMonitoring(mc)
		// Without monitoring, a PodMonitor or PrometheusRule of the name is
		// none of the Memcached's business: an admin's own, made before
		// the operator offered them, must not block an upgraded Memcached.
		if mc.Spec.Monitoring.IsEnabled() {
			for _, m := range monitors {
				children = append(children, child{m.kind, m.live, true})
			}
		}
	}
	cert := desiredCertificate(mc)
	if r.opts.CertManager && wantsCertificate(mc) {
		children = append(children, child{cert.kind, cert.live, true})
	}
	// On a name clash the object read is someone else's. When it is the
	// Deployment, the Deployment returned is nil, so that its pods do not
	// count as mc's; when it is the Service or the PDB (one that appears
	// before a resize to two pods), mc's own Deployment still serves and
	// its pods still count.
	clash := func(live client.Object, err error) (*appsv1.Deployment, error) {
		if live == client.Object(d) {
			return nil, err
		}
		return liveOrNil(d), err
	}
	for _, c := range children {
		if err := r.getLive(ctx, mc, c.kind, c.live); err != nil {
			return clash(c.live, err)
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
				return clash(c.live, err)
			}
		}
	}

	if err := r.applyDeployment(ctx, mc, d); err != nil {
		return liveOrNil(d), err
	}
	wantSvc := desiredService(mc)
	if err := r.applyIfDrifted(ctx, mc, applyTarget{kind: "Service", want: wantSvc, annotations: wantSvc.Annotations, live: svc,
		extract: func() (any, error) { return corev1ac.ExtractService(svc, FieldOwner) }}); err != nil {
		return liveOrNil(d), err
	}
	var err error
	if wantPDB == nil {
		err = r.deleteOwned(ctx, "PodDisruptionBudget", pdb, "fewer than "+strconv.Itoa(pdbMinSize)+" pods")
	} else {
		err = r.applyIfDrifted(ctx, mc, applyTarget{kind: "PodDisruptionBudget", want: wantPDB, annotations: wantPDB.Annotations, live: pdb,
			extract: func() (any, error) { return policyv1ac.ExtractPodDisruptionBudget(pdb, FieldOwner) }})
	}
	if err != nil {
		return liveOrNil(d), err
	}
	if err := r.reconcileCertificate(ctx, mc, cert); err != nil {
		return liveOrNil(d), err
	}
	return liveOrNil(d), r.reconcileMonitoring(ctx, mc, monitors)
}

// child is an object a Memcached may own, read into live; create says
// whether the Memcached wants it.
type child struct {
	kind   string
	live   client.Object
	create bool
}

// liveOrNil turns the empty Deployment that getLive leaves for a missing
// one into nil.
func liveOrNil(d *appsv1.Deployment) *appsv1.Deployment {
	if d.UID == "" {
		return nil
	}
	return d
}
