package controllers

import (
	"context"
	"encoding/json"
	"fmt"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/controllers/monitoring"
)

// PrometheusOperatorServed reports whether the API server serves the
// Prometheus Operator's PodMonitor and PrometheusRule. Where it does not,
// a monitored Memcached gets its exporter and nothing else, and no error.
func PrometheusOperatorServed(dc discovery.DiscoveryInterface) (bool, error) {
	list, err := dc.ServerResourcesForGroupVersion(monitoringv1.SchemeGroupVersion.String())
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("discovering %s: %w", monitoringv1.SchemeGroupVersion, err)
	}
	served := map[string]bool{}
	for _, r := range list.APIResources {
		served[r.Name] = true
	}
	return served[monitoringv1.PodMonitorName] && served[monitoringv1.PrometheusRuleName], nil
}

// monitoringObject is a PodMonitor or PrometheusRule as the operator wants
// it, and how to tell whether a live one is that.
type monitoringObject struct {
	kind string
	live client.Object
	// want is the object to apply.
	want client.Object
	// same reports whether live, which exists and is mc's, has want's
	// spec, labels and hash.
	same func() bool
}

// desiredMonitoring are the PodMonitor and PrometheusRule of mc, named after
// it, beside the empty objects their live state is read into.
func desiredMonitoring(mc *cachev1.Memcached) []monitoringObject {
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
	return []monitoringObject{
		{kind: monitoringv1.PodMonitorsKind, live: livePM, want: pm,
			same: func() bool { return sameMeta(livePM, pm) && equality.Semantic.DeepEqual(livePM.Spec, pm.Spec) }},
		{kind: monitoringv1.PrometheusRuleKind, live: liveRule, want: rule,
			same: func() bool { return sameMeta(liveRule, rule) && equality.Semantic.DeepEqual(liveRule.Spec, rule.Spec) }},
	}
}

// sameMeta reports whether live carries want's labels and hash; others'
// labels and annotations may stand beside them.
func sameMeta(live, want client.Object) bool {
	for k, v := range want.GetLabels() {
		if live.GetLabels()[k] != v {
			return false
		}
	}
	return live.GetAnnotations()[desiredHashAnnotation] == want.GetAnnotations()[desiredHashAnnotation]
}

// reconcileMonitoring applies mc's PodMonitor and PrometheusRule where they
// differ from the desired ones, or deletes them when monitoring is off. With
// monitoring on, its objects have been read (and found to be mc's or absent)
// with the others; with it off, only objects mc controls are deleted.
// The whole spec is the operator's: a spec compared field by field with the
// desired one is what a hand edit changes, and the CRDs' only default
// (a relabeling's action) is set explicitly.
func (r *MemcachedReconciler) reconcileMonitoring(ctx context.Context, mc *cachev1.Memcached, objs []monitoringObject) error {
	for _, o := range objs {
		if !mc.Spec.Monitoring.IsEnabled() {
			err := r.client.Get(ctx, client.ObjectKeyFromObject(mc), o.live)
			if apierrors.IsNotFound(err) || (err == nil && !metav1.IsControlledBy(o.live, mc)) {
				continue
			}
			if err == nil {
				err = r.deleteOwned(ctx, o.kind, o.live, "monitoring is off")
			}
			if err != nil {
				return err
			}
			continue
		}
		if o.live.GetUID() != "" && o.same() {
			continue
		}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o.want)
		if err != nil {
			return err
		}
		// Status is the Prometheus Operator's to write.
		delete(obj, "status")
		data, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		patched := o.live.DeepCopyObject().(client.Object)
		patched.SetName(mc.Name)
		patched.SetNamespace(mc.Namespace)
		if err := r.client.Patch(ctx, patched, client.RawPatch(types.ApplyPatchType, data),
			client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s: %w", o.kind, err)
		}
		r.reportApply(ctx, mc, applyTarget{kind: o.kind, annotations: o.want.GetAnnotations(), live: o.live})
	}
	return nil
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
