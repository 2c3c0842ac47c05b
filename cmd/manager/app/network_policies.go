package app

import (
	"context"
	"fmt"
	"net"
	"strconv"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/example-inc/memcached-operator/controllers/ingresspolicy"
)

// keepsNetworkPolicies says whether the manager keeps the NetworkPolicies
// of its own pods (package ingresspolicy): when asked to and in a pod, as a
// process on a host has no pod to protect.
func (o options) keepsNetworkPolicies() bool {
	return o.networkPolicies && o.podNamespace != "" && o.podName != ""
}

// cacheNetworkPolicies adds to c what the NetworkPolicy keeper reads.
func (o options) cacheNetworkPolicies(c cache.Options) cache.Options {
	if !o.keepsNetworkPolicies() {
		return c
	}
	obj, by := ingresspolicy.Target{Namespace: o.podNamespace}.CacheByObject()
	c.ByObject[obj] = by
	return c
}

// setupNetworkPolicies starts the keeper of the manager pod's
// NetworkPolicies, on the ports the manager serves.
func setupNetworkPolicies(ctx context.Context, mgr manager.Manager, o options) error {
	log := ctrl.Log.WithName("setup")
	if !o.keepsNetworkPolicies() {
		log.Info("not keeping NetworkPolicies for the manager's pods", "networkPolicies", o.networkPolicies, "inPod", o.podName != "")
		return nil
	}
	t, err := ingresspolicy.FindManager(ctx, mgr.GetAPIReader(), o.podNamespace, o.podName)
	if err != nil {
		return fmt.Errorf("finding the manager's Deployment for its NetworkPolicies: %w", err)
	}
	if o.enableWebhooks {
		t.WebhookPort = int32(o.webhookPort)
	}
	if t.MetricsPort, err = listenPort(o.metricsAddr); err != nil {
		return fmt.Errorf("--metrics-bind-address=%q: %w", o.metricsAddr, err)
	}
	log.Info("keeping NetworkPolicies for the manager's pods", "namespace", t.Namespace, "podSelector", t.PodSelector,
		"webhookPort", t.WebhookPort, "metricsPort", t.MetricsPort)
	return (&ingresspolicy.Keeper{Client: mgr.GetClient(), Target: t}).SetupWithManager(mgr)
}

// listenPort is the port of a bind address as controller-runtime reads it:
// 0 for "0", which turns the server off.
func listenPort(addr string) (int32, error) {
	if addr == "0" || addr == "" {
		return 0, nil
	}
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return 0, err
	}
	return int32(n), nil
}
