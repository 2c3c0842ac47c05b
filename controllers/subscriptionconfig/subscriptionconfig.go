package subscriptionconfig

import (
	"context"
	"fmt"
	"os"
	"slices"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Env is a process environment.
type Env interface {
	LookupEnv(name string) (string, bool)
	Setenv(name, value string) error
	Unsetenv(name string) error
}

// OSEnv is this process's environment.
type OSEnv struct{}

func (OSEnv) LookupEnv(name string) (string, bool) { return os.LookupEnv(name) }
func (OSEnv) Setenv(name, value string) error      { return os.Setenv(name, value) }
func (OSEnv) Unsetenv(name string) error           { return os.Unsetenv(name) }

// Options say which CSV the process belongs to and where its Subscription is.
type Options struct {
	// Reader lists Subscriptions: a direct client, as Apply runs before
	// the manager and its caches exist.
	Reader client.Reader
	// Namespace is the operator's namespace, which holds its Subscription.
	Namespace string
	// CSV is the ClusterServiceVersion that made this pod's Deployment
	// (OLM's OPERATOR_CONDITION_NAME).
	CSV string
	Env Env
}

// Result says what Apply did, by variable name only: values can carry
// credentials.
type Result struct {
	// Subscription is the Subscription found for the CSV; empty when none
	// names it (a CSV created by hand), and Apply changed nothing.
	Subscription string
	// Set and Unset are the variables Apply changed.
	Set, Unset []string
	// Unresolved come from a Secret or a ConfigMap and are not in the
	// environment yet: the process runs without them until OLM's rollout.
	Unresolved []string
}

// Apply makes the process environment what OLM's rollout with the
// Subscription's config.env gives the manager container. See Overlay.
func Apply(ctx context.Context, o Options) (Result, error) {
	var subs operatorsv1alpha1.SubscriptionList
	if err := o.Reader.List(ctx, &subs, client.InNamespace(o.Namespace)); err != nil {
		return Result{}, fmt.Errorf("listing Subscriptions in %s to find the configuration of %s: %w", o.Namespace, o.CSV, err)
	}
	sub := subscriptionFor(subs.Items, o.CSV)
	if sub == nil {
		return Result{}, nil
	}
	r := Result{Subscription: sub.Name}
	if sub.Spec == nil || sub.Spec.Config == nil {
		return r, nil
	}
	var err error
	r.Set, r.Unset, r.Unresolved, err = Overlay(sub.Spec.Config.Env, o.Env)
	return r, err
}

// subscriptionFor is the Subscription that installs csv: the one whose
// status names it as being installed or as installed.
func subscriptionFor(subs []operatorsv1alpha1.Subscription, csv string) *operatorsv1alpha1.Subscription {
	for i := range subs {
		if s := subs[i].Status; s.CurrentCSV == csv || s.InstalledCSV == csv {
			return &subs[i]
		}
	}
	return nil
}

// proxyNames are the variables OLM takes from the cluster's Proxy, unless
// a Subscription sets any of them: then it injects none of them.
var proxyNames = []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"}

// Overlay sets in env what OLM sets in the manager container from vars, a
// Subscription's config.env: each variable with a literal value, the last
// of a name winning. When vars set a proxy variable, OLM injects none of
// the cluster's, so the proxy variables vars do not set are removed (the
// CSV sets none). A variable from a Secret or ConfigMap (valueFrom) that
// env lacks is returned as unresolved; one it has is left alone.
func Overlay(vars []corev1.EnvVar, env Env) (set, unset, unresolved []string, err error) {
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
