package ingresspolicy

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/example-inc/memcached-operator/controllers"
)

// FindManager returns the Target of the manager running as pod podName in
// namespace: the Deployment among the namespace's whose selector selects
// the pod. It has no ports; the caller knows them.
func FindManager(ctx context.Context, r client.Reader, namespace, podName string) (Target, error) {
	pod := &corev1.Pod{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: namespace, Name: podName}, pod); err != nil {
		return Target{}, fmt.Errorf("reading the manager's pod: %w", err)
	}
	var deployments appsv1.DeploymentList
	if err := r.List(ctx, &deployments, client.InNamespace(namespace)); err != nil {
		return Target{}, fmt.Errorf("listing the Deployments of namespace %s: %w", namespace, err)
	}
	for _, d := range deployments.Items {
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		return Target{
			Namespace:   namespace,
			PodSelector: d.Spec.Selector.MatchLabels,
			Owner: metav1ac.OwnerReference().WithAPIVersion("apps/v1").WithKind("Deployment").
				WithName(d.Name).WithUID(d.UID),
		}, nil
	}
	return Target{}, fmt.Errorf("no Deployment in namespace %s selects the manager's pod %s", namespace, podName)
}

// Keeper applies the policies of its Target, and applies them again when
// one is changed or deleted. It writes only where what it owns in a policy
// differs from what it wants.
type Keeper struct {
	Client client.Client
	Target Target
}

// SetupWithManager runs k under mgr, whose cache must hold what
// k.Target.CacheByObject says.
func (k *Keeper) SetupWithManager(mgr ctrl.Manager) error {
	ns := k.Target.Namespace
	ours := predicate.NewPredicateFuncs(func(o client.Object) bool {
		_, known := Desired(k.Target)[o.GetName()]
		return o.GetNamespace() == ns && known
	})
	// Nothing would trigger the first apply of a policy that does not
	// exist yet.
	initial := source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		for name := range Desired(k.Target) {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}})
		}
		return nil
	})
	return ctrl.NewControllerManagedBy(mgr).Named("ingresspolicy").
		For(&networkingv1.NetworkPolicy{}, builder.WithPredicates(ours)).
		WatchesRawSource(initial).
		Complete(k)
}

// CacheByObject is what the manager's cache must hold for a Keeper of t:
// the operator's NetworkPolicies in t's namespace, whatever namespaces the
// operator watches for Memcached objects.
func (t Target) CacheByObject() (client.Object, cache.ByObject) {
	return &networkingv1.NetworkPolicy{}, cache.ByObject{
		Namespaces: map[string]cache.Config{t.Namespace: {}},
		Label:      controllers.ManagedBySelector(),
	}
}

// Reconcile makes the policy req names what Desired says.
func (k *Keeper) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	want, known := Desired(k.Target)[req.Name]
	if !known || req.Namespace != k.Target.Namespace {
		return reconcile.Result{}, nil
	}
	live := &networkingv1.NetworkPolicy{}
	err := k.Client.Get(ctx, req.NamespacedName, live)
	exists := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, err
	}
	logger := log.FromContext(ctx)
	if want == nil {
		if !exists || live.Labels["app.kubernetes.io/managed-by"] != controllers.FieldOwner {
			return reconcile.Result{}, nil
		}
		logger.Info("deleting the NetworkPolicy of a server that is off")
		return reconcile.Result{}, client.IgnoreNotFound(k.Client.Delete(ctx, live))
	}
	if exists {
		owned, err := networkingv1ac.ExtractNetworkPolicy(live, controllers.FieldOwner)
		if err != nil {
			return reconcile.Result{}, fmt.Errorf("reading owned fields of NetworkPolicy %s: %w", req.Name, err)
		}
		if equality.Semantic.DeepEqual(owned, want) {
			return reconcile.Result{}, nil
		}
	}
	live.SetNamespace(req.Namespace)
	live.SetName(req.Name)
	data, err := json.Marshal(want)
	if err != nil {
		return reconcile.Result{}, err
	}
	if err := k.Client.Patch(ctx, live, client.RawPatch(types.ApplyPatchType, data),
		client.FieldOwner(controllers.FieldOwner), client.ForceOwnership); err != nil {
		return reconcile.Result{}, fmt.Errorf("applying NetworkPolicy %s: %w", req.Name, err)
	}
	logger.Info("applied NetworkPolicy", "existed", exists)
	return reconcile.Result{}, nil
}
