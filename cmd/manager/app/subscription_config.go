package app

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Under OLM, a Subscription's spec.config.env (RELATED_IMAGE_MEMCACHED, the
// size policy's MEMCACHED_*_SIZE, a proxy) is how a cluster admin configures
// the operator. OLM writes it into the Deployment of the CSV that the
// Subscription's status.installedCSV names, and the catalog operator names a
// new CSV there only after the olm operator has begun installing it. So an
// install or upgrade may first run a pod without the configuration, then
// roll the Deployment again with it (operator-lifecycle-manager #2100); and
// once an upgrade's CSV is named, OLM rolls the old CSV's Deployment once
// more, without it. Such a pod serves admission as soon as it is ready, and
// leads once the old pod is gone: left alone it would apply the default size
// policy, and roll every memcached Deployment to the CSV's image and back,
// emptying every cache twice. So the manager reads the Subscription at start
// and sets in its process what OLM's second rollout will set, before the
// options read the environment. Variables that come from a Secret or a
// ConfigMap cannot be read this way; the log names them.

// adoptSubscriptionConfig sets in this process the environment OLM gives
// the operator's pods only in its second rollout.
func adoptSubscriptionConfig(o options) error {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(operatorsv1alpha1.AddToScheme(scheme))
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := applySubscriptionEnv(ctx, c, o.podNamespace, o.olmCSV, osEnvironment{})
	if err != nil {
		return err
	}
	log := ctrl.Log.WithName("subscription-config")
	if len(r.set)+len(r.unset) > 0 {
		log.Info("took from the Subscription the environment OLM has not given this pod yet",
			"subscription", r.subscription, "set", r.set, "unset", r.unset)
	}
	if len(r.unresolved) > 0 {
		log.Info("the Subscription sets these from a Secret or ConfigMap: this pod runs without them until OLM rolls it",
			"subscription", r.subscription, "variables", r.unresolved)
	}
	return nil
}

// environment is a process environment.
type environment interface {
	LookupEnv(name string) (string, bool)
	Setenv(name, value string) error
	Unsetenv(name string) error
}

// osEnvironment is this process's environment.
type osEnvironment struct{}

func (osEnvironment) LookupEnv(name string) (string, bool) { return os.LookupEnv(name) }
func (osEnvironment) Setenv(name, value string) error      { return os.Setenv(name, value) }
func (osEnvironment) Unsetenv(name string) error           { return os.Unsetenv(name) }

// subscriptionEnv says what applySubscriptionEnv did, by variable name only:
// values can carry credentials.
type subscriptionEnv struct {
	// subscription is the Subscription found for the CSV; empty when none
	// names it (a CSV created by hand), and nothing changed.
	subscription string
	// set and unset are the variables that changed.
	set, unset []string
	// unresolved come from a Secret or a ConfigMap and are not in the
	// environment yet: the process runs without them until OLM's rollout.
	unresolved []string
}

// applySubscriptionEnv makes env what OLM's rollout with the config.env of
// csv's Subscription in namespace gives the manager container (see
// overlayEnv). reader is a direct client: this runs before the manager and
// its caches exist.
func applySubscriptionEnv(ctx context.Context, reader client.Reader, namespace, csv string, env environment) (subscriptionEnv, error) {
	var subs operatorsv1alpha1.SubscriptionList
	if err := reader.List(ctx, &subs, client.InNamespace(namespace)); err != nil {
		return subscriptionEnv{}, fmt.Errorf("listing Subscriptions in %s to find the configuration of %s: %w", namespace, csv, err)
	}
	sub := subscriptionFor(subs.Items, csv)
	if sub == nil {
		return subscriptionEnv{}, nil
	}
	r := subscriptionEnv{subscription: sub.Name}
	if sub.Spec == nil || sub.Spec.Config == nil {
		return r, nil
	}
	var err error
	r.set, r.unset, r.unresolved, err = overlayEnv(sub.Spec.Config.Env, env)
	return r, err
}

// subscriptionFor is the Subscription that installs csv: the one whose
// status names it as being installed or as installed, or else the one that
// installs another version of csv's package. OLM moves both names to the
// next CSV as soon as that CSV exists, and then rolls csv's Deployment
// again without config.env: the pod that rollout starts is still the
// Subscription's. CSV names are <package>.v<version>, as operator-sdk
// writes them.
func subscriptionFor(subs []operatorsv1alpha1.Subscription, csv string) *operatorsv1alpha1.Subscription {
	for i := range subs {
		if s := subs[i].Status; s.CurrentCSV == csv || s.InstalledCSV == csv {
			return &subs[i]
		}
	}
	pkg, _, ok := strings.Cut(csv, ".v")
	if !ok {
		return nil
	}
	for i := range subs {
		if s := subs[i].Status; strings.HasPrefix(s.CurrentCSV, pkg+".v") || strings.HasPrefix(s.InstalledCSV, pkg+".v") {
			return &subs[i]
		}
	}
	return nil
}

// proxyNames are the variables OLM takes from the cluster's Proxy, unless
// a Subscription sets any of them: then it injects none of them.
var proxyNames = []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"}

// overlayEnv sets in env what OLM sets in the manager container from vars, a
// Subscription's config.env: each variable with a literal value, the last
// of a name winning. When vars set a proxy variable, OLM injects none of
// the cluster's, so the proxy variables vars do not set are removed (the
// CSV sets none). A variable from a Secret or ConfigMap (valueFrom) that
// env lacks is returned as unresolved; one it has is left alone.
func overlayEnv(vars []corev1.EnvVar, env environment) (set, unset, unresolved []string, err error) {
	for i, v := range vars {
		if slices.ContainsFunc(vars[i+1:], func(later corev1.EnvVar) bool { return later.Name == v.Name }) {
			continue
		}
		got, ok := env.LookupEnv(v.Name)
		switch {
		case v.ValueFrom != nil:
			if !ok {
				unresolved = append(unresolved, v.Name)
			}
		case !ok || got != v.Value:
			if err := env.Setenv(v.Name, v.Value); err != nil {
				return set, unset, unresolved, fmt.Errorf("setting %s: %w", v.Name, err)
			}
			set = append(set, v.Name)
		}
	}
	setsProxy := slices.ContainsFunc(vars, func(v corev1.EnvVar) bool { return slices.Contains(proxyNames, v.Name) })
	if !setsProxy {
		return set, unset, unresolved, nil
	}
	for _, name := range proxyNames {
		if _, ok := env.LookupEnv(name); !ok || slices.ContainsFunc(vars, func(v corev1.EnvVar) bool { return v.Name == name }) {
			continue
		}
		if err := env.Unsetenv(name); err != nil {
			return set, unset, unresolved, fmt.Errorf("unsetting %s: %w", name, err)
		}
		unset = append(unset, name)
	}
	return set, unset, unresolved, nil
}
