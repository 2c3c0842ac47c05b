package controllers

import (
	"context"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/controllers/monitoring"
)

// PrometheusOperatorServed reports whether the API server serves the
// Prometheus Operator's PodMonitor and PrometheusRule. Where it does not,
// a monitored Memcached gets its exporter and nothing else, and no error.
func PrometheusOperatorServed(dc discovery.DiscoveryInterface) (bool, error) {
	return servesResources(dc, monitoringv1.SchemeGroupVersion, monitoringv1.PodMonitorName, monitoringv1.PrometheusRuleName)
}

// desiredMonitoring are the PodMonitor and PrometheusRule of mc, named after
// it, beside the empty objects their live state is read into.
func desiredMonitoring(mc *cachev1.Memcached) []optionalObject {
	meta := func(kind string, spec any) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: mc.Name, Namespace: mc.Namespace, Labels: objectLabels(mc),
			Annotations:     desiredHash(map[string]any{"kind": kind, "spec": spec}),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(mc, cachev1.GroupVersion.WithKind("Memcached"))}}
	}
	pmSpec := monitoring.PodMonitorSpec(mc.Name, selectorLabels(mc))
	pm := &monitoringv1.PodMonitor{
		TypeMeta:   metav1.TypeMeta{APIVersion: monitoringv1.SchemeGroupVersion.String(), Kind: monitoringv1.PodMonitorsKind},
		ObjectMeta: meta(monitoringv1.PodMonitorsKind, pmSpec), Spec: pmSpec}
	livePM := &monitoringv1.PodMonitor{}
	ruleSpec := monitoring.Rules(mc.Namespace, mc.Name)
	rule := &monitoringv1.PrometheusRule{
		TypeMeta:   metav1.TypeMeta{APIVersion: monitoringv1.SchemeGroupVersion.String(), Kind: monitoringv1.PrometheusRuleKind},
		ObjectMeta: meta(monitoringv1.PrometheusRuleKind, ruleSpec), Spec: ruleSpec}
	liveRule := &monitoringv1.PrometheusRule{}
	return []optionalObject{
		{kind: monitoringv1.PodMonitorsKind, live: livePM, want: pm,
			same: func() bool { return sameMeta(livePM, pm) && equality.Semantic.DeepEqual(livePM.Spec, pm.Spec) }},
		{kind: monitoringv1.PrometheusRuleKind, live: liveRule, want: rule,
			same: func() bool { return sameMeta(liveRule, rule) && equality.Semantic.DeepEqual(liveRule.Spec, rule.Spec) }},
	}
}

// reconcileMonitoring applies mc's PodMonitor and PrometheusRule where they
// differ from the desired ones, or deletes them when monitoring is off.
// The whole spec is the operator's: a spec compared field by field with the
// desired one is what a hand edit changes, and the CRDs' only default
// (a relabeling's action) is set explicitly.
func (r *MemcachedReconciler) reconcileMonitoring(ctx context.Context, mc *cachev1.Memcached, objs []optionalObject) error {
	for _, o := range objs {
		if err := r.reconcileOptional(ctx, mc, o, mc.Spec.Monitoring.IsEnabled(), "monitoring is off"); err != nil {
			return err
		}
	}
	return nil
}
